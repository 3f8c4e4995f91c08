"""Text bar charts for the terminal, as pure functions of numbers and widths.

Kept free of Textual and rich so the TUI's chart widgets and the headless CLI draw the same bars and
tests check the drawing without a terminal. Acceptance is drawn on an ABSOLUTE 0-100% scale on
purpose: an auto-scaled chart makes 0.90 and 0.95 look like empty and full.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

# Eighth blocks: index k draws k/8 of a cell.
_EIGHTHS = " ▏▎▍▌▋▊▉█"
FULL = "█"


def hbar(fraction: float | None, width: int) -> str:
    """A left-aligned bar `width` cells wide filled to `fraction` (clamped to 0..1), eighth-cell precise.

    The result is always exactly `width` characters so rows line up; None or NaN draws an empty bar.
    """
    if width <= 0:
        return ""
    if fraction is None or math.isnan(fraction):
        return " " * width
    fraction = min(1.0, max(0.0, fraction))
    eighths = round(fraction * width * 8)
    full, rest = divmod(eighths, 8)
    bar = FULL * full + (_EIGHTHS[rest] if rest else "")
    return bar.ljust(width)[:width]


@dataclass(frozen=True)
class BarRow:
    """One chart row, split so a renderer can colour the label, the bar and the value separately."""

    label: str
    bar: str
    value: str
    fraction: float | None = None  # the filled share of the bar, 0..1 (for colour choices)
    secondary: str = ""  # e.g. the predicted value shown beside a measured one

    def text(self) -> str:
        tail = f" {self.secondary}" if self.secondary else ""
        return f"{self.label} {self.bar} {self.value}{tail}".rstrip()


def percent(fraction: float | None) -> str:
    return "   -  " if fraction is None else f"{fraction * 100:5.1f}%"


def acceptance_rows(rates: Sequence[float | None], width: int) -> list[BarRow]:
    """Per-position acceptance rows ("pos 1 ████▌ 92.3%") on a 0-100% scale fitting `width` cells."""
    if not rates:
        return []
    label_width = len(f"pos {len(rates)}")
    bar_width = max(1, width - label_width - len(" ") - len(" 100.0%"))
    rows = []
    for i, rate in enumerate(rates):
        rows.append(
            BarRow(
                label=f"pos {i + 1}".ljust(label_width),
                bar=hbar(rate, bar_width),
                value=percent(rate),
                fraction=rate,
            )
        )
    return rows


def scale_axis(width: int, label_width: int) -> str:
    """The 0% / 50% / 100% ruler under acceptance bars, aligned with the bar column."""
    bar_width = max(1, width - label_width - len(" ") - len(" 100.0%"))
    ruler = [" "] * bar_width

    def put(text: str, start: int) -> None:
        for j, ch in enumerate(text):
            if 0 <= start + j < bar_width:
                ruler[start + j] = ch

    put("0%", 0)
    put("50%", bar_width // 2 - 1)
    put("100%", bar_width - 4)
    return " " * (label_width + 1) + "".join(ruler)


@dataclass(frozen=True)
class ThroughputPoint:
    """A measured (or still pending) arm for the throughput-vs-N chart."""

    label: str  # "baseline", "ngram N=4"
    measured: float | None
    predicted: float | None = None
    ci: tuple[float, float] | None = None


def throughput_rows(points: Sequence[ThroughputPoint], width: int) -> list[BarRow]:
    """Bars of output tokens/s from zero to the largest value shown, predicted value beside measured.

    The scale starts at zero (never at the minimum) so bar lengths compare honestly; a pending arm
    draws an empty bar with its prediction so the user sees what is expected before it is measured.
    """
    if not points:
        return []
    label_width = max(len(p.label) for p in points)
    top = max([v for p in points for v in (p.measured, p.predicted) if v is not None] or [0.0])
    value_width = len(" 00000.0 tok/s")
    has_prediction = any(p.predicted is not None for p in points)
    secondary_width = len(" pred 00000.0") if has_prediction else 0
    bar_width = max(1, width - label_width - 1 - value_width - secondary_width)
    rows = []
    for p in points:
        fraction = (p.measured / top) if (p.measured is not None and top > 0) else None
        value = f"{p.measured:7.1f} tok/s" if p.measured is not None else "      - tok/s"
        secondary = f"pred {p.predicted:7.1f}" if p.predicted is not None else ""
        rows.append(
            BarRow(
                label=p.label.ljust(label_width),
                bar=hbar(fraction, bar_width),
                value=value,
                fraction=fraction,
                secondary=secondary,
            )
        )
    return rows


def render(rows: Sequence[BarRow]) -> str:
    """Plain-text chart, one row per line (what the headless CLI prints)."""
    return "\n".join(row.text() for row in rows)


def acceptance_chart(rates: Sequence[float | None], width: int = 60) -> str:
    """The per-position acceptance chart with its 0-100% ruler, as plain text."""
    rows = acceptance_rows(rates, width)
    if not rows:
        return "no speculative positions measured yet"
    return render(rows) + "\n" + scale_axis(width, len(rows[0].label))


SPARKS = "▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[float], width: int) -> str:
    """The last `width` values as block characters scaled between their minimum and maximum, so a
    ramp-up or a dip shows; a series steady within 2% reads as a flat middle line, not as noise."""
    tail = [v for v in values if v is not None][-width:] if width > 0 else []
    if not tail:
        return ""
    lo, hi = min(tail), max(tail)
    if hi <= 0 or hi - lo <= 0.02 * hi:
        return SPARKS[3] * len(tail)
    top = len(SPARKS) - 1
    return "".join(SPARKS[int((v - lo) / (hi - lo) * top + 0.5)] for v in tail)
