"""Machine drift: how far the baseline moved between its first and last measurement, and what that
does to a verdict.

A GPU's throughput moves with clocks, temperature, power caps and a colleague's job (the same H200
sweep gave a baseline 21% apart on two leases); a 2-core CPU moves 4-13% run to run. An arm measured
minutes after the baseline can therefore look faster or slower than it is. The sweep measures the
baseline again at the end (bracketing); here the two ends give the drift, reported with what the
GPUs' own readings say changed. Above the threshold it is flagged. It does not decide anything by
itself: the decision (analysis.decision) counts the baseline's launches as launch-to-launch spread, and
names drift as a cause only when it is as large as the gap being judged, with the arithmetic.
"""

from __future__ import annotations

import math

from specadvisor import stats
from specadvisor.domain import ArmResult, DriftReport, Session
from specadvisor.figures import Launch, launches

DEFAULT_THRESHOLD = 0.05


def baseline_drift(session: Session, concurrency: int | None = None, spread: tuple[float, int] | None = None) -> DriftReport | None:
    """Drift of the baseline at `concurrency` (the session's by default): its first launch against its
    last, in time order, each the mean of its passes (more passes on a held server are one launch
    measured longer, not a move of the machine). None with fewer than two launches. `spread` (sd, df of
    the run-to-run scatter) says how much of such a change noise alone could make (shown beside it)."""
    conc = session.concurrency if concurrency is None else concurrency
    arm = next((a for a in session.arms if a.is_baseline and a.concurrency == conc), None)
    result = session.result_for(arm.id) if arm else None
    if arm is None or result is None:
        return None
    ordered = in_time_order(launches(result))
    if len(ordered) < 2:
        return None
    first, last = ordered[0], ordered[-1]
    before, after = first.tok_s, last.tok_s
    change = (after - before) / before
    apart = (last.started_at - first.started_at).total_seconds() if first.started_at and last.started_at else None
    threshold = session.settings.drift_threshold
    machine = gpu_change(result)
    noise = stats.t_critical_975(spread[1]) * spread[0] * math.sqrt(2) if spread else None
    return DriftReport(
        arm_id=arm.id,
        first=before,
        last=after,
        change=change,
        seconds_apart=apart,
        measurements=len(ordered),
        threshold=threshold,
        noise=noise,
        machine=machine,
        exceeded=abs(change) > threshold,
    )


def in_time_order(measured: list[Launch]) -> list[Launch]:
    """Launches by the start of their first pass (undated ones last, as measured)."""
    return sorted(measured, key=lambda x: (x.started_at is None, x.started_at))


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
