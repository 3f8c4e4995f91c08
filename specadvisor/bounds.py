"""What a bound is (`Bound`), and the limits that are not sweep settings.

The sweep's measurement settings declare their bounds once, on `domain.SweepSettings`
(`specadvisor.setting_specs` reads them as `Bound`s); this leaf holds the limits of other flags
(`--n`, `--params-b`, `--timeout`) and of the measured figures a bundle may carry. The bounds are
generous (far beyond a real sweep) but finite, so NaN, infinities, zero rates and integers SQLite
cannot hold stay out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MAX_N = 64  # num_speculative_tokens: vLLM's drafters go to ~16; 64 leaves room, 10^20 does not
MAX_CONCURRENCY_LEVELS = 64  # the predictor and recommender work per level: levels x arms stays bounded
MAX_INT64 = 2**63 - 1  # SQLite's INTEGER (domain.MAX_INT64 is the same: a leaf imports no layer)

# Measured figures a session may hold (import refuses others; views, the predictor and the charts
# can then compute with them without overflowing): far beyond any real server, still finite.
MAX_TOKENS_PER_S = 1e9  # output tok/s (and req/s)
MAX_LATENCY_MS = 1e10  # about 115 days
MAX_DURATION_S = 1e8
MAX_FIGURE = 1e15  # any other number in a bundle (counters sampled from /metrics, telemetry, seconds)


@dataclass(frozen=True)
class Bound:
    """A setting's range: [low, high], open at an end with low_open/high_open; integers only when whole."""

    flag: str
    low: float
    high: float
    whole: bool = False
    low_open: bool = False
    high_open: bool = False

    def problem(self, value: object) -> str | None:
        """Why `value` is outside the bound (None when it is a valid value). Booleans are never numbers."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"is {_short(value)}, not a number"
        if self.whole and not isinstance(value, int):
            return f"is {_short(value)}, not a whole number"
        if not self.contains(value):
            return f"is {_short(value)}, outside {self.range_text()}"
        return None

    def contains(self, value: float) -> bool:
        low_ok = value > self.low if self.low_open else value >= self.low
        high_ok = value < self.high if self.high_open else value <= self.high
        return math.isfinite(value) and low_ok and high_ok

    def range_text(self) -> str:
        """`from 0 to 2`, `above 0 to 1e+06`, `from 50 to below 100`."""
        lower = f"above {self.low:g}" if self.low_open else f"from {self.low:g}"
        return f"{lower} to {'below ' if self.high_open else ''}{self.high:g}"


# Flags that are not sweep settings, with the same failure mode (nan, inf, 1e308 accepted).
FLAGS: dict[str, Bound] = {
    "n": Bound("--n", 1, MAX_N, whole=True),
    "params_b": Bound("--params-b", 0.001, 100_000.0),  # billions of parameters
    "timeout": Bound("--timeout", 0.0, 3_600.0, low_open=True),  # seconds per probe
}


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 30 else text[:29] + "…"
