"""Fold the runs of one arm (trials on fresh servers, the end-of-sweep bracket, the confirmation
wave) into the one ArmResult every view reads.

Throughput is the mean of the runs and its interval the spread BETWEEN runs, which is what a
repeat of the sweep would see (within-run windows are correlated and understate it). Counts and
per-position acceptance are pooled exactly; latency means are request-weighted and the p90/p99
of the merge is the worst run's, so that a latency target is never met by averaging.
"""

from __future__ import annotations

import math
import statistics
from typing import Literal, TypedDict, Unpack

from specadvisor import stats
from specadvisor.analysis.power import merge_telemetry
from specadvisor.domain import ArmResult, ArmStatus, LatencyStats, PositionStats, RunRecord, RunRole

_MEASURED = (ArmStatus.ok, ArmStatus.stopped_early)


class RunWhere(TypedDict, total=False):
    """Where and when a run ran: the `RunRecord` fields the runner knows and the measurement does not."""

    trial: int
    role: RunRole
    wave: int | None
    placement: str
    startup_s: float | None
    startup_cache: Literal["cold", "warm"] | None
    repeat: int


def run_record(result: ArmResult, **where: Unpack[RunWhere]) -> RunRecord:
    """The per-run summary kept in `ArmResult.runs` for one freshly measured run (with the per-request
    records the measurement handed over in its one run)."""
    return RunRecord(
        requests=result.runs[-1].requests if result.runs else [],
        status=result.status.value,
        started_at=result.started_at,
        finished_at=result.finished_at,
        completed=result.completed,
        duration_s=result.duration_s,
        output_throughput=result.output_throughput,
        output_throughput_ci=result.output_throughput_ci,
        **where,
    )


def merge(previous: ArmResult | None, new: ArmResult, record: RunRecord) -> ArmResult:
    """`new` (one run) added to `previous` (the arm's runs so far). A failed run adds its record and
    warnings but never erases what earlier runs measured."""
    new = new.model_copy(deep=True)
    new.runs = [record]
    new.wave, new.placement = record.wave, record.placement
    if previous is None or (not previous.runs and previous.status not in _MEASURED):
        return new
    if not previous.runs:  # measured before runs were recorded (an older session being resumed)
        previous = previous.model_copy(update={"runs": [run_record(previous)]})
    runs = [*previous.runs, record]
    if new.status not in _MEASURED or new.output_throughput is None:
        kept = previous.model_copy(deep=True)
        kept.runs = runs
        kept.warnings = _dedupe([*kept.warnings, *(f"{run_name(record)}: {w}" for w in [new.error or "failed", *new.warnings])])
        return kept
    if previous.status not in _MEASURED or previous.output_throughput is None:
        new.runs = runs
        return new
    merged = previous.model_copy(deep=True)
    merged.runs = runs
    merged.wave, merged.placement = record.wave, record.placement
    merged.status = ArmStatus.ok if ArmStatus.ok in (previous.status, new.status) else ArmStatus.stopped_early
    merged.finished_at = new.finished_at or previous.finished_at
    merged.vllm_version = previous.vllm_version or new.vllm_version
    merged.completed = previous.completed + new.completed
    merged.failed = previous.failed + new.failed
    merged.output_tokens = previous.output_tokens + new.output_tokens
    merged.input_tokens = previous.input_tokens + new.input_tokens
    merged.duration_s = (previous.duration_s or 0) + (new.duration_s or 0) or None
    tputs = [r.output_throughput for r in runs if r.output_throughput is not None and r.status in ("ok", "stopped_early")]
    merged.trials = tputs
    merged.output_throughput = statistics.fmean(tputs)
    merged.output_throughput_ci = between_runs_ci([r for r in runs if r.output_throughput is not None and r.status in ("ok", "stopped_early")])
    merged.output_throughput_ci_basis = f"{len(tputs)} runs" if merged.output_throughput_ci else f"{len(tputs)} runs disagree too much: no interval"
    d = merged.duration_s or 0
    merged.request_throughput = merged.completed / d if d > 0 else None
    if previous.achieved_request_rate and new.achieved_request_rate:
        merged.achieved_request_rate = (previous.achieved_request_rate + new.achieved_request_rate) / 2
    w_old, w_new = previous.completed, new.completed
    for name in ("ttft_ms", "tpot_ms", "itl_ms", "e2el_ms"):
        setattr(merged, name, _merge_latency(getattr(previous, name), w_old, getattr(new, name), w_new))
    _merge_acceptance(merged, previous, new)
    merged.warnings = _dedupe([*previous.warnings, *new.warnings])
    merged.telemetry = merge_telemetry(previous, new)
    return merged


def fold_startup(result: ArmResult) -> None:
    """The arm's start-up figures from its runs: the first cold launch, and the mean of warm ones."""
    cold = [r.startup_s for r in result.runs if r.startup_cache == "cold" and r.startup_s is not None]
    warm = [r.startup_s for r in result.runs if r.startup_cache == "warm" and r.startup_s is not None]
    result.startup_cold_s = cold[0] if cold else None
    result.startup_warm_s = statistics.fmean(warm) if warm else None


def between_runs_ci(runs: list[RunRecord]) -> tuple[float, float] | None:
    """95% interval of the mean throughput over runs. Three or more runs: Student t on the runs.
    Two: the difference of the two counts as spread beside their own within-run intervals (a t
    interval on one degree of freedom is 12.7 standard errors wide and would call everything a tie).
    One: that run's own interval."""
    values = [r.output_throughput for r in runs if r.output_throughput is not None]
    if not values:
        return None
    if len(values) >= 3:
        return stats.throughput_ci(values)
    mean = statistics.fmean(values)
    halves = [(r.output_throughput_ci[1] - r.output_throughput_ci[0]) / 2 for r in runs if r.output_throughput_ci]
    within = statistics.fmean(halves) / math.sqrt(len(values)) if halves else 0.0
    spread = abs(values[0] - values[-1]) / 2 if len(values) == 2 else 0.0
    if len(values) == 1 and not halves:
        return None
    half = math.hypot(within, spread)
    return stats.usable_throughput_ci((mean - half, mean + half))


def _merge_latency(a: LatencyStats, wa: int, b: LatencyStats, wb: int) -> LatencyStats:
    def mean(x: float | None, y: float | None) -> float | None:
        if x is None or y is None or wa + wb == 0:
            return x if y is None else y
        return (x * wa + y * wb) / (wa + wb)

    def worst(x: float | None, y: float | None) -> float | None:
        return max(v for v in (x, y) if v is not None) if (x is not None or y is not None) else None

    return LatencyStats(mean=mean(a.mean, b.mean), median=mean(a.median, b.median), p90=worst(a.p90, b.p90), p99=worst(a.p99, b.p99), std=worst(a.std, b.std))


def _merge_acceptance(merged: ArmResult, a: ArmResult, b: ArmResult) -> None:
    if not a.num_drafts or not b.num_drafts:
        return
    merged.num_drafts = a.num_drafts + b.num_drafts
    merged.num_draft_tokens = (a.num_draft_tokens or 0) + (b.num_draft_tokens or 0)
    merged.num_accepted_tokens = (a.num_accepted_tokens or 0) + (b.num_accepted_tokens or 0)
    merged.mean_acceptance_length = 1 + merged.num_accepted_tokens / merged.num_drafts
    merged.acceptance_rate = merged.num_accepted_tokens / merged.num_draft_tokens if merged.num_draft_tokens else None
    width = max(len(a.per_position), len(b.per_position))
    positions = []
    for i in range(width):
        accepted = sum(p.accepted for p in (*a.per_position, *b.per_position) if p.position == i)
        drafts = sum(p.drafts for p in (*a.per_position, *b.per_position) if p.position == i)
        low, high = stats.wilson(accepted, drafts) if drafts and accepted <= drafts else (None, None)
        positions.append(PositionStats(position=i, accepted=accepted, drafts=drafts, rate=accepted / drafts if drafts else 0.0, ci_low=low, ci_high=high))
    merged.per_position = positions


def run_name(record: RunRecord) -> str:
    """ "trial 2", "bracket", "trial 1, pass 3" (a later pass over the prompts on the same launch)."""
    launch = record.role if record.role != "trial" else f"trial {record.trial}"
    return f"{launch}, pass {record.repeat}" if record.repeat > 1 else launch


def _dedupe(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))
