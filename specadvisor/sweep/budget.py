"""The measuring budget of sequential measuring (`sweep --budget MIN`): wall-clock time, what a user
means by "spend 10 minutes". Launches of one wave run at once (`--parallel N`), so a wave costs its
slowest launch (start-up + its passes over the prompts), not the sum of its launches: counted as a
sum, a budget with N slots stopped after 1/N of the measuring the time allowed.

What has been spent is taken from the runs' own figures (start-up and duration as measured), so a
replay on a virtual clock (benchmarks/decision.py) counts time the way a live sweep does; what a
round would cost is `analysis.costs.round_seconds`, the same estimate the decision sizes its step with."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from specadvisor.analysis.arms import server_key
from specadvisor.domain import MeasurementWarning, Session, StopCode, SweepEvent, SweepStop
from specadvisor.figures import MAX_LOOKS

if TYPE_CHECKING:
    from specadvisor.analysis.decision import LevelDecision
    from specadvisor.sweep.time_limit import TimeLimit

Emit = Callable[[SweepEvent], None]


def wall_seconds(session: Session) -> float:
    """Wall-clock measuring time so far: per wave, its slowest launch (one start-up plus the durations
    of every run on that server); runs without a wave (older sessions) count one after another."""
    arms = {a.id: a for a in session.arms}
    launches: dict[tuple[object, ...], list[float]] = {}  # (wave, server, trial, role) -> [start-up, measuring]
    for result in session.results:
        arm = arms.get(result.arm_id)
        for i, run in enumerate(result.runs):
            if run.wave is None or arm is None:
                key: tuple[object, ...] = (None, result.arm_id, i)
            else:
                key = (run.wave, server_key(arm), run.trial, run.role)
            cost = launches.setdefault(key, [0.0, 0.0])
            cost[0] = max(cost[0], run.startup_s or 0.0)
            cost[1] += run.duration_s or 0.0
    waves: dict[object, float] = {}
    for key, (startup, measuring) in launches.items():
        wave = key[0] if key[0] is not None else key
        waves[wave] = max(waves.get(wave, 0.0), startup + measuring)
    return sum(waves.values())


class Budget:
    """What one run of sequential measuring has spent of `--budget` and may still spend (the time
    limit's share too), and why it stopped (`stop`, recorded as domain.SweepStop)."""

    def __init__(self, session: Session, limit: TimeLimit) -> None:
        self.session = session
        self.limit = limit
        self.spent = 0.0  # wall-clock seconds of extra measuring
        self.stop: SweepStop | None = None  # why measuring stopped, once it has (analysis/stops.py words it)

    @property
    def left(self) -> float:
        return (self.session.settings.budget_s or 0.0) - self.spent

    def stopped(self, code: StopCode, **figures: Any) -> SweepStop:
        """Why this run stopped measuring, with the figures behind it."""
        s = self.session.settings
        sequential = s.budget_s is not None
        return SweepStop(
            code=code,
            looks=s.looks if sequential else 0,
            budget_s=s.budget_s,
            spent_s=self.spent if sequential else None,
            time_limit_s=s.time_limit_s,
            **figures,
        )

    def affordable(self, cost: float, wanted: int) -> int:
        """How many of a step's units (passes or launch rounds) to measure before the next look: the
        plan's last look gets what the budget still pays for (no later look could use it); an earlier
        one at most half of it, so that a step sized on a few noisy launches leaves a last look to spend
        the rest on. 0: not even one fits the budget."""
        affordable = int(self.left // cost) if cost > 0 else 1
        if affordable < 1:
            return 0
        last = self.session.settings.looks + 1 == MAX_LOOKS
        return max(1, min(affordable if last else min(wanted, max(1, affordable // 2)), affordable))

    def refused(self, estimate: float, level: LevelDecision, emit: Emit) -> bool:
        """A block the budget or the time limit cannot pay for is not started (the message says why)."""
        budget, left = self.session.settings.budget_s or 0.0, self.left
        if estimate > left:
            emit(MeasurementWarning(arm_id=None, message=f"measuring budget spent ({(budget - left) / 60:.1f} of {budget / 60:.1f} min): {level.verdict}"))
            self.stop = self.stopped("budget too small", step_s=estimate)
            return True
        limit = self.limit.seconds_left()
        if limit is not None and estimate > limit:  # a block the time limit would cut: not started
            emit(
                MeasurementWarning(
                    arm_id=None, message=f"the time limit leaves {limit / 60:.1f} min, the next round needs about {estimate / 60:.1f}: {level.verdict}"
                )
            )
            self.stop = self.stopped("step exceeds time left", step_s=estimate, time_left_s=limit)
            return True
        return False

    def added(self, before: float, level: LevelDecision, emit: Emit) -> float | None:
        """The wall-clock time a block added (spent), or None when it measured nothing: more of the same will not decide it."""
        added = wall_seconds(self.session) - before
        if added <= 0:  # its launches failed
            emit(MeasurementWarning(arm_id=None, message=f"the added launches measured nothing: stopping with {level.verdict}"))
            self.stop = self.stopped("measured nothing")
            return None
        self.spent += added
        return added


def looks_taken(previous: SweepStop | None) -> int:
    """Looks at the decision a resumed session's earlier run took whose error is spent. A run that
    stopped at a look stopped on the data that look saw: the resumed run takes that same look again
    (the step it names is measured next), not a new one; a run cut mid-measuring (time limit, cancel)
    may have measured after its last look, so the resumed run's first look is a new one."""
    if previous is None or not previous.looks:
        return 0
    return previous.looks if previous.code in ("time limit", "cancelled") else previous.looks - 1
