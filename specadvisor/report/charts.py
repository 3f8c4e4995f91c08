"""Inline SVG charts for the HTML report: pure functions from numbers to markup (no JS, no CSS files).

Acceptance is drawn on an absolute 0-100% axis: rescaling min..max makes 90% look like 0%.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TypedDict

from specadvisor.domain import GpuReading
from specadvisor.textsafe import html as escape  # one line, control and invisible characters visible, escaped

PALETTE = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2"]
W, H, PAD = 560, 300, 48
Scale = Callable[[float], float]  # a value to its pixel position on one axis


class ThroughputSeries(TypedDict):
    """One method family at the chart's concurrency: output tok/s by N."""

    label: str
    measured: dict[int, float]
    predicted: dict[int, float]


class ParetoSeries(TypedDict):
    """One configuration across its concurrencies."""

    label: str
    points: list[tuple[float, float, int]]  # (total tok/s, tok/s per user, concurrency)


class GoodputSeries(TypedDict):
    """One arm of a capacity sweep."""

    label: str
    points: list[tuple[float, float | None, bool]]  # (offered req/s, p99 ms, meets the target)
    goodput: float | None  # req/s


class LatencyQuantiles(TypedDict):
    """One arm's latency distribution, in ms."""

    median: float | None
    p90: float | None
    p99: float


def throughput_chart(series: Sequence[ThroughputSeries], baseline: float | None) -> str:
    """series: [{"label", "measured": {N: tok/s}, "predicted": {N: tok/s}}]; baseline: tok/s or None."""
    xs = [n for s in series for n in (*s["measured"], *s["predicted"])]
    ys = [v for s in series for v in (*s["measured"].values(), *s["predicted"].values())] + ([baseline] if baseline else [])
    if not xs or not ys:
        return ""
    x_max = max(xs)
    step = nice_step(max(ys) * 1.1 / 4)
    y_max = step * 4

    def px(n: float) -> float:
        return PAD + (W - 2 * PAD) * (n / x_max if x_max else 0)

    def py(v: float) -> float:
        return H - PAD - (H - 2 * PAD) * (v / y_max)

    parts = [_frame("output tokens/s vs N (num_speculative_tokens)", "N", "tok/s")]
    parts += _y_ticks(y_max, py, fmt="{:g}")
    for n in range(x_max + 1):
        parts.append(f'<text x="{px(n):.1f}" y="{H - PAD + 16}" font-size="11" text-anchor="middle">{n}</text>')
    if baseline:
        parts.append(f'<line x1="{PAD}" x2="{W - PAD}" y1="{py(baseline):.1f}" y2="{py(baseline):.1f}" stroke="#6b7280" stroke-dasharray="6 4"/>')
        parts.append(f'<text x="{W - PAD}" y="{py(baseline) - 4:.1f}" font-size="11" text-anchor="end" fill="#6b7280">no speculation {baseline:.1f}</text>')
    for i, s in enumerate(series):
        color = PALETTE[i % len(PALETTE)]
        pred = sorted(s["predicted"].items())
        if len(pred) > 1:
            points = " ".join(f"{px(n):.1f},{py(v):.1f}" for n, v in pred)
            parts.append(f'<polyline points="{points}" fill="none" stroke="{color}" stroke-dasharray="4 3" stroke-width="1.5"/>')
        for n, v in sorted(s["measured"].items()):
            parts.append(f'<circle cx="{px(n):.1f}" cy="{py(v):.1f}" r="4" fill="{color}"><title>{escape(s["label"])} N={n}: {v:.1f} tok/s</title></circle>')
        parts.append(
            f'<text x="{PAD + 8}" y="{PAD + 14 * (i + 1)}" font-size="11" fill="{color}">● {escape(s["label"])} (dots measured, dashes predicted)</text>'
        )
    return _svg(parts, kind="throughput")


def acceptance_chart(label: str, rates: list[float]) -> str:
    """Per-position acceptance bars on an absolute 0-100% scale."""
    if not rates:
        return ""
    width = (W - 2 * PAD) / len(rates)

    def py(v: float) -> float:
        return H - PAD - (H - 2 * PAD) * v

    parts = [_frame(f"per-position acceptance: {label}", "draft position", "accepted")]
    parts += _y_ticks(1.0, py, fmt="{:.0%}")
    for i, r in enumerate(rates):
        x = PAD + i * width + width * 0.15
        parts.append(
            f'<rect x="{x:.1f}" y="{py(r):.1f}" width="{width * 0.7:.1f}" height="{(H - PAD) - py(r):.1f}" fill="{PALETTE[0]}"><title>position {i + 1}: {r:.1%}</title></rect>'
        )
        parts.append(f'<text x="{x + width * 0.35:.1f}" y="{py(r) - 4:.1f}" font-size="11" text-anchor="middle">{r:.0%}</text>')
        parts.append(f'<text x="{x + width * 0.35:.1f}" y="{H - PAD + 16}" font-size="11" text-anchor="middle">{i + 1}</text>')
    return _svg(parts, kind="acceptance")


def pareto_chart(series: Sequence[ParetoSeries]) -> str:
    """Tokens/s per user against total tokens/s, one line per configuration across its concurrencies.

    series: [{"label", "points": [(total tok/s, tok/s per user, concurrency)]}]. Up and to the right
    is better; a line that bends left is a configuration whose per-user speed costs total throughput."""
    pts = [(x, y) for s in series for x, y, _ in s["points"]]
    if not pts:
        return ""
    x_step = nice_step(max(x for x, _ in pts) * 1.1 / 4)
    y_step = nice_step(max(y for _, y in pts) * 1.1 / 4)
    x_max, y_max = x_step * 4, y_step * 4

    def px(v: float) -> float:
        return PAD + (W - 2 * PAD) * (v / x_max)

    def py(v: float) -> float:
        return H - PAD - (H - 2 * PAD) * (v / y_max)

    parts = [_frame("Pareto: tokens/s per user vs total tokens/s", "total output tokens/s", "tokens/s per user")]
    parts += _y_ticks(y_max, py, fmt="{:g}")
    parts += _x_ticks(x_max, px)
    for i, s in enumerate(series):
        color = PALETTE[i % len(PALETTE)]
        ordered = sorted(s["points"], key=lambda p: p[2])
        if len(ordered) > 1:
            line = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y, _ in ordered)
            parts.append(f'<polyline points="{line}" fill="none" stroke="{color}" stroke-width="1.5"/>')
        for x, y, c in ordered:
            parts.append(
                f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="4" fill="{color}"><title>{escape(s["label"])} c={c}: {x:.1f} tok/s total, {y:.1f} per user</title></circle>'
            )
            parts.append(f'<text x="{px(x) + 6:.1f}" y="{py(y) - 6:.1f}" font-size="10" fill="{color}">c{c}</text>')
        parts.append(f'<text x="{W - PAD - 4}" y="{PAD + 14 * (i + 1)}" font-size="11" text-anchor="end" fill="{color}">● {escape(s["label"])}</text>')
    return _svg(parts, kind="pareto")


def latency_chart(metric: str, rows: list[tuple[str, LatencyQuantiles]]) -> str:
    """Per arm, the latency distribution as a p50-p90-p99 range (bar from p50 to p99, tick at p90).

    rows: [(arm label, {"median": ms, "p90": ms, "p99": ms})], one row per arm."""
    rows = [(label, q) for label, q in rows if q.get("p99") is not None]
    if not rows:
        return ""
    top = max(q["p99"] for _, q in rows)
    step = nice_step(top * 1.1 / 4)
    x_max = step * 4
    left = 150
    height = max(H, PAD * 2 + 22 * len(rows))
    band = (height - 2 * PAD) / len(rows)

    def px(v: float) -> float:
        return left + (W - left - PAD) * (v / x_max)

    parts = [
        f'<rect x="0" y="0" width="{W}" height="{height}" fill="white"/>',
        f'<text x="{W / 2}" y="18" font-size="13" text-anchor="middle" font-weight="bold">{escape(metric)} distribution per arm (p50, p90, p99)</text>',
        f'<line x1="{left}" y1="{height - PAD}" x2="{W - PAD}" y2="{height - PAD}" stroke="black"/>',
        f'<text x="{(left + W - PAD) / 2}" y="{height - 10}" font-size="11" text-anchor="middle">{escape(metric)} (ms)</text>',
    ]
    for k in range(5):
        v = x_max * k / 4
        parts.append(f'<line x1="{px(v):.1f}" x2="{px(v):.1f}" y1="{PAD}" y2="{height - PAD}" stroke="#e5e7eb"/>')
        parts.append(f'<text x="{px(v):.1f}" y="{height - PAD + 14}" font-size="10" text-anchor="middle">{v:g}</text>')
    for i, (label, q) in enumerate(rows):
        y = PAD + band * i + band / 2
        color = PALETTE[i % len(PALETTE)]
        p50 = q.get("median") or q["p99"]
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end">{escape(label)}</text>')
        parts.append(
            f'<rect x="{px(p50):.1f}" y="{y - 6:.1f}" width="{max(1.0, px(q["p99"]) - px(p50)):.1f}" height="12" fill="{color}" fill-opacity="0.35" stroke="{color}">'
            f"<title>{escape(label)}: p50 {p50:.1f} ms, p90 {q.get('p90') or 0:.1f} ms, p99 {q['p99']:.1f} ms</title></rect>"
        )
        parts.append(f'<line x1="{px(p50):.1f}" x2="{px(p50):.1f}" y1="{y - 8:.1f}" y2="{y + 8:.1f}" stroke="{color}" stroke-width="3"/>')
        if (p90 := q["p90"]) is not None:
            parts.append(f'<line x1="{px(p90):.1f}" x2="{px(p90):.1f}" y1="{y - 6:.1f}" y2="{y + 6:.1f}" stroke="black"/>')
    return _svg(parts, kind=f"latency-{metric.lower()}", height=height)


def goodput_chart(slo_ms: float | None, metric: str, series: Sequence[GoodputSeries]) -> str:
    """p99 latency against the offered request rate, one line per arm, the target as a dashed line.

    series: [{"label", "points": [(rate req/s, p99 ms, met)], "goodput": req/s or None}]."""
    pts = [(r, v) for s in series for r, v, _ in s["points"] if v is not None]
    if not pts:
        return ""
    x_step = nice_step(max(r for r, _ in pts) * 1.1 / 4)
    y_top = max([v for _, v in pts] + ([slo_ms] if slo_ms else []))
    y_step = nice_step(y_top * 1.1 / 4)
    x_max, y_max = x_step * 4, y_step * 4

    def px(v: float) -> float:
        return PAD + (W - 2 * PAD) * (v / x_max)

    def py(v: float) -> float:
        return H - PAD - (H - 2 * PAD) * (min(v, y_max) / y_max)

    parts = [_frame(f"goodput: p99 {metric} vs request rate", "offered request rate (req/s, Poisson)", f"p99 {metric} (ms)")]
    parts += _y_ticks(y_max, py, fmt="{:g}")
    parts += _x_ticks(x_max, px)
    if slo_ms:
        parts.append(f'<line x1="{PAD}" x2="{W - PAD}" y1="{py(slo_ms):.1f}" y2="{py(slo_ms):.1f}" stroke="#dc2626" stroke-dasharray="6 4"/>')
        parts.append(f'<text x="{W - PAD}" y="{py(slo_ms) - 4:.1f}" font-size="11" text-anchor="end" fill="#dc2626">target {slo_ms:g} ms</text>')
    for i, s in enumerate(series):
        color = PALETTE[i % len(PALETTE)]
        ordered = sorted(((r, v, met) for r, v, met in s["points"] if v is not None), key=lambda p: p[0])
        if len(ordered) > 1:
            line = " ".join(f"{px(r):.1f},{py(v):.1f}" for r, v, _ in ordered)
            parts.append(f'<polyline points="{line}" fill="none" stroke="{color}" stroke-width="1.5"/>')
        for r, v, met in ordered:
            fill = color if met else "white"
            parts.append(
                f'<circle cx="{px(r):.1f}" cy="{py(v):.1f}" r="4" fill="{fill}" stroke="{color}"><title>{escape(s["label"])}: {r:.2f} req/s, p99 {v:.0f} ms ({"meets" if met else "breaks"} the target)</title></circle>'
            )
        good = f"goodput {s['goodput']:.2f} req/s" if s.get("goodput") else "no rate met the target"
        parts.append(f'<text x="{PAD + 8}" y="{PAD + 14 * (i + 1)}" font-size="11" fill="{color}">● {escape(s["label"])}: {good}</text>')
    return _svg(parts, kind="goodput")


def nice_step(raw: float) -> float:
    """The smallest 1, 2, 2.5 or 5 x 10^k at least `raw`: axis ticks people can read."""
    if raw <= 0:
        return 1.0
    magnitude: float = 10 ** math.floor(math.log10(raw))
    return next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)


def _svg(parts: list[str], kind: str = "", height: int = H) -> str:
    body = "\n".join(parts)
    data = f' data-chart="{kind}"' if kind else ""
    return f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {height}" width="{W}" height="{height}" role="img"{data}>\n{body}\n</svg>'


def _x_ticks(right: float, px: Scale) -> list[str]:
    out = []
    for k in range(5):
        v = right * k / 4
        out.append(f'<text x="{px(v):.1f}" y="{H - PAD + 16}" font-size="10" text-anchor="middle">{v:g}</text>')
    return out


def _frame(title: str, x_label: str, y_label: str) -> str:
    return (
        f'<rect x="0" y="0" width="{W}" height="{H}" fill="white"/>'
        f'<text x="{W / 2}" y="18" font-size="13" text-anchor="middle" font-weight="bold">{escape(title)}</text>'
        f'<line x1="{PAD}" y1="{H - PAD}" x2="{W - PAD}" y2="{H - PAD}" stroke="black"/>'
        f'<line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{H - PAD}" stroke="black"/>'
        f'<text x="{W / 2}" y="{H - 10}" font-size="11" text-anchor="middle">{escape(x_label)}</text>'
        f'<text x="12" y="{H / 2}" font-size="11" text-anchor="middle" transform="rotate(-90 12 {H / 2})">{escape(y_label)}</text>'
    )


def _y_ticks(top: float, py: Scale, fmt: str) -> list[str]:
    out = []
    for k in range(5):
        v = top * k / 4
        out.append(f'<line x1="{PAD - 4}" x2="{W - PAD}" y1="{py(v):.1f}" y2="{py(v):.1f}" stroke="#e5e7eb"/>')
        out.append(f'<text x="{PAD - 6}" y="{py(v) + 4:.1f}" font-size="10" text-anchor="end">{fmt.format(v)}</text>')
    return out


def telemetry_chart(label: str, samples: Sequence[GpuReading]) -> str:
    """Board power (solid, left axis) and SM clock (dashed, right axis) over the arm, one colour per GPU."""
    points = [s for s in samples if s.power_w is not None or s.sm_clock_mhz is not None]
    if len(points) < 2:
        return ""
    t_max = max(s.t for s in points) or 1.0
    p_top = nice_step(max((s.power_w or 0) for s in points) * 1.1 / 4) * 4
    c_top = nice_step(max((s.sm_clock_mhz or 0) for s in points) * 1.1 / 4) * 4

    def px(t: float) -> float:
        return PAD + (W - 2 * PAD) * t / t_max

    def pp(v: float) -> float:
        return H - PAD - (H - 2 * PAD) * v / p_top

    def pc(v: float) -> float:
        return H - PAD - (H - 2 * PAD) * v / c_top

    parts = [_frame(f"GPU power and SM clock: {label}", "seconds into the arm", "board power (W)")]
    parts += _y_ticks(p_top, pp, fmt="{:g}")
    for k in range(5):
        v = c_top * k / 4
        parts.append(f'<text x="{W - PAD + 4}" y="{pc(v) + 4:.1f}" font-size="10">{v:g}</text>')
    parts.append(f'<text x="{W - 8}" y="{H / 2}" font-size="11" text-anchor="middle" transform="rotate(90 {W - 8} {H / 2})">SM clock (MHz, dashed)</text>')
    for i, gpu in enumerate(sorted({s.gpu for s in points})):
        color = PALETTE[i % len(PALETTE)]
        mine = sorted((s for s in points if s.gpu == gpu), key=lambda s: s.t)
        power = " ".join(f"{px(s.t):.1f},{pp(s.power_w):.1f}" for s in mine if s.power_w is not None)
        clock = " ".join(f"{px(s.t):.1f},{pc(s.sm_clock_mhz):.1f}" for s in mine if s.sm_clock_mhz is not None)
        if power:
            parts.append(f'<polyline points="{power}" fill="none" stroke="{color}" stroke-width="1.5"><title>GPU {gpu} power</title></polyline>')
        if clock:
            parts.append(
                f'<polyline points="{clock}" fill="none" stroke="{color}" stroke-dasharray="4 3" stroke-width="1.2"><title>GPU {gpu} SM clock</title></polyline>'
            )
        parts.append(f'<text x="{PAD + 8}" y="{PAD + 14 * (i + 1)}" font-size="11" fill="{color}">GPU {gpu}</text>')
    for k in range(5):
        t = t_max * k / 4
        parts.append(f'<text x="{px(t):.1f}" y="{H - PAD + 16}" font-size="11" text-anchor="middle">{t:.0f}</text>')
    return _svg(parts)
