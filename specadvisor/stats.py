"""Small, dependency-free statistics for benchmark figures.

Percentiles use linear interpolation (numpy's default) so our p99 matches `vllm bench serve`'s.
Intervals: Wilson for acceptance proportions (honest at small counts and near 0 or 1, where the
normal approximation goes below 0 or above 1), Student t for means of a few throughput figures.
"""

from __future__ import annotations

import functools
import itertools
import math
import statistics
from collections.abc import Sequence

from specadvisor.domain import LatencyStats

# Two-sided 95% Student t critical values for 1..30 degrees of freedom.
_T975 = (
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
    2.086,
    2.080,
    2.074,
    2.069,
    2.064,
    2.060,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
)


def percentile(values: Sequence[float], q: float) -> float | None:
    """q in 0..100; linear interpolation between closest ranks; None for no values."""
    if not 0 <= q <= 100:
        raise ValueError(f"percentile q must be within 0..100, got {q}")
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def latency_stats(values_ms: Sequence[float]) -> LatencyStats:
    """Mean/median/p90/p99/std (population std, as numpy and vllm bench serve report it)."""
    if not values_ms:
        return LatencyStats()
    return LatencyStats(
        mean=statistics.fmean(values_ms),
        median=percentile(values_ms, 50),
        p90=percentile(values_ms, 90),
        p99=percentile(values_ms, 99),
        std=statistics.pstdev(values_ms) if len(values_ms) > 1 else 0.0,
    )


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for k successes in n trials; (0, 1) when n is 0 (nothing known)."""
    if n <= 0:
        return (0.0, 1.0)
    if not 0 <= k <= n:
        raise ValueError(f"wilson needs 0 <= k <= n, got k={k} n={n}")
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def t_critical_975(df: int) -> float:
    """Two-sided 95% t critical value; the normal 1.96 plus a 1/df correction past the table."""
    if df < 1:
        raise ValueError("t interval needs at least one degree of freedom")
    if df <= len(_T975):
        return _T975[df - 1]
    return 1.96 + 2.4 / df


def mean_ci(values: Sequence[float]) -> tuple[float, float] | None:
    """95% Student t interval for the mean; None with fewer than two values (no spread known)."""
    if len(values) < 2:
        return None
    m = statistics.fmean(values)
    half = t_critical_975(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return (m - half, m + half)


MAX_CI_RATIO = 10.0  # an interval wider than x10 (high / low) says nothing: report none


def throughput_ci(values: Sequence[float]) -> tuple[float, float] | None:
    """95% interval for a mean throughput from independent figures (trials, runs, batch means).

    Built on the log scale (a t interval of log values, mapped back): a throughput cannot be
    negative, and its spread is multiplicative, so a wide interval stays above zero instead of
    reaching [-293, 6457]. None with fewer than three positive values (two give a t interval 12.7
    standard errors wide: no information) and when the figures disagree so much that the interval
    would span more than a factor MAX_CI_RATIO: then there is no honest interval to print.
    """
    positive = [v for v in values if v > 0]
    if len(positive) < 3 or len(positive) < len(values):
        return None
    logs = [math.log(v) for v in positive]
    half = t_critical_975(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    centre = statistics.fmean(positive)
    # Centre the multiplicative half-width on the arithmetic mean (the figure the tables print).
    ratio = math.exp(half)
    if not math.isfinite(ratio) or ratio * ratio > MAX_CI_RATIO:
        return None
    return (centre / ratio, centre * ratio)


def lag1_autocorrelation(values: Sequence[float]) -> float:
    """Lag-1 autocorrelation; batch means need it near 0 to count as independent."""
    if len(values) < 3:
        return 0.0
    m = statistics.fmean(values)
    var = sum((v - m) ** 2 for v in values)
    if var == 0:
        return 0.0
    return sum((a - m) * (b - m) for a, b in itertools.pairwise(values)) / var


def usable_throughput_ci(ci: tuple[float, float] | None) -> tuple[float, float] | None:
    """An additive throughput interval, or None when it reaches zero or spans more than MAX_CI_RATIO:
    a throughput interval that includes 0 tok/s (or [-293, 6457]) tells the reader nothing."""
    if ci is None:
        return None
    lo, hi = ci
    if lo <= 0 or hi / lo > MAX_CI_RATIO:
        return None
    return ci


def t_cdf(x: float, df: float) -> float:
    """Student t cumulative distribution, through the regularized incomplete beta function."""
    if df <= 0:
        raise ValueError("the t distribution needs positive degrees of freedom")
    tail = 0.5 * _incomplete_beta(df / 2, 0.5, df / (df + x * x))
    return 1 - tail if x > 0 else tail


@functools.lru_cache(maxsize=4096)
def t_quantile(p: float, df: float) -> float:
    """The t value with t_cdf = p (0 < p < 1), by bisection on t_cdf: any level and any degrees of
    freedom, which the decision's per-look, per-arm error levels need (the 95% table does not do).
    Remembered (a pure function): a verdict over 64 levels asks the same few (p, df) hundreds of
    times, each a bisection of about 40 numeric integrations."""
    if not 0 < p < 1:
        raise ValueError(f"a quantile needs 0 < p < 1, got {p}")
    if p < 0.5:
        return -t_quantile(1 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-10 * max(1.0, hi):
            break
    return (lo + hi) / 2


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b), by Lentz's continued fraction (Numerical Recipes 6.4)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x > (a + 1) / (a + b + 2):
        return 1 - _incomplete_beta(b, a, 1 - x)
    tiny = 1e-300
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    f = d
    for m in range(1, 500):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)), -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1 + numerator * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + numerator / c
            c = c if abs(c) > tiny else tiny
            f *= c * d
        if abs(c * d - 1) < 1e-14:
            break
    return front * f / a
