"""Which server configuration runs where and when: one scheduler for serial and parallel sweeps.

Work comes in waves. A wave is up to one job per slot, started together and finished together, so
that the arms of a wave are measured under the same host conditions; a serial sweep is the 1-slot
case (a wave is one job). A job is one server launch for one configuration (its concurrency levels
share the server) and one trial.

- Trials interleave: trial k of every configuration runs before trial k+1 of any, so a slow change
  of the machine spreads over all arms instead of landing on one (AIPerf interleaves for the same
  reason). A trial is a fresh server launch, not a second pass on a warm server: start-up state
  (CUDA graphs, allocator layout, a co-tenant's load) is part of what a repeat run would see, and
  the interleaving needs the servers of other arms to run in between anyway.
- With three or more slots the baseline runs in every wave beside the arms it is compared with (a
  per-wave reference for drift). With two it joins a wave only where a slot is free: a baseline in
  every wave would halve the sweep's speed, and the confirmation wave measures the leaders beside it.
- At the end the baseline is measured again (bracketing) so that drift can be measured; with two or
  more slots that last wave also re-measures the top candidates beside it (the confirmation wave).
- The slots rotate from wave to wave (`rotated`): an arm does not keep one GPU or core range, whose
  own speed would otherwise read as the arm's.
- With --adaptive the policy chooses which configurations trial 1 launches and skips the rest.
"""

from __future__ import annotations

from dataclasses import dataclass

from specadvisor.analysis.arms import server_key
from specadvisor.domain import Arm, ArmStatus, RunRole, Session
from specadvisor.sweep.adaptive import AdaptivePolicy
from specadvisor.sweep.slots import Slot

DONE_STATUSES = {ArmStatus.ok, ArmStatus.stopped_early, ArmStatus.skipped}
CONFIRM_REACH = 0.10  # the confirmation wave re-measures candidates within 10% of the best one


@dataclass
class Job:
    group: list[Arm]  # arms sharing one server (they differ only in client concurrency)
    trial: int
    role: RunRole
    wave: int = 0
    slot: Slot | None = None
    passes: int = 1  # passes over the prompts on this launch (sequential measuring adds requests this way)

    @property
    def is_baseline(self) -> bool:
        return self.group[0].is_baseline


class Scheduler:
    def __init__(self, session: Session, slots: list[Slot], policy: AdaptivePolicy | None = None):
        self.session = session
        self.slots = slots or [Slot(index=0)]
        self.policy = policy
        self.trials = max(1, session.settings.trials)
        self.groups = _groups(session)
        self.attempted: set[tuple[str, int]] = set()
        self.skipped: list[list[Arm]] = []
        self.wave = _last_wave(session)
        self._adaptive_done = policy is None
        self._final_done = False
        self._measured_this_sweep = False

    # ------------------------------------------------------------------ public

    def full_grid_launches(self) -> int:
        """Launches of the whole plan run serially: every configuration once per trial, plus the bracket."""
        count = len(self.groups) * self.trials
        return count + (1 if self._brackets() else 0)

    def next_wave(self) -> list[Job] | None:
        """The next wave of jobs (each with its slot), or None when the sweep is done."""
        for trial in range(1, self.trials + 1):
            todo = self._todo(trial)
            if todo:
                return self._form(todo, trial)
        return self._final()

    def extra_launches(self, arm_ids: set[str] | tuple[str, ...], passes: int = 1) -> list[list[Job]]:
        """Waves for one more launch of each configuration that holds one of `arm_ids` (sequential
        measuring, analysis.decision), each measuring `passes` passes over the prompts."""
        groups = [g for g in self.groups if any(a.id in arm_ids for a in g)]
        # The least recently launched first: after the baseline's bracket the arms go first, so the
        # launch order stays balanced (A B A | B A B A ...) and a drift over it cancels from the
        # comparison instead of being fitted at the price of a wider interval.
        groups.sort(key=lambda g: _group_last_wave(self.session, g))
        jobs = [Job(g, _last_trial(self.session, g) + 1, "trial", passes=passes) for g in groups]
        return [self._place(jobs[i : i + len(self.slots)]) for i in range(0, len(jobs), len(self.slots))]

    # ------------------------------------------------------------------ trials

    def _todo(self, trial: int) -> list[list[Arm]]:
        out = []
        for g in self.groups:
            key = server_key(g[0])
            if (key, trial) in self.attempted or g in self.skipped:
                continue
            if _trials_done(self.session, g) >= trial or _finished_untrialed(self.session, g, trial):
                continue
            if trial > 1 and not _measured(self.session, g):
                continue  # trial 1 failed or was skipped: nothing to repeat
            out.append(g)
        return out

    def _form(self, todo: list[list[Arm]], trial: int) -> list[Job] | None:
        capacity = len(self.slots)
        picked: list[list[Arm]] = []
        policy = self.policy
        if trial == 1 and not self._adaptive_done and policy is not None:  # (not done: there is a policy)
            remaining = list(todo)
            while remaining and len(picked) < capacity:
                group = policy.next_group(remaining, picked)
                if group is None:
                    break
                remaining.remove(group)
                picked.append(group)
            if not picked:  # the policy confirmed its leader: the rest of trial 1 is skipped
                self._adaptive_done = True
                self.skipped.extend(todo)
                return self.next_wave()
        else:
            picked = todo[:capacity]
        base = self._baseline_group()
        companion = capacity >= 3 or (capacity == 2 and len(picked) < capacity)
        if companion and base is not None and not any(g[0].is_baseline for g in picked) and _measured(self.session, base):
            if len(picked) >= capacity:
                picked = picked[: capacity - 1]
            jobs = [Job(base, trial, "bracket")] + [Job(g, trial, "trial") for g in picked]
        else:
            jobs = [Job(g, trial, "trial") for g in picked]
        for job in jobs:
            if job.role == "trial":
                self.attempted.add((server_key(job.group[0]), trial))
        if capacity >= 2 and len(jobs) < capacity and any(j.is_baseline for j in jobs):
            # free slots cost no wall time: re-measure the leaders beside the baseline now
            in_wave = {server_key(j.group[0]) for j in jobs}
            for group in self._top_candidates(capacity - 1):
                if len(jobs) < capacity and server_key(group[0]) not in in_wave:
                    jobs.append(Job(group, trial, "confirm"))
        return self._place(jobs)

    # ------------------------------------------------------------------ bracket / confirmation

    def _brackets(self) -> bool:
        return bool(self.session.settings.bracket and self._baseline_group() is not None and len(self.groups) > 1)

    def _final(self) -> list[Job] | None:
        if self._final_done or not self._brackets() or not self._measured_this_sweep:
            return None
        self._final_done = True
        base = self._baseline_group()
        if base is None or not _measured(self.session, base):
            return None
        jobs = [Job(base, self.trials, "bracket")]
        if len(self.slots) >= 2:
            top = self._top_candidates(len(self.slots) - 1)
            if top and all(_confirmed(self.session, g) for g in top) and self._baseline_in_last_wave():
                return None  # the leaders were already re-measured beside the baseline, which closed the sweep
            for group in top:
                jobs.append(Job(group, self.trials, "confirm"))
            if len(jobs) > 1:
                jobs[0].role = "confirm"
        return self._place(jobs)

    def _baseline_in_last_wave(self) -> bool:
        base = self._baseline_group()
        result = self.session.result_for(base[0].id) if base else None
        return result is not None and any(r.wave == self.wave and r.status == "ok" for r in result.runs)

    def _top_candidates(self, k: int) -> list[list[Arm]]:
        def best(group: list[Arm]) -> float:
            values = [r.output_throughput for a in group if (r := self.session.result_for(a.id)) and r.status == ArmStatus.ok and r.output_throughput]
            return max(values) if values else 0.0

        ranked = sorted((g for g in self.groups if not g[0].is_baseline and best(g) > 0), key=best, reverse=True)
        if not ranked:
            return []
        reach = best(ranked[0]) * (1 - CONFIRM_REACH)
        return [g for g in ranked if best(g) >= reach][:k]

    # ------------------------------------------------------------------ helpers

    def _place(self, jobs: list[Job]) -> list[Job]:
        self.wave += 1
        self._measured_this_sweep = True
        for job, slot in zip(jobs, rotated(self.slots, self.wave), strict=False):  # fewer jobs than slots in the last wave
            job.wave, job.slot = self.wave, slot
        return jobs

    def _baseline_group(self) -> list[Arm] | None:
        return next((g for g in self.groups if g[0].is_baseline), None)


def rotated(slots: list[Slot], wave: int) -> list[Slot]:
    """The slots in the order wave `wave` fills them: each wave starts one slot further on, so that
    a configuration does not keep its slot from wave to wave. Filled in the same order every time,
    the baseline (always first) ran on the first slot in every wave, and a slot's own speed became
    the arm's: on the 2-core CPU box the first core also carried the client and both API servers,
    and its baseline slowed from 32 to 50 ms per token in 4 of 8 waves while the n-gram arm's core
    did not, read as a 1.15x gain for an arm that tied wave by wave where the core was free.
    Rotated, each arm meets every slot in turn (a crossover over slots) and a slot's speed is
    launch-to-launch spread that the repeats measure, not a bias."""
    shift = (wave - 1) % len(slots) if slots else 0
    return slots[shift:] + slots[:shift]


def _groups(session: Session) -> list[list[Arm]]:
    """Server configurations in plan order, baseline first."""
    groups: dict[str, list[Arm]] = {}
    for arm in sorted(session.arms, key=lambda a: not a.is_baseline):
        groups.setdefault(server_key(arm), []).append(arm)
    return list(groups.values())


def _trials_done(session: Session, group: list[Arm]) -> int:
    result = session.result_for(group[0].id)
    if result is None:
        return 0
    return sum(1 for r in result.runs if r.role == "trial" and r.status in ("ok", "stopped_early"))


def _group_last_wave(session: Session, group: list[Arm]) -> int:
    """The wave of the group's latest launch (0: none, or launched before waves were recorded)."""
    result = session.result_for(group[0].id)
    return max((r.wave or 0 for r in result.runs), default=0) if result else 0


def _last_trial(session: Session, group: list[Arm]) -> int:
    result = session.result_for(group[0].id)
    return max((r.trial for r in result.runs if r.role == "trial"), default=0) if result else 0


def _finished_untrialed(session: Session, group: list[Arm], trial: int) -> bool:
    """A result from before runs were recorded (or imported, or skipped/stopped) counts as done."""
    found = [session.result_for(a.id) for a in group]
    results = [r for r in found if r is not None]
    if len(results) < len(found):
        return False
    if all(r.status == ArmStatus.skipped for r in results):
        return True
    if all(r.status == ArmStatus.stopped_early for r in results):
        return True  # clearly beaten: no further trials
    return all(r.status in DONE_STATUSES and not r.runs for r in results)


def _measured(session: Session, group: list[Arm] | None) -> bool:
    if group is None:
        return False
    return any((r := session.result_for(a.id)) is not None and r.status in (ArmStatus.ok, ArmStatus.stopped_early) for a in group)


def _confirmed(session: Session, group: list[Arm]) -> bool:
    result = session.result_for(group[0].id)
    return result is not None and any(r.role == "confirm" and r.status == "ok" for r in result.runs)


def _last_wave(session: Session) -> int:
    waves = [run.wave for r in session.results for run in r.runs if run.wave is not None]
    return max(waves, default=0)
