"""Inline SVG charts for the HTML report: pure functions from numbers to markup (no JS, no CSS files).

Acceptance is drawn on an absolute 0-100% axis: rescaling min..max makes 90% look like 0%.
"""

from __future__ import annotations

import math
from html import escape

PALETTE = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2"]
W, H, PAD = 560, 300, 48


def throughput_chart(series: list[dict], baseline: float | None) -> str:
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
    for n in range(0, x_max + 1):
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
        parts.append(f'<text x="{PAD + 8}" y="{PAD + 14 * (i + 1)}" font-size="11" fill="{color}">● {escape(s["label"])} (dots measured, dashes predicted)</text>')
    return _svg(parts)


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
        parts.append(f'<rect x="{x:.1f}" y="{py(r):.1f}" width="{width * 0.7:.1f}" height="{(H - PAD) - py(r):.1f}" fill="{PALETTE[0]}"><title>position {i + 1}: {r:.1%}</title></rect>')
        parts.append(f'<text x="{x + width * 0.35:.1f}" y="{py(r) - 4:.1f}" font-size="11" text-anchor="middle">{r:.0%}</text>')
        parts.append(f'<text x="{x + width * 0.35:.1f}" y="{H - PAD + 16}" font-size="11" text-anchor="middle">{i + 1}</text>')
    return _svg(parts)


def nice_step(raw: float) -> float:
    """The smallest 1, 2, 2.5 or 5 x 10^k at least `raw`: axis ticks people can read."""
    if raw <= 0:
        return 1.0
    magnitude = 10 ** math.floor(math.log10(raw))
    return next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)


def _svg(parts: list[str]) -> str:
    body = "\n".join(parts)
    return f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img">\n{body}\n</svg>'


def _frame(title: str, x_label: str, y_label: str) -> str:
    return (
        f'<rect x="0" y="0" width="{W}" height="{H}" fill="white"/>'
        f'<text x="{W / 2}" y="18" font-size="13" text-anchor="middle" font-weight="bold">{escape(title)}</text>'
        f'<line x1="{PAD}" y1="{H - PAD}" x2="{W - PAD}" y2="{H - PAD}" stroke="black"/>'
        f'<line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{H - PAD}" stroke="black"/>'
        f'<text x="{W / 2}" y="{H - 10}" font-size="11" text-anchor="middle">{escape(x_label)}</text>'
        f'<text x="12" y="{H / 2}" font-size="11" text-anchor="middle" transform="rotate(-90 12 {H / 2})">{escape(y_label)}</text>'
    )


def _y_ticks(top: float, py, fmt: str) -> list[str]:
    out = []
    for k in range(5):
        v = top * k / 4
        out.append(f'<line x1="{PAD - 4}" x2="{W - PAD}" y1="{py(v):.1f}" y2="{py(v):.1f}" stroke="#e5e7eb"/>')
        out.append(f'<text x="{PAD - 6}" y="{py(v) + 4:.1f}" font-size="10" text-anchor="end">{fmt.format(v)}</text>')
    return out
