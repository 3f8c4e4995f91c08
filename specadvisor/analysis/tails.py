"""Tail requests: the few requests of an arm that took far longer than its others, and what they did
to the verdict (issue 38).

On the H200 rename sweep, 5 of n-gram N=4's 32 requests took over twice its median (the slowest
2,505 ms against a median of 359 ms and the baseline's 783 ms on that prompt, time to first token
normal, so the time was in decoding), about a third of its measured time: the arm read 1.24x, most
prompts 1.86x. Whether such requests are the server starting up (a shape met for the first time
compiles), the proposer, or the prompt itself decides whether they belong in the answer, so they
are found, shown per arm, classified where the data can tell, and named in the verdict when the gain
it rests on is lost to them.

The rule (stated before looking):
- a request of a run is a tail request when it took more than TAIL_FACTOR (2) times the median
  request of that run and, for a speculative arm, longer than the no-speculation baseline took on the
  same prompt (median over the baseline's runs): slow for the arm and slower than not speculating;
- the same prompt served again (another pass or launch of the arm): a tail that does not come back
  is a start-up effect (the first time a shape is met, e.g. compilation), which a warm-up that serves
  the prompts once (`--warmup` at least the prompt count) keeps out of the measurement; one that comes
  back is the workload's; an arm served once cannot tell the two apart;
- the gain is lost to them when, with each tail request at the run's median time, the arm's speedup
  would move by more than the tie margin (3%); only at concurrency 1, where an arm's time is the
  sum of its requests' times (under load they overlap, and the what-if would not be arithmetic).
Pure functions over stored per-request records: nothing is run, imported sessions read the same.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

from specadvisor.domain import Arm, ArmResult, RunRecord, Session
from specadvisor.figures import MEASURED, PRACTICAL_MARGIN, baseline_result

TAIL_FACTOR = 2.0  # a tail request took more than this times its run's median request
MIN_REQUESTS = 8  # a run's median from fewer requests is no yardstick


@dataclass(frozen=True)
class TailRequest:
    """One tail request: where it ran, how long it took, against what."""

    index: int  # the prompt's position in the set (the same prompt in every arm and run)
    position: int  # its place in its run's order (0: the first request measured after the warm-up)
    run: str  # "trial 1", "bracket", "trial 2 pass 3"
    latency_ms: float
    median_ms: float  # its run's median request
    baseline_ms: float | None  # the baseline's time on the same prompt (median over its runs)
    ttft_ms: float | None
    recurs: bool | None  # the same prompt slow again in another run of the arm; None: served once


@dataclass(frozen=True)
class ArmTail:
    """An arm's tail requests and what they cost."""

    arm_id: str
    requests: int  # measured requests with records
    tail: list[TailRequest] = field(default_factory=list)
    tail_ms: float = 0.0  # the tail requests' time beyond their runs' medians
    total_ms: float = 0.0  # every measured request's time
    slow_runs: dict[int, int] = field(default_factory=dict)  # prompt index -> runs it was a tail request in
    served_runs: dict[int, int] = field(default_factory=dict)  # prompt index -> runs that served it

    @property
    def kind(self) -> str:
        """start-up (none came back when the prompt was served again) | recurring | served once | none."""
        if not self.tail:
            return "none"
        known = [t.recurs for t in self.tail if t.recurs is not None]
        if not known:
            return "served once"
        return "recurring" if any(known) else "start-up"

    def text(self) -> str:
        """One line: how many, how slow, against what, and what they are where the data can tell."""
        if not self.tail:
            return f"no tail requests (none over {TAIL_FACTOR:g}x its run's median)" if self.requests else "no per-request records"
        slowest = sorted(self.tail, key=lambda t: -t.latency_ms)
        shown = ", ".join(_ms(t.latency_ms) for t in slowest[:5]) + (", ..." if len(slowest) > 5 else "")
        base = [t.baseline_ms for t in slowest[:5] if t.baseline_ms is not None]
        against = f" (the baseline: {', '.join(_ms(b) for b in base)} on those prompts)" if base else ""
        share = f"; {self.tail_ms / 1000:.1f} s beyond the median, {self.tail_ms / self.total_ms:.0%} of its request time" if self.total_ms else ""
        return f"{len(self.tail)} of {self.requests} requests over {TAIL_FACTOR:g}x the median {_ms(slowest[0].median_ms)}: {shown}{against}{share}; {self._kind_text()}"

    def _kind_text(self) -> str:
        kind = self.kind
        if kind == "start-up":
            return "they did not come back when the same prompts were served again: start-up effects, which `--warmup` at least the prompt count keeps out of the measurement"
        if kind == "recurring":
            always = sorted(i for i, slow in self.slow_runs.items() if slow == self.served_runs[i] > 1)
            sometimes = sorted(i for i, slow in self.slow_runs.items() if self.served_runs[i] > 1 and slow != self.served_runs[i])
            said = f"prompt(s) {_indices(always)} slow every time they were served" if always else "some prompts slow again when served again"
            said += f", {_indices(sometimes)} some of the times" if sometimes else ""
            return f"{said}: the workload's own, part of the answer"
        return "each prompt was served once, so a start-up effect (one more launch, or `--warmup` at least the prompt count, shows it) cannot be told from the prompt's own"


def _indices(values: list[int]) -> str:
    """Prompt positions (0-based, as `--json` lists them), at most 8."""
    return ", ".join(f"#{i}" for i in values[:8]) + (f" and {len(values) - 8} more" if len(values) > 8 else "")


def _ms(value: float) -> str:
    return f"{value / 1000:.2f} s" if value >= 1000 else f"{value:.0f} ms"


def _run_name(run: RunRecord) -> str:
    name = f"trial {run.trial}" if run.role == "trial" else run.role
    return f"{name} pass {run.repeat}" if run.repeat > 1 else name


def _runs(result: ArmResult) -> list[RunRecord]:
    return [run for run in result.runs if run.status in MEASURED and len(run.requests) >= MIN_REQUESTS]


def baseline_times(result: ArmResult | None) -> dict[int, float]:
    """The baseline's time per prompt index: the median over its measured runs."""
    times: dict[int, list[float]] = {}
    for run in _runs(result) if result is not None else []:
        for request in run.requests:
            times.setdefault(request.index, []).append(request.latency_ms)
    return {index: statistics.median(values) for index, values in times.items()}


def arm_tail(session: Session, arm: Arm, baseline: dict[int, float] | None = None) -> ArmTail:
    """The tail requests of one arm (its measured runs with per-request records); `baseline`: the
    baseline's time per prompt at the arm's concurrency (computed here when not given)."""
    result = session.result_for(arm.id)
    if result is None:
        return ArmTail(arm.id, 0)
    if baseline is None and not arm.is_baseline:
        baseline = baseline_times(baseline_result(session, arm.concurrency))
    runs = _runs(result)
    found: list[tuple[RunRecord, int, float]] = []  # (run, position, median)
    slow_in: dict[int, set[int]] = {}  # prompt index -> the runs (by number) it was a tail request in
    served: dict[int, int] = {}  # prompt index -> runs that served it
    total = excess = 0.0
    for number, run in enumerate(runs):
        median = statistics.median(r.latency_ms for r in run.requests)
        for position, request in enumerate(run.requests):
            total += request.latency_ms
            served[request.index] = served.get(request.index, 0) + 1
            reference = (baseline or {}).get(request.index)
            if request.latency_ms > TAIL_FACTOR * median and (arm.is_baseline or reference is None or request.latency_ms > reference):
                found.append((run, position, median))
                slow_in.setdefault(request.index, set()).add(number)
                excess += request.latency_ms - median
    tail = []
    for run, position, median in found:
        request = run.requests[position]
        again = served[request.index] > 1
        tail.append(
            TailRequest(
                index=request.index,
                position=position,
                run=_run_name(run),
                latency_ms=request.latency_ms,
                median_ms=median,
                baseline_ms=(baseline or {}).get(request.index),
                ttft_ms=request.ttft_ms,
                recurs=(len(slow_in[request.index]) > 1) if again else None,
            )
        )
    slow = {index: len(numbers) for index, numbers in slow_in.items()}
    return ArmTail(arm.id, sum(len(run.requests) for run in runs), tail, excess, total, slow, {i: served[i] for i in slow})


def session_tails(session: Session) -> dict[str, ArmTail]:
    """Every measured arm's tail requests, the baseline's per-prompt times computed once per level."""
    baselines: dict[int, dict[int, float]] = {}
    out = {}
    for arm in session.arms:
        if session.result_for(arm.id) is None:
            continue
        if arm.is_baseline:
            out[arm.id] = arm_tail(session, arm, {})
            continue
        if arm.concurrency not in baselines:
            baselines[arm.concurrency] = baseline_times(baseline_result(session, arm.concurrency))
        out[arm.id] = arm_tail(session, arm, baselines[arm.concurrency])
    return out


def without_tail(speedup: float, tail: ArmTail, concurrency: int) -> float | None:
    """The speedup the arm would read with each tail request at its run's median time: its time shrinks
    by the tail's excess (at concurrency 1 an arm's time is the sum of its requests'); None elsewhere."""
    if concurrency != 1 or not tail.tail or tail.total_ms <= tail.tail_ms:
        return None
    return speedup * tail.total_ms / (tail.total_ms - tail.tail_ms)


def verdict_line(speedup: float | None, name: str, tail: ArmTail, concurrency: int) -> str | None:
    """A reason for the verdict when the gain it rests on is lost to a few requests; None otherwise."""
    if speedup is None or not tail.tail:
        return None
    clean = without_tail(speedup, tail, concurrency)
    if clean is None or abs(math.log(clean / speedup)) <= math.log(1 + PRACTICAL_MARGIN):
        return None
    return (
        f"the gain is lost to a few requests: {name}'s {tail.text()}; with each at its run's median time it would read "
        f"{clean:.2f}x, not {speedup:.2f}x (shown, not used: the verdict counts every request)"
    )
