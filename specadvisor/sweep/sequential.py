"""Sequential measuring (`sweep --budget MIN`, analysis.decision): after the plan's runs, look at the
decision; while a level is undecided and the budget allows, measure the step it names in one block,
then look again. The looks follow a plan of at most MAX_LOOKS, each with its fixed share of the
error (figures.alpha_for_look), however cheap the step before it: looking again does not inflate it.

Where the contenders' servers of the last wave are still up (`held`, sweep/held.py) and within-run
noise limits the comparison, the step is more passes over the prompts on those servers (no start-up
to pay), measured in lockstep; otherwise the launches of each contender it asks for, whose last wave
is held in turn for the next look.
"""

from __future__ import annotations

import asyncio
import itertools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from specadvisor.analysis.costs import passes_seconds, round_seconds
from specadvisor.analysis.decision import LevelDecision, NextStep, step_on_running_servers
from specadvisor.analysis.recommend import level_decisions
from specadvisor.domain import MeasurementWarning, Session, SweepEvent
from specadvisor.figures import MAX_LOOKS
from specadvisor.sweep.budget import Budget, wall_seconds
from specadvisor.sweep.held import HeldWave, Parked
from specadvisor.sweep.runs import RunWhere

if TYPE_CHECKING:
    from specadvisor.sweep.adaptive import AdaptivePolicy
    from specadvisor.sweep.launch import Launcher
    from specadvisor.sweep.recorder import Recorder
    from specadvisor.sweep.scheduler import Scheduler

Emit = Callable[[SweepEvent], None]
MAX_PASSES = 8  # passes over the prompts on one launch in one round of sequential measuring


class Sequential:
    """Measures until decided, within the budget; `looks_before`: the looks a resumed session took."""

    def __init__(self, session: Session, recorder: Recorder, launcher: Launcher, budget: Budget) -> None:
        self.session = session
        self.recorder = recorder
        self.launcher = launcher
        self.budget = budget
        self.looks_before = 0

    async def until_decided(self, scheduler: Scheduler, emit: Emit, policy: AdaptivePolicy | None, held: HeldWave | None) -> HeldWave | None:
        """Look, measure the cheapest open level's step, look again; returns the wave still held (the caller releases it)."""
        try:
            for look in itertools.count(self.looks_before + 1):  # a resumed session continues its plan of looks: their error is spent
                self.session.settings = settings = self.session.settings.replace(looks=look)
                open_ = [d for d in level_decisions(self.session, confidence=settings.confidence, looks=look) if d.decision == "undecided"]
                steps = [d for d in open_ if d.next_step is not None and d.next_step.arm_ids]
                if not steps:
                    self.budget.stop = self.budget.stopped("no deciding step" if open_ else "decided")
                    break
                if look >= MAX_LOOKS:
                    emit(MeasurementWarning(arm_id=None, message=f"the plan's {MAX_LOOKS} looks are taken: {steps[0].verdict}"))
                    self.budget.stop = self.budget.stopped("looks taken")
                    break
                level = min(steps, key=lambda d: d.next_step.seconds if d.next_step and d.next_step.seconds is not None else math.inf)
                step = level.next_step
                assert step is not None
                servers = held.serving(step.arm_ids) if held is not None else None
                if servers is not None:
                    step = step_on_running_servers(self.session, level, confidence=settings.confidence, looks=look) or step
                if step.kind == "requests" and held is not None and servers is not None:
                    added = await self._more_passes(servers, step, level, emit, policy)
                else:
                    if held is not None:  # a relaunch: the running servers stop first
                        await held.close()
                        held = None
                    added, held = await self._relaunch(scheduler, step, level, emit, policy)
                if added is None:
                    break
        except BaseException:
            if held is not None:
                await held.abort()
            raise
        self.recorder.store.save_session(self.session)
        return held

    async def _more_passes(self, servers: list[Parked], step: NextStep, level: LevelDecision, emit: Emit, policy: AdaptivePolicy | None) -> float | None:
        """More passes over the prompts on the contenders' running servers (no start-up), in lockstep:
        every server starts pass k together and serves the same prompts in the same order, so the
        arms stay paired by prompt and share the host's conditions. Returns the wall-clock seconds
        added, or None to stop measuring."""
        cost = passes_seconds(self.session.result_for, step.arm_ids, 1)
        passes = self.budget.affordable(cost, max(1, step.passes))
        if self.budget.refused(cost * max(1, passes), level, emit):
            return None
        what = f"{passes} more pass{'es' if passes > 1 else ''} over the prompts on each contender's running server"
        emit(MeasurementWarning(arm_id=None, message=f"look {self.session.settings.looks}, concurrency {level.concurrency}: undecided; measuring {what}"))
        before = wall_seconds(self.session)
        for _ in range(passes):
            await asyncio.gather(*(self._one_more_pass(p, step.arm_ids, emit, policy) for p in servers))
        return self.budget.added(before, level, emit)

    async def _one_more_pass(self, parked: Parked, arm_ids: tuple[str, ...], emit: Emit, policy: AdaptivePolicy | None) -> None:
        parked.passes += 1
        for arm in parked.job.group:
            if arm.id in arm_ids:
                where: RunWhere = {**parked.where, "startup_s": parked.startup_s, "repeat": parked.passes}
                await self.launcher.measurer.measure(arm, parked.server, self.launcher.prompts, emit, policy, where)

    async def _relaunch(
        self, scheduler: Scheduler, step: NextStep, level: LevelDecision, emit: Emit, policy: AdaptivePolicy | None
    ) -> tuple[float | None, HeldWave | None]:
        """The launches of each contender the step asks for (with more passes on each when within-run
        noise limits it and no server is up), as many rounds as the budget pays for; the last wave is
        held for the next look. Returns (the wall-clock seconds added or None to stop, the held wave)."""
        passes = min(MAX_PASSES, step.passes) if step.kind == "requests" else 1  # the passes the verdict priced (at most MAX_PASSES a look)
        # The launches the step asks for are measured before the next look (each look spends error:
        # one launch per look decided half as many replayed cases), as many as the budget still pays for.
        per_round = round_seconds(self.session.result_for, step.arm_ids, passes, len(self.launcher.slots))
        rounds = self.budget.affordable(per_round, step.amount) if step.kind == "launch" else 1
        if self.budget.refused(per_round * max(1, rounds), level, emit):
            return None, None
        what = f"{passes} passes over the prompts on " if passes > 1 else ""
        more = "one more launch" if rounds == 1 else f"{rounds} more launches"
        looks = self.session.settings.looks
        emit(MeasurementWarning(arm_id=None, message=f"look {looks}, concurrency {level.concurrency}: undecided; measuring {what}{more} of each contender"))
        before = wall_seconds(self.session)
        held: HeldWave | None = None
        try:
            for round_ in range(rounds):  # trial k of every contender before trial k+1 of any
                waves = scheduler.extra_launches(step.arm_ids, passes)
                for i, wave in enumerate(waves):
                    if round_ < rounds - 1 or i < len(waves) - 1:
                        await self.launcher.run_wave(wave, emit, policy)
                    else:  # the last wave before the look: its servers wait for it
                        held = await self.launcher.hold_wave(wave, emit, policy)
        except BaseException:
            if held is not None:
                await held.abort()
            raise
        return self.budget.added(before, level, emit), held
