"""The bounds of every measurement setting, declared once.

The CLI checks its flags against them (`cli/validate.py`), bundle import checks an imported
session's settings against them (`store/bundle_limits.py`), and a rebuilt plan takes a bundle's
settings only within them (`specadvisor/crossing.py`): a value the CLI would refuse cannot arrive by a
file instead. The bounds are generous (far beyond a real sweep) but finite, so NaN, infinities,
zero rates and integers SQLite cannot hold stay out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MAX_N = 64  # num_speculative_tokens: vLLM's drafters go to ~16; 64 leaves room, 10^20 does not
MAX_CONCURRENCY_LEVELS = 64  # the predictor and recommender work per level: levels x arms stays bounded
MAX_INT64 = 2**63 - 1  # SQLite's INTEGER

# Measured figures a session may hold (import refuses others; views, the predictor and the charts
# can then compute with them without overflowing): far beyond any real server, still finite.
MAX_TOKENS_PER_S = 1e9  # output tok/s (and req/s)
MAX_LATENCY_MS = 1e10  # about 115 days
MAX_DURATION_S = 1e8
MAX_FIGURE = 1e15  # any other number in a bundle (counters sampled from /metrics, telemetry, seconds)


@dataclass(frozen=True)
class Bound:
    """A setting's range: [low, high], or (low, high] with low_open; integers only when whole."""

    flag: str
    low: float
    high: float
    whole: bool = False
    low_open: bool = False

    def problem(self, value: object) -> str | None:
        """Why `value` is outside the bound (None when it is a valid value). Booleans are never numbers."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"is {_short(value)}, not a number"
        if self.whole and not isinstance(value, int):
            return f"is {_short(value)}, not a whole number"
        if not math.isfinite(value) or value > self.high or value < self.low or (self.low_open and value == self.low):
            lower = f"above {self.low:g}" if self.low_open else f"from {self.low:g}"
            return f"is {_short(value)}, outside {lower} to {self.high:g}"
        return None


SETTINGS: dict[str, Bound] = {
    "num_prompts": Bound("--num-prompts", 1, 1_000_000, whole=True),
    "output_len": Bound("--output-len", 1, 1_048_576, whole=True),
    "warmup": Bound("--warmup", 0, 100_000, whole=True),
    "trials": Bound("--trials", 1, 1_000, whole=True),
    "seed": Bound("--seed", 0, MAX_INT64, whole=True),
    "concurrency": Bound("--concurrency", 1, 100_000, whole=True),  # each level
    "temperature": Bound("--temperature", 0.0, 100.0),
    "request_rate": Bound("--request-rate", 0.0, 1_000_000.0, low_open=True),
    "slo_tpot_ms": Bound("--slo-tpot-ms", 0.0, 86_400_000.0, low_open=True),  # a day
    "slo_ttft_ms": Bound("--slo-ttft-ms", 0.0, 86_400_000.0, low_open=True),
    "drift_threshold": Bound("--drift-threshold", 0.0, 1_000.0),  # percent on the command line
    "ci_target": Bound("--ci-target", 0.0, 100.0),  # percent on the command line; 0 = off
    "n": Bound("--n", 1, MAX_N, whole=True),
    # not measurement settings, but flags with the same failure mode (nan, inf, 1e308 accepted)
    "params_b": Bound("--params-b", 0.001, 100_000.0),  # billions of parameters
    "timeout": Bound("--timeout", 0.0, 3_600.0, low_open=True),  # seconds per probe
}


def problem(name: str, value: object) -> str | None:
    """Why a setting's value is out of its declared bound; None when it is within."""
    return SETTINGS[name].problem(value)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 30 else text[:29] + "…"
