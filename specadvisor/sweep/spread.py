"""Between-run spread pooled over arms: the interval a repeat of the sweep would see.

A short run's own interval comes from a few correlated time windows (on a GPU a 64-request run
lasts 2-3 s: two windows, a t interval on one degree of freedom, +/-50% and more), so one noisy arm
would "tie" with everything and the tie rule would hand the win to the smallest N. When arms were
measured more than once (trials, the bracket, the confirmation wave), their run-to-run scatter
measures the machine's noise directly. It is pooled (relative deviations, as a one-way analysis of
variance does: the same machine, the same prompts) and gives every measured arm a t interval of
half-width t(df) * sd * mean / sqrt(runs). Without at least two degrees of freedom of repeats the
arms keep their own intervals.
"""

from __future__ import annotations

import math
import statistics

from specadvisor import stats
from specadvisor.domain import ArmResult

MIN_DF = 2


def pooled_relative_sd(results: dict[str, ArmResult]) -> tuple[float, int] | None:
    """(relative standard deviation between runs, degrees of freedom) over arms with >= 2 runs."""
    squares, df = 0.0, 0
    for r in results.values():
        values = [run.output_throughput for run in r.runs if run.output_throughput and run.status in ("ok", "stopped_early")]
        if len(values) < 2:
            continue
        mean = statistics.fmean(values)
        squares += sum(((v - mean) / mean) ** 2 for v in values)
        df += len(values) - 1
    if df < MIN_DF:
        return None
    return math.sqrt(squares / df), df


def pooled_intervals(results: dict[str, ArmResult]) -> tuple[dict[str, ArmResult], tuple[float, int] | None]:
    """Copies of `results` whose throughput intervals come from the pooled between-run spread
    (unchanged when too few repeats exist), and the (sd, df) used."""
    pooled = pooled_relative_sd(results)
    if pooled is None:
        return results, None
    sd, df = pooled
    t = stats.t_critical_975(df)
    out = {}
    for arm_id, r in results.items():
        runs = sum(1 for run in r.runs if run.output_throughput and run.status in ("ok", "stopped_early"))
        if not r.output_throughput or runs == 0:
            out[arm_id] = r
            continue
        half = t * sd * r.output_throughput / math.sqrt(runs)
        ci = stats.usable_throughput_ci((r.output_throughput - half, r.output_throughput + half))
        out[arm_id] = r.model_copy(update={"output_throughput_ci": ci}) if ci else r
    return out, pooled


def residual_relative_sd(results: dict[str, ArmResult]) -> tuple[float, int] | None:
    """(sd, df) of the run-to-run scatter left after each arm's own linear trend over the waves, for
    arms with >= 3 runs: the noise a drift must exceed to be called drift (a steady drift is a trend,
    not scatter, and must not hide behind itself)."""
    squares, df = 0.0, 0
    for r in results.values():
        points = [
            (run.wave, run.output_throughput) for run in r.runs if run.output_throughput and run.wave is not None and run.status in ("ok", "stopped_early")
        ]
        if len(points) < 3 or len({w for w, _ in points}) < 2:
            continue
        mean = statistics.fmean(v for _, v in points)
        xs, ys = [w for w, _ in points], [v / mean for _, v in points]
        mx, my = statistics.fmean(xs), statistics.fmean(ys)
        sxx = sum((x - mx) ** 2 for x in xs)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
        squares += sum((y - (my + slope * (x - mx))) ** 2 for x, y in zip(xs, ys, strict=True))
        df += len(points) - 2
    if df < MIN_DF:
        return None
    return math.sqrt(squares / df), df
