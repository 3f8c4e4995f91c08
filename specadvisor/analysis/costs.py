"""What a sweep will cost in time: server start-ups and request streams, measured here when we can.

The plan's estimate (and so the size of a default plan under a time budget) comes from the store's
own sessions on this hardware when it has them: the gap between one server's last arm and the next
server's first arm is a stop plus a start-up, and an arm's output tokens over its duration give the
per-stream rate. Without history the defaults say so, and differ for a CPU host (about 100x slower).

Once a sweep has measured an arm, one more launch of it costs what its own launches took
(`launch_cost`, `round_seconds`): the decision sizes its next step with it and the runner's
sequential measuring checks it against the budget, so both count a round the same way. More passes
over the prompts on servers that are still up cost no start-up (`passes_seconds`).
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from specadvisor.analysis.arms import server_key
from specadvisor.domain import ArmResult, ArmStatus, Session
from specadvisor.figures import Launched, launches

GPU_DEFAULTS = (90.0, 50.0)  # start-up seconds, output tokens/s of one request stream
CPU_DEFAULTS = (70.0, 10.0)
UNMEASURED_S = 60.0  # a start-up or a pass of an arm with no measured launch yet


@dataclass(frozen=True)
class Costs:
    startup_s: float
    tokens_per_s: float  # output tokens/s of ONE request stream
    source: str  # how these were obtained, shown next to the estimate

    @property
    def measured(self) -> bool:
        return self.source.startswith("measured")


def default_costs(cpu_only: bool) -> Costs:
    startup, rate = CPU_DEFAULTS if cpu_only else GPU_DEFAULTS
    return Costs(startup, rate, f"{'CPU' if cpu_only else 'GPU'} defaults; nothing measured on this hardware yet")


def measured_costs(sessions: Iterable[Session], cpu_only: bool) -> Costs:
    """Median start-up and per-stream rate over the sessions' finished arms; a default for what they lack."""
    startups: list[float] = []
    rates: list[float] = []
    count = 0
    for session in sessions:
        arms = {a.id: a for a in session.arms}
        done = [(r, r.started_at, r.finished_at) for r in session.results if r.status == ArmStatus.ok and r.started_at and r.finished_at and r.arm_id in arms]
        if done:
            count += 1
        done.sort(key=lambda timed: timed[1])
        for (prev, _, prev_finished), (cur, cur_started, _) in itertools.pairwise(done):
            if server_key(arms[prev.arm_id]) != server_key(arms[cur.arm_id]):
                gap = (cur_started - prev_finished).total_seconds()
                if 0 < gap < 3600:
                    startups.append(gap)
        for r, _, _ in done:
            if r.output_tokens and r.duration_s and arms[r.arm_id].is_baseline:
                streams = max(1, min(arms[r.arm_id].concurrency, r.completed or 1))
                rates.append(r.output_tokens / r.duration_s / streams)
    fallback = default_costs(cpu_only)
    if not startups and not rates:
        return fallback
    what = " and ".join(w for w, xs in (("start-ups", startups), ("request times", rates)) if xs)
    return Costs(
        startup_s=statistics.median(startups) if startups else fallback.startup_s,
        tokens_per_s=statistics.median(rates) if rates else fallback.tokens_per_s,
        source=f"measured {what}, {count} sweep{'s' if count != 1 else ''} here",
    )


@dataclass(frozen=True)
class LaunchCost:
    """One more launch of an arm: a server start-up, then each pass over the prompts."""

    startup_s: float
    pass_s: float

    def seconds(self, passes: int = 1) -> float:
        return self.startup_s + passes * self.pass_s


def launch_cost(result: ArmResult | None, *, launched: Launched = launches) -> LaunchCost:
    """Means over the arm's own measured launches (a launch of several passes counts once).
    `launched`: `launches`, or a verdict's memo of it (analysis.levels)."""
    measured = launched(result) if result is not None else []
    startups = [x.startup_s for x in measured if x.startup_s]
    return LaunchCost(
        startup_s=statistics.fmean(startups) if startups else UNMEASURED_S,
        pass_s=statistics.fmean(x.measure_s / x.passes for x in measured) if measured else UNMEASURED_S,
    )


def round_seconds(
    result_for: Callable[[str], ArmResult | None], arm_ids: Sequence[str], passes: int = 1, slots: int = 1, *, launched: Launched = launches
) -> float:
    """Wall-clock time of one more launch of each of `arm_ids` (their results from `result_for`):
    launched `slots` at a time, each wave as long as its slowest launch (a start-up and `passes` passes)."""
    costs = [launch_cost(result_for(arm_id), launched=launched).seconds(passes) for arm_id in arm_ids]
    width = max(1, slots)
    return sum(max(costs[i : i + width]) for i in range(0, len(costs), width))


def passes_seconds(result_for: Callable[[str], ArmResult | None], arm_ids: Sequence[str], passes: int = 1) -> float:
    """Wall-clock time of `passes` more passes over the prompts on the running servers of `arm_ids`
    (no start-up): they measure in lockstep, each pass starting together, so a pass lasts as long as
    the slowest server's."""
    return passes * max((launch_cost(result_for(arm_id)).pass_s for arm_id in arm_ids), default=0.0)
