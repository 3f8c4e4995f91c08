"""Machine drift: how far the baseline moved between its first and last measurement, and what that
does to a verdict.

A GPU's throughput moves with clocks, temperature, power caps and a colleague's job (the same H200
sweep gave a baseline 21% apart on two leases); a 2-core CPU moves 4-13% run to run. An arm measured
minutes after the baseline can therefore look faster or slower than it is. The sweep measures the
baseline again at the end (bracketing); here the two ends give the drift. Above the threshold every
arm's interval is widened by it (an arm measured somewhere between the brackets can be off by up to
that much), the recommendation says so, and a verdict the drift could explain is withheld.
"""

from __future__ import annotations

import math

from specadvisor import stats
from specadvisor.domain import ArmResult, DriftReport, Recommendation, Session

DEFAULT_THRESHOLD = 0.05


def baseline_drift(session: Session, concurrency: int | None = None, spread: tuple[float, int] | None = None) -> DriftReport | None:
    """Drift of the baseline at `concurrency` (the session's by default): its first measured run
    against its last, in time order. None with fewer than two measured runs. `spread` (sd, df of
    the run-to-run scatter) says how much of such a change noise alone could make (shown beside it)."""
    conc = session.concurrency if concurrency is None else concurrency
    arm = next((a for a in session.arms if a.is_baseline and a.concurrency == conc), None)
    result = session.result_for(arm.id) if arm else None
    if result is None:
        return None
    runs = [r for r in result.runs if r.output_throughput and r.status in ("ok", "stopped_early")]
    if len(runs) < 2:
        return None
    runs.sort(key=lambda r: (r.started_at is None, r.started_at))
    first, last = runs[0], runs[-1]
    change = (last.output_throughput - first.output_throughput) / first.output_throughput
    apart = (last.started_at - first.started_at).total_seconds() if first.started_at and last.started_at else None
    threshold = session.settings.drift_threshold
    machine = gpu_change(result)
    noise = stats.t_critical_975(spread[1]) * spread[0] * math.sqrt(2) if spread else None
    return DriftReport(
        arm_id=arm.id,
        first=first.output_throughput,
        last=last.output_throughput,
        change=change,
        seconds_apart=apart,
        measurements=len(runs),
        threshold=threshold,
        noise=noise,
        machine=machine,
        exceeded=abs(change) > threshold,
    )


def gpu_change(result: ArmResult) -> str | None:
    """The baseline GPUs' clocks and temperature at the start of its first run against the end of
    its last, and throttle reasons, from the arm's GPU telemetry; None without readings."""
    telemetry = getattr(result, "telemetry", None)
    start, end = (getattr(telemetry, "start", None) or []), (getattr(telemetry, "end", None) or [])
    if not start or not end:
        return None
    parts = []
    clocks = [(a.sm_clock_mhz, b.sm_clock_mhz) for a in start for b in end if a.gpu == b.gpu and a.sm_clock_mhz and b.sm_clock_mhz]
    if clocks:
        first, last = sum(a for a, _ in clocks) / len(clocks), sum(b for _, b in clocks) / len(clocks)
        parts.append(f"SM clock {first:.0f} -> {last:.0f} MHz ({(last / first - 1) * 100:+.0f}%)")
    temps = [(a.temperature_c, b.temperature_c) for a in start for b in end if a.gpu == b.gpu and a.temperature_c is not None and b.temperature_c is not None]
    if temps:
        parts.append(f"temperature {max(a for a, _ in temps):.0f} -> {max(b for _, b in temps):.0f} C")
    throttle = sorted({reason for state in end for reason in (state.throttle or [])})
    if throttle:
        parts.append("throttling: " + ", ".join(throttle))
    return "; ".join(parts) or None


def widen(results: dict[str, ArmResult], drift: DriftReport | None) -> dict[str, ArmResult]:
    """Above the threshold, copies of `results` whose throughput intervals also hold the drift
    (relative half-widths add in quadrature), in proportion to the arm's runs that did NOT run in a
    wave beside the baseline: side by side, drift moves both and cannot fake a difference. Below the
    threshold the drift is what the user accepts, and the run-to-run spread (sweep.spread) covers it."""
    if drift is None or not drift.exceeded:
        return results
    base = results.get(drift.arm_id)
    base_waves = {run.wave for run in base.runs if run.wave is not None} if base else set()
    out = {}
    for arm_id, r in results.items():
        tput = r.output_throughput
        runs = [run for run in r.runs if run.output_throughput]
        apart = sum(1 for run in runs if run.wave not in base_waves) / len(runs) if runs and arm_id != drift.arm_id else 1.0
        if not tput or apart == 0:
            out[arm_id] = r
            continue
        half = (r.output_throughput_ci[1] - r.output_throughput_ci[0]) / 2 if r.output_throughput_ci else 0.0
        centre = (r.output_throughput_ci[1] + r.output_throughput_ci[0]) / 2 if r.output_throughput_ci else tput
        wide = math.hypot(half, abs(drift.change) * apart * tput)
        out[arm_id] = r.model_copy(update={"output_throughput_ci": (centre - wide, centre + wide)})
    return out


def annotate(
    rec: Recommendation, drift: DriftReport | None, results: dict[str, ArmResult], session: Session, pooled: tuple[float, int] | None = None
) -> Recommendation:
    """Put the drift on the recommendation and, above the threshold, say what it does to the verdict."""
    if pooled is not None:
        rec.reasons.append(f"intervals from the run-to-run spread pooled over repeated runs: {pooled[0] * 100:.1f}% (sd, {pooled[1]} degrees of freedom)")
    if drift is None:
        base = next((session.result_for(a.id) for a in session.arms if a.is_baseline and a.concurrency == session.concurrency), None)
        if session.settings.bracket and base is not None and len(base.runs) == 1:
            rec.reasons.append("baseline drift unknown: the baseline was measured only once (its bracket did not finish)")
        return rec
    rec.drift = drift
    line = (
        f"baseline drift {drift.change * 100:+.1f}% between its first and last measurement"
        + (f" ({drift.seconds_apart / 60:.0f} min apart" if drift.seconds_apart is not None else " (")
        + f", {drift.measurements} measurements; threshold {drift.threshold * 100:.0f}%)"
    )
    if drift.machine:
        line += f"; the GPUs: {drift.machine}"
    if drift.noise is not None:
        line += f"; run-to-run noise alone moves two runs up to {drift.noise * 100:.0f}%"
    if not drift.exceeded:
        rec.reasons.append(f"{line}: within the threshold")
        return rec
    best = _best_speculative(session, results)
    base = results.get(drift.arm_id)
    if rec.do_not_speculate and best is not None and base is not None and base.output_throughput:
        gain = results[best].output_throughput / base.output_throughput - 1
        if gain > 0:
            rec.withheld, rec.do_not_speculate, rec.speedup = True, False, None
            rec.reasons.insert(
                0,
                f"VERDICT WITHHELD: the machine drifted ({line}); the best speculative arm's {gain * 100:+.1f}% "
                "is within what the drift alone could produce. Re-run on a quieter machine, or with --trials 3",
            )
            return rec
    if rec.arm_id:
        rec.reasons.insert(1, f"the machine drifted: {line}; intervals were widened by it and the speedup still holds beyond it")
    else:
        rec.reasons.insert(0, f"the machine drifted: {line}; intervals were widened by it, and no speculative arm was faster than the baseline on average")
    return rec


def _best_speculative(session: Session, results: dict[str, ArmResult]) -> str | None:
    spec = [a.id for a in session.arms if not a.is_baseline and a.concurrency == session.concurrency and a.id in results]
    return max(spec, key=lambda i: results[i].output_throughput) if spec else None
