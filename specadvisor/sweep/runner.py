"""The sweep runner: launches one server per configuration, measures its arms, persists as it goes.

One async event stream feeds every view (TUI, headless CLI, tests). Each finished arm is committed
before the next starts, so a killed sweep resumes from the store; a failed arm is recorded with its
diagnosed cause and the sweep goes on; the server is stopped after its arm whatever happens.
The server factory and the measure function are injectable: they are the process boundary.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import math
import os
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from specadvisor.analysis.arms import family_label, server_key
from specadvisor.analysis.costs import passes_seconds, round_seconds
from specadvisor.analysis.decision import LevelDecision, NextStep, step_on_running_servers
from specadvisor.analysis.recommend import level_decisions, recommend
from specadvisor.domain import (
    Arm,
    ArmFailed,
    ArmFinished,
    ArmQueued,
    ArmResult,
    ArmStatus,
    MeasurementWarning,
    MetricsSample,
    MetricsSampled,
    Progress,
    ServerLog,
    ServerReady,
    ServerStarting,
    Session,
    SessionStatus,
    StopCode,
    SweepEvent,
    SweepFinished,
    SweepStop,
    utcnow,
)
from specadvisor.engine.caches import startup_cache
from specadvisor.engine.diagnose import Diagnosis
from specadvisor.errors import InputError, SpecAdvisorError
from specadvisor.figures import MAX_LOOKS, acceptance
from specadvisor.provenance import mark_sweep_finished, mark_sweep_started, serve_argv
from specadvisor.redact import remember_secret
from specadvisor.store import Store
from specadvisor.sweep.adaptive import AdaptivePolicy
from specadvisor.sweep.budget import wall_seconds
from specadvisor.sweep.held import HeldWave, Parked
from specadvisor.sweep.monitor import GpuMonitor, NoMonitor
from specadvisor.sweep.plan import SweepPlan
from specadvisor.sweep.runs import RunWhere, fold_startup, merge, run_name, run_record
from specadvisor.sweep.scheduler import DONE_STATUSES, Job, Scheduler
from specadvisor.sweep.slots import Slot
from specadvisor.sweep.stopping import CiTarget
from specadvisor.sweep.stopping import account_savings as _account_savings
from specadvisor.sweep.time_limit import STOPPED_RUN, Watchdog, limit_text, not_launched_reason, stopped_reason
from specadvisor.sweep.wave_sync import Arrival, StartupLocks, WaveGate
from specadvisor.trust import refuse_imported


@runtime_checkable
class ServerHandle(Protocol):
    """Everything the runner reads from a server (VllmServer, AttachedServer and the sweep's test
    fakes satisfy it; mypy checks the real ones)."""

    base_url: str
    command: list[str]  # the exact command line, known once `start` returned
    port: int | None  # the local port the runner reserved for it (None: not chosen by the runner)
    diagnosis: Diagnosis | None  # why it failed to start or died, once known

    @property
    def log_path(self) -> Path | None: ...  # the server's log file on this machine

    @property
    def running(self) -> bool: ...
    def subscribe(self, callback: Callable[[str], None]) -> None: ...
    def tail(self, n: int = 40) -> list[str]: ...
    async def start(self) -> None: ...
    async def wait_ready(self) -> float: ...
    async def stop(self) -> Any: ...


@runtime_checkable
class RemoteServerHandle(ServerHandle, Protocol):
    """A server on another machine (sweep.ray_cluster): the client runs beside it, so it brings its
    own `measure` and `fit_prompts`, and says where it landed."""

    placement: str

    def measure(self, **kwargs: Any) -> AsyncGenerator[SweepEvent, None]: ...
    async def fit_prompts(self, prompts: Any, **kwargs: Any) -> Any: ...


ServerFactory = Callable[..., ServerHandle]  # (arm, session) or (arm, session, placement=Placement)


@dataclass(frozen=True)
class Placement:
    """Where one launch runs: its slot (GPUs or cores), a port chosen by the runner (servers
    starting side by side must not race for one), and a log-name suffix (one log per launch)."""

    slot: Slot | None = None
    port: int | None = None
    log_suffix: str = ""


MeasureFn = Callable[..., AsyncGenerator[SweepEvent, None]]
Emit = Callable[[SweepEvent], None]
PromptLoader = Callable[[Session], Any]


class SweepRunner:
    """Run (or resume) a sweep. `events()` is the stream; `cancel()` may be called from any thread."""

    def __init__(
        self,
        plan: SweepPlan | Session,
        store: Store,
        *,
        server_factory: ServerFactory | None = None,
        measure: MeasureFn | None = None,
        prompt_loader: PromptLoader | None = None,
        adaptive: bool | None = None,
        api_key_env: str | None = None,
        server_env: dict[str, str] | None = None,
        sample_interval_s: float = 1.0,
        model_name: str | None = None,
        slots: list[Slot] | None = None,
        prefetch: Callable[..., Any] | None = None,
        monitor: Any = None,
        started_at: float | None = None,  # time.monotonic() when the sweep began, if before the runner (the time limit counts from it)
    ):
        self.session = plan.session if isinstance(plan, SweepPlan) else plan
        self._started_at = started_at
        refuse_imported(self.session)  # a bundle's engine command and server args are never run
        self.store = store
        self.adaptive = self.session.settings.adaptive if adaptive is None else adaptive
        self.session.settings = self.session.settings.replace(adaptive=self.adaptive)
        self._server_factory = server_factory or _default_server_factory(server_env or {}, self.session)
        # GPU memory check before launches and telemetry per arm; fake servers get none unless a test passes one
        self._monitor = monitor or (GpuMonitor(self.session, server_env) if server_factory is None else NoMonitor())
        self._measure = measure or _default_measure
        # Checkpoints are fetched before the first launch where this process launches the servers.
        real_launch = server_factory is None and not self.session.settings.endpoint
        self._prefetch = prefetch or (_default_prefetch if real_launch else None)
        self._launched_keys: set[str] = set()
        self._prompt_loader = prompt_loader or _default_prompt_loader
        self._api_key_env = api_key_env
        self._interval = sample_interval_s
        self._model_name = model_name
        self._launches = 0
        self.slots = slots or [Slot(index=0)]
        self.session.settings = self.session.settings.replace(parallel=len(self.slots))
        self._ports: set[int | None] = set()
        self._startup_locks = StartupLocks()
        self._scheduler: Scheduler | None = None
        self._prompts: Any = None
        self._prompts_fitted = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._cancel_requested = threading.Event()
        self._watchdog: Watchdog | None = None  # the sweep's hard time limit (settings.time_limit_s), once running
        self._stopped_at_limit = 0  # arms the limit cut before any measurement of theirs
        self._passes_cut = 0  # runs of already measured arms the limit cut mid-pass
        self._stop: SweepStop | None = None  # why sequential measuring stopped, once it has (analysis/stops.py words it)
        self._spent = 0.0  # of the budget (sequential measuring), wall-clock seconds
        self._looks_before = 0  # looks a resumed session took in its earlier runs

    # ------------------------------------------------------------------ public

    @property
    def launches_used(self) -> int:
        return self._launches

    @property
    def launches_full_grid(self) -> int:
        """Launches the plan needs run serially, one launch per configuration and trial (+ the bracket)."""
        return (self._scheduler or Scheduler(self.session, self.slots)).full_grid_launches()

    async def events(self) -> AsyncIterator[SweepEvent]:
        queue: asyncio.Queue[SweepEvent | BaseException | _Done] = asyncio.Queue()  # events, then a failure or the end
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.create_task(self._main(queue.put_nowait))
        if self._cancel_requested.is_set():
            self._task.cancel()
        try:
            while True:
                item = await queue.get()
                if isinstance(item, _Done):
                    break
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            if not self._task.done():
                self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    def cancel(self) -> None:
        """Stop the sweep: the current server is stopped and the session marked interrupted."""
        self._cancel_requested.set()
        if self._loop is not None and self._task is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._task.cancel)

    # ------------------------------------------------------------------ the work

    async def _main(self, put: Callable[[SweepEvent | BaseException | _Done], None]) -> None:
        def emit(event: SweepEvent) -> None:
            event.session_id = self.session.id
            put(event)

        try:
            await self._run(emit)
        except asyncio.CancelledError:
            self._mark("interrupted")
            self._keep_unsaved_plan()
            self._record_stop(self._stopped("cancelled"))
        except BaseException as exc:  # noqa: BLE001 - reaches the consumer as the same exception
            self._mark("interrupted")
            put(exc)
        finally:
            self._monitor.close()  # stops a sampler left running by a cancelled arm
            put(_DONE)

    async def _run(self, emit: Emit) -> None:
        session = self.session
        watchdog = self._watchdog = Watchdog(
            session.settings.time_limit_s, started_at=self._started_at
        )  # counts from here (or an endpoint's identification): downloads included
        policy = AdaptivePolicy(session) if self.adaptive else None
        scheduler = Scheduler(session, self.slots, policy)
        self._scheduler = scheduler
        wave = scheduler.next_wave()
        # Prompts first: a bad prompt source is an input error that must not leave a "running" session.
        self._prompts = await _maybe_await(self._prompt_loader(session)) if wave else None
        if wave and self._prefetch is not None:  # a full disk is refused before anything is launched
            await self._prefetch(session, emit)
        mark_sweep_started(session)
        previous, session.provenance.stopped = session.provenance.stopped, None  # this run's own reason is recorded when it stops
        self._looks_before = _looks_taken(previous)  # a resumed sequential sweep continues its plan of looks
        session.status = "running"
        self.store.save_session(session)
        done = {r.arm_id for r in session.results if r.status in DONE_STATUSES and not r.runs}
        for arm in session.arms:
            if arm.id not in done:
                emit(ArmQueued(arm=arm))
        await self._launch_within_limit(watchdog, scheduler, wave, emit, policy)
        for group in scheduler.skipped:
            for arm in group:
                self._skip(arm, (policy.skip_reasons.get(arm.id) if policy else None) or "skipped by --adaptive: the leader was confirmed", emit)
        unlaunched = self._record_unlaunched(watchdog, emit) if watchdog.fired else 0
        if watchdog.fired:
            self._stop = self._stopped("time limit", arms_stopped=self._stopped_at_limit, passes_cut=self._passes_cut, unlaunched=unlaunched)
        session.provenance.stopped = self._stop or self._stopped("planned runs measured")
        rec = recommend(session)  # its verdict says why measuring stopped (analysis/stops.py)
        session.recommendation = rec
        self.store.set_recommendation(session.id, rec)
        mark_sweep_finished(session)
        self.store.set_provenance(session.id, session.provenance)
        self._mark("finished")
        emit(SweepFinished(recommendation=rec, launches_used=self._launches, launches_full_grid=self.launches_full_grid))

    async def _launch_within_limit(self, watchdog: Watchdog, scheduler: Scheduler, wave: list[Job] | None, emit: Emit, policy: AdaptivePolicy | None) -> None:
        """Every launch of the sweep (the plan's waves, then sequential measuring), in one task the
        time limit cancels: the jobs in flight record their arms as stopped and stop their servers
        (`_run_job_in_wave`), and no wave starts after it. A user's cancel still propagates."""
        launching = asyncio.create_task(self._launch(scheduler, wave, emit, policy))
        limit = limit_text(watchdog.seconds) if watchdog.seconds is not None else ""
        watchdog.guard(launching, lambda: emit(MeasurementWarning(arm_id=None, message=f"time limit of {limit} reached: stopping the launches in flight")))
        try:
            await launching
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not watchdog.fired or (current is not None and current.cancelling()):
                raise
            self.store.save_session(self.session)  # what sequential measuring had counted (looks)
        finally:
            watchdog.close()
            if not launching.done():  # cancelled from outside while waiting: wait for its clean-up
                launching.cancel()
                await asyncio.gather(launching, return_exceptions=True)

    async def _launch(self, scheduler: Scheduler, wave: list[Job] | None, emit: Emit, policy: AdaptivePolicy | None) -> None:
        """The plan's waves, then sequential measuring (`--budget`). Measuring sequentially, each wave's
        servers are held until the next wave is known (sweep/held.py): after the plan's last one the
        first look may ask for more requests on them."""
        sequential = self.session.settings.budget_s is not None
        held: HeldWave | None = None
        try:
            while wave:
                if len(wave) > 1 or (wave[0].slot and wave[0].slot.label):
                    placed = ", ".join(f"{_group_name(j.group)} on {(j.slot.label if j.slot else '') or 'host'}" for j in wave)
                    emit(MeasurementWarning(arm_id=None, message=f"wave {wave[0].wave}: {placed}"))
                if not sequential:
                    await self._run_wave(wave, emit, policy)
                    wave = scheduler.next_wave()
                    continue
                held = await self._hold_wave(wave, emit, policy)
                wave = scheduler.next_wave()  # the wave's results are recorded: its servers may still be up
                if wave:
                    await held.close()
                    held = None
            if sequential:
                held = await self._measure_until_decided(scheduler, emit, policy, held)
        except BaseException:
            if held is not None:
                await held.abort()
            raise
        if held is not None:
            await held.close()

    async def _run_wave(self, wave: list[Job], emit: Emit, policy: AdaptivePolicy | None) -> None:
        gate = WaveGate(len(wave))
        await asyncio.gather(*(self._run_job(job, emit, policy, gate) for job in wave))

    async def _hold_wave(self, wave: list[Job], emit: Emit, policy: AdaptivePolicy | None) -> HeldWave:
        """Run a wave whose servers stay up once measured; returns when every job has parked its server
        (or ended). The caller closes (or, on an error, aborts) it."""
        gate, held = WaveGate(len(wave)), HeldWave(wave)
        held.start(self._run_job(job, emit, policy, gate, held) for job in wave)
        try:
            await held.ready()
        except BaseException:
            await held.abort()
            raise
        return held

    def _record_unlaunched(self, watchdog: Watchdog, emit: Emit) -> int:
        """The arms the time limit left without any run: recorded as skipped with the reason, so the
        stored session is complete (and is not resumed as unfinished)."""
        assert watchdog.seconds is not None
        reason = not_launched_reason(watchdog.seconds)
        left = [arm for arm in self.session.arms if self.session.result_for(arm.id) is None]
        for arm in left:
            self._skip(arm, reason, emit)
        return len(left)

    def _skip(self, arm: Arm, reason: str, emit: Emit) -> None:
        """An arm the sweep will not measure, stored as skipped with the one-line reason the user sees."""
        self._record(ArmResult(arm_id=arm.id, status=ArmStatus.skipped, warnings=[reason]), [])
        emit(MeasurementWarning(arm_id=arm.id, message=reason))

    async def _measure_until_decided(self, scheduler: Scheduler, emit: Emit, policy: AdaptivePolicy | None, held: HeldWave | None) -> HeldWave | None:
        """Sequential measuring (analysis.decision): look at the decision after each round; while a level
        is undecided and the budget (settings.budget_s of extra measuring, wall-clock: sweep/budget.py)
        allows, run the step it names in one block. Where the contenders' servers of the last wave are
        still up (`held`) and within-run noise limits it, the step is more passes over the prompts on
        those servers (`analysis.decision.step_on_running_servers`), measured in lockstep and looked at
        again with the servers still up; otherwise the launches of each contender it asks for (as many
        as the budget pays for, with more passes on each when within-run noise limits it), whose wave is
        held in turn. The looks follow a plan of at most MAX_LOOKS, each with its fixed share of the
        error (figures.alpha_for_look), however cheap the step before it: looking again does not inflate
        it. Returns the wave still held (the caller releases it)."""
        settings = self.session.settings
        budget = settings.budget_s or 0.0
        try:
            for look in itertools.count(self._looks_before + 1):  # a resumed session continues its plan of looks: their error is spent
                self.session.settings = settings = self.session.settings.replace(looks=look)
                open_ = [d for d in level_decisions(self.session, confidence=settings.confidence, looks=settings.looks) if d.decision == "undecided"]
                steps = [d for d in open_ if d.next_step is not None and d.next_step.arm_ids]
                if not steps:
                    self._stop = self._stopped("no deciding step" if open_ else "decided")
                    break
                if settings.looks >= MAX_LOOKS:
                    emit(MeasurementWarning(arm_id=None, message=f"the plan's {MAX_LOOKS} looks are taken: {steps[0].verdict}"))
                    self._stop = self._stopped("looks taken")
                    break
                level = min(steps, key=lambda d: d.next_step.seconds if d.next_step and d.next_step.seconds is not None else math.inf)
                step = level.next_step
                assert step is not None
                servers = held.serving(step.arm_ids) if held is not None else None
                if servers is not None:
                    step = step_on_running_servers(self.session, level, confidence=settings.confidence, looks=settings.looks) or step
                if step.kind == "requests" and held is not None and servers is not None:
                    added = await self._requests_on_running(held, servers, step, budget - self._spent, level, emit, policy)
                else:
                    if held is not None:  # a relaunch: the running servers stop first
                        await held.close()
                        held = None
                    added, held = await self._relaunch(scheduler, step, budget - self._spent, level, emit, policy)
                if added is None:
                    break
                self._spent += added
        except BaseException:
            if held is not None:
                await held.abort()
            raise
        self.store.save_session(self.session)
        return held

    def _stopped(self, code: StopCode, **figures: Any) -> SweepStop:
        """Why this run stopped measuring, with the figures behind it (domain.SweepStop)."""
        s = self.session.settings
        sequential = s.budget_s is not None
        return SweepStop(
            code=code,
            looks=s.looks if sequential else 0,
            budget_s=s.budget_s,
            spent_s=self._spent if sequential else None,
            time_limit_s=s.time_limit_s,
            **figures,
        )

    def _record_stop(self, stop: SweepStop) -> None:
        """A cancelled run stores why it stopped (its verdict, if any, is not recomputed)."""
        self.session.provenance.stopped = stop
        with contextlib.suppress(Exception):  # the store may be the reason it stopped; the cancel goes on
            self.store.set_provenance(self.session.id, self.session.provenance)

    def _affordable(self, cost: float, wanted: int, left: float) -> int:
        """How many of a step's units (passes or launch rounds) to measure before the next look: the
        plan's last look gets what the budget still pays for (no later look could use it); an earlier
        one at most half of it, so that a step sized on a few noisy launches leaves a last look to spend
        the rest on. 0: not even one fits the budget."""
        affordable = int(left // cost) if cost > 0 else 1
        if affordable < 1:
            return 0
        last = self.session.settings.looks + 1 == MAX_LOOKS
        return max(1, min(affordable if last else min(wanted, max(1, affordable // 2)), affordable))

    def _refused(self, estimate: float, left: float, level: LevelDecision, emit: Emit) -> bool:
        """A block the budget or the time limit cannot pay for is not started (the message says why)."""
        budget = self.session.settings.budget_s or 0.0
        if estimate > left:
            emit(MeasurementWarning(arm_id=None, message=f"measuring budget spent ({(budget - left) / 60:.1f} of {budget / 60:.1f} min): {level.verdict}"))
            self._stop = self._stopped("budget too small", step_s=estimate)
            return True
        limit = self._watchdog.seconds_left() if self._watchdog is not None else None
        if limit is not None and estimate > limit:  # a block the time limit would cut: not started
            emit(
                MeasurementWarning(
                    arm_id=None, message=f"the time limit leaves {limit / 60:.1f} min, the next round needs about {estimate / 60:.1f}: {level.verdict}"
                )
            )
            self._stop = self._stopped("step exceeds time left", step_s=estimate, time_left_s=limit)
            return True
        return False

    async def _requests_on_running(
        self, held: HeldWave, servers: list[Parked], step: NextStep, left: float, level: LevelDecision, emit: Emit, policy: AdaptivePolicy | None
    ) -> float | None:
        """More passes over the prompts on the contenders' running servers (no start-up), in lockstep:
        every server starts pass k together and serves the same prompts in the same order, so the
        arms stay paired by prompt and share the host's conditions. Returns the wall-clock seconds
        added, or None to stop measuring."""
        cost = passes_seconds(self.session.result_for, step.arm_ids, 1)
        passes = self._affordable(cost, max(1, step.passes), left)
        if self._refused(cost * max(1, passes), left, level, emit):
            return None
        emit(
            MeasurementWarning(
                arm_id=None,
                message=f"look {self.session.settings.looks}, concurrency {level.concurrency}: undecided; measuring "
                f"{passes} more pass{'es' if passes > 1 else ''} over the prompts on each contender's running server",
            )
        )
        before = wall_seconds(self.session)
        for _ in range(passes):
            await asyncio.gather(*(self._one_more_pass(p, step.arm_ids, emit, policy) for p in servers))
        return self._added(before, level, emit)

    async def _one_more_pass(self, parked: Parked, arm_ids: tuple[str, ...], emit: Emit, policy: AdaptivePolicy | None) -> None:
        parked.passes += 1
        for arm in parked.job.group:
            if arm.id in arm_ids:
                where: RunWhere = {**parked.where, "startup_s": parked.startup_s, "repeat": parked.passes}
                await self._measure_arm(arm, parked.server, self._prompts, emit, policy, where)

    async def _relaunch(
        self, scheduler: Scheduler, step: NextStep, left: float, level: LevelDecision, emit: Emit, policy: AdaptivePolicy | None
    ) -> tuple[float | None, HeldWave | None]:
        """The launches of each contender the step asks for (with more passes on each when within-run
        noise limits it and no server is up), as many rounds as the budget pays for; the last wave is
        held for the next look. Returns (the wall-clock seconds added or None to stop, the held wave)."""
        settings = self.session.settings
        passes = min(MAX_PASSES, step.passes) if step.kind == "requests" else 1  # the passes the verdict priced (at most MAX_PASSES a look)
        # The launches the step asks for are measured before the next look (each look spends error:
        # one launch per look decided half as many replayed cases), as many as the budget still pays for.
        per_round = round_seconds(self.session.result_for, step.arm_ids, passes, len(self.slots))
        rounds = self._affordable(per_round, step.amount, left) if step.kind == "launch" else 1
        if self._refused(per_round * max(1, rounds), left, level, emit):
            return None, None
        what = f"{passes} passes over the prompts on " if passes > 1 else ""
        more = "one more launch" if rounds == 1 else f"{rounds} more launches"
        emit(
            MeasurementWarning(
                arm_id=None, message=f"look {settings.looks}, concurrency {level.concurrency}: undecided; measuring {what}{more} of each contender"
            )
        )
        before = wall_seconds(self.session)
        held: HeldWave | None = None
        try:
            for round_ in range(rounds):  # trial k of every contender before trial k+1 of any
                waves = scheduler.extra_launches(step.arm_ids, passes)
                for i, wave in enumerate(waves):
                    if round_ < rounds - 1 or i < len(waves) - 1:
                        await self._run_wave(wave, emit, policy)
                    else:  # the last wave before the look: its servers wait for it
                        held = await self._hold_wave(wave, emit, policy)
        except BaseException:
            if held is not None:
                await held.abort()
            raise
        return self._added(before, level, emit), held

    def _added(self, before: float, level: LevelDecision, emit: Emit) -> float | None:
        added = wall_seconds(self.session) - before
        if added <= 0:  # the block measured nothing (its launches failed): more of the same will not decide it
            emit(MeasurementWarning(arm_id=None, message=f"the added launches measured nothing: stopping with {level.verdict}"))
            self._stop = self._stopped("measured nothing")
            return None
        return added

    async def _run_job(self, job: Job, emit: Emit, policy: AdaptivePolicy | None, gate: WaveGate | None = None, held: HeldWave | None = None) -> None:
        """One server launch on the job's slot: start, measure every arm of its group, stop. The
        wave's jobs start their measurements together (see sweep/wave_sync.py); with `held`, the
        server stays up once measured until the wave is released (sweep/held.py)."""
        try:
            async with (gate or WaveGate(1)).member() as arrival:
                await self._run_job_in_wave(job, emit, policy, arrival, held)
        finally:
            if held is not None:
                held.leave(job)

    async def _run_job_in_wave(self, job: Job, emit: Emit, policy: AdaptivePolicy | None, arrival: Arrival, held: HeldWave | None = None) -> None:
        where: RunWhere = {"trial": job.trial, "role": job.role, "wave": job.wave, "placement": job.slot.label if job.slot else ""}
        unfinished = list(job.group)  # arms of this launch whose run is not recorded yet
        try:
            await self._launch_and_measure(job, emit, policy, arrival, where, unfinished, held)
        except asyncio.CancelledError:
            watchdog = self._watchdog
            if watchdog is not None and watchdog.fired and watchdog.seconds is not None:  # the server is stopped by now
                for arm in unfinished:
                    self._stopped_at_limit += 1
                    self._fail(arm, stopped_reason(watchdog.seconds), None, emit, where=where)
            raise

    async def _launch_and_measure(
        self, job: Job, emit: Emit, policy: AdaptivePolicy | None, arrival: Arrival, where: RunWhere, unfinished: list[Arm], held: HeldWave | None = None
    ) -> None:
        group, first, slot = job.group, job.group[0], job.slot
        try:
            await self._monitor.before_launch(first, emit, slot)
            server = self._make_server(first, slot, job)
        except SpecAdvisorError as err:
            unfinished.clear()
            for arm in group:
                self._fail(arm, err.one_line(), None, emit, where=where)
            return
        self._launches += 1
        server.subscribe(lambda line: emit(ServerLog(arm_id=first.id, line=line)))
        try:
            try:
                async with self._startup_locks.hold(slot):  # servers sharing a GPU start one at a time
                    await server.start()  # spawns the process: its exact command line is known from here
                    self._monitor.launched(server, slot)
                    emit(ServerStarting(arm_id=first.id, command=list(server.command)))
                    startup_s = await server.wait_ready()
            except SpecAdvisorError as err:
                unfinished.clear()
                for arm in group:
                    self._fail(arm, err.one_line(), server, emit, during_start=True, where=where)
                return
            emit(ServerReady(arm_id=first.id, startup_s=startup_s, vllm_version=self.session.vllm_version))
            key = server_key(first)
            cache = startup_cache(server.tail(_TAIL_FOR_CACHE)) or ("warm" if key in self._launched_keys else "cold")
            self._launched_keys.add(key)
            remote_placement = server.placement if isinstance(server, RemoteServerHandle) else None
            where["startup_cache"], where["placement"] = cache, remote_placement or where["placement"]
            await self._fit_prompts(server, emit)
            await arrival.ready()  # the wave measures together
            for arm in group:
                try:
                    for repeat in range(1, job.passes + 1):  # more requests on the running server: no start-up to pay
                        run_where: RunWhere = {**where, "startup_s": startup_s}
                        if repeat > 1:
                            run_where["repeat"] = repeat
                        await self._measure_arm(arm, server, self._prompts, emit, policy, run_where)
                except asyncio.CancelledError:
                    if self._limit_fired():  # its cut run is recorded (_measure_arm)
                        unfinished.remove(arm)
                    raise
                unfinished.remove(arm)
            if held is not None:  # up until the look that follows is done with it
                await held.park(Parked(job, server, where, startup_s, job.passes))
        finally:
            await asyncio.shield(_stop_quietly(server))
            if slot is not None:
                self._ports.discard(server.port)

    def _make_server(self, arm: Arm, slot: Slot | None, job: Job) -> ServerHandle:
        """The factory's server; pinned to the slot (GPUs or cores, its own port and log) when the
        sweep runs more than one server at a time or repeats a configuration."""
        pinned = slot is not None and (slot.label or len(self.slots) > 1)
        if not pinned and job.role == "trial" and job.trial == 1:
            return self._server_factory(arm, self.session)
        port = None
        if pinned:
            from specadvisor.engine.ports import free_port

            port = free_port()
            while port in self._ports:
                port = free_port()
            self._ports.add(port)
        tag = job.role if job.role != "trial" else f"t{job.trial}"
        placement = Placement(slot=slot, port=port, log_suffix=f"-{tag}-w{job.wave}" if (job.trial > 1 or job.role != "trial" or pinned) else "")
        try:
            return self._server_factory(arm, self.session, placement=placement)
        except TypeError as exc:  # a factory that knows no placement (tests, older callers)
            if "placement" not in str(exc):
                raise
            return self._server_factory(arm, self.session)

    async def _measure_arm(self, arm: Arm, server: ServerHandle, prompts: Any, emit: Emit, policy: AdaptivePolicy | None, where: RunWhere) -> None:
        started = utcnow()
        sampler = self._monitor.watch(arm, server)
        samples: list[MetricsSample] = []
        result: ArmResult | None = None
        last_progress: Progress | None = None
        extra: dict[str, Any] = {}
        stop_rule = None
        if self.session.settings.ci_target:
            stop_rule = CiTarget(self.session.settings.ci_target, arm.concurrency)
            extra["stop"] = stop_rule
        stream = (server.measure if isinstance(server, RemoteServerHandle) else self._measure)(
            base_url=server.base_url,
            model_name=self._model_name or self.session.model,
            arm=arm,
            settings=self.session.settings.replace(trials=1),
            prompts=prompts,
            api_key=self._api_key(),
            sample_interval_s=self._interval,
            **extra,
        )
        try:
            async with contextlib.aclosing(stream):
                async for event in stream:
                    if isinstance(event, ArmFinished):
                        result = event.result
                        break
                    if isinstance(event, MetricsSampled):
                        samples.append(event.sample)
                    emit(event)
                    if isinstance(event, Progress):
                        last_progress = event
                        reason = policy.should_stop_early(arm, event) if policy and where.get("role") == "trial" else None
                        if reason:
                            result = _partial_result(arm, last_progress, samples, reason)
                            break
        except asyncio.CancelledError:
            if self._limit_fired():
                self._record_cut(arm, server, prompts, last_progress, started, where, emit)
            raise
        except Exception as err:  # noqa: BLE001 - a crash mid-arm (transport errors, engine errors) costs one arm
            result = ArmResult(arm_id=arm.id, status=ArmStatus.failed, error=_describe(err))
        if result is None:
            result = ArmResult(arm_id=arm.id, status=ArmStatus.failed, error="the measurement ended without a result")
        result.arm_id = arm.id
        result.serve_argv = serve_argv(server)
        self._monitor.finish(sampler, result, emit)
        result.started_at = result.started_at or started
        result.finished_at = result.finished_at or utcnow()
        if result.status == ArmStatus.stopped_early and result.duration_s is None:
            result.duration_s = (result.finished_at - result.started_at).total_seconds()
        if result.status == ArmStatus.failed:
            self._explain_failure(result, server)
        record = run_record(result, **where)
        _account_savings(record, result, prompts, last_progress, stop_rule)
        merged = merge(self.session.result_for(arm.id), result, record)
        self._record(merged, samples)
        emit(ArmFailed(result=merged) if merged.status == ArmStatus.failed else ArmFinished(result=merged))

    def _limit_fired(self) -> bool:
        return self._watchdog is not None and self._watchdog.fired and self._watchdog.seconds is not None

    def _record_cut(self, arm: Arm, server: ServerHandle, prompts: Any, progress: Progress | None, started: datetime, where: RunWhere, emit: Emit) -> None:
        """A run the time limit cut mid-pass (a planned launch's, or one more pass on a running server):
        stored as a stopped run with the requests it completed and the time it took (spent, so the
        budget counts it), the reason in the arm's warnings. Its throughput is left out (None), so no
        figure counts a partial pass as a full one: it served only the prompts it reached, and the
        measurement hands over per-request records only at a pass's end (time_limit.stopped_reason)."""
        assert self._watchdog is not None and self._watchdog.seconds is not None
        done, total = (progress.completed, progress.total) if progress is not None else (0, 0)
        planned = len(getattr(prompts, "prompts", None) or []) or total
        finished = utcnow()
        reason = stopped_reason(self._watchdog.seconds, done, planned)
        result = ArmResult(arm_id=arm.id, status=ArmStatus.failed, started_at=started, finished_at=finished, error=reason)
        result.serve_argv = serve_argv(server)
        record = run_record(result, **where)
        record.status, record.completed, record.planned = STOPPED_RUN, done, planned
        record.duration_s = (finished - started).total_seconds()
        merged = merge(self.session.result_for(arm.id), result, record)
        self._record(merged, [])
        if merged.status == ArmStatus.failed:
            self._stopped_at_limit += 1
            emit(ArmFailed(result=merged))
        else:
            self._passes_cut += 1
            emit(MeasurementWarning(arm_id=arm.id, message=f"{run_name(record)}: {reason}"))

    async def _fit_prompts(self, server: ServerHandle, emit: Emit) -> None:
        """Once, on the first ready server: drop prompts too long for max_model_len (vLLM would
        silently clamp their output and the arms would compare unequal work)."""
        limit = self.session.settings.max_model_len or _max_model_len_arg(self.session.settings.server_args)
        if self._prompts_fitted or limit is None or self._prompts is None:
            return
        from specadvisor.bench.prompts import fit_prompts

        self._prompts = await (server.fit_prompts if isinstance(server, RemoteServerHandle) else fit_prompts)(
            self._prompts,
            base_url=server.base_url,
            model_name=self._model_name or self.session.model,
            output_len=self.session.settings.output_len,
            max_model_len=limit,
            api_key=self._api_key(),
        )
        self._prompts_fitted = True

    # ------------------------------------------------------------------ bookkeeping

    def _fail(self, arm: Arm, cause: str, server: ServerHandle | None, emit: Emit, *, during_start: bool = False, where: RunWhere | None = None) -> None:
        result = ArmResult(arm_id=arm.id, status=ArmStatus.failed, started_at=utcnow(), finished_at=utcnow(), error=cause)
        result.serve_argv = serve_argv(server)
        self._explain_failure(result, server, during_start=during_start)
        merged = merge(self.session.result_for(arm.id), result, run_record(result, **(where or {})))
        self._record(merged, [])
        emit(
            ArmFailed(result=merged)
            if merged.status == ArmStatus.failed
            else MeasurementWarning(arm_id=arm.id, message=f"{where.get('role', 'run') if where else 'run'} failed: {cause}")
        )

    def _explain_failure(self, result: ArmResult, server: ServerHandle | None, *, during_start: bool = False) -> None:
        if server is None:
            return
        diagnosis = server.diagnosis
        if diagnosis is not None and diagnosis.cause and diagnosis.cause not in (result.error or ""):
            result.error = f"{diagnosis.cause} ({diagnosis.hint})" if diagnosis.hint else diagnosis.cause
        elif not server.running and not during_start and "exited" not in (result.error or ""):
            result.error = f"the vLLM server exited mid-arm: {result.error}"
        tail = server.tail(20)
        if tail and not result.error_excerpt:
            result.error_excerpt = "\n".join(tail)
        result.log_path = result.log_path or _log_path(server)

    def _record(self, result: ArmResult, samples: list[MetricsSample]) -> None:
        """Commit one arm's result (and its live samples) before anything else happens."""
        session = self.session
        fold_startup(result)
        session.results = [r for r in session.results if r.arm_id != result.arm_id] + [result]
        if result.vllm_version and not session.vllm_version:
            session.vllm_version = result.vllm_version
            self.store.save_session(session)
        self.store.save_arm_result(session.id, result)
        if samples:
            session.samples.extend(samples)
            self.store.add_samples(session.id, samples)

    def _keep_unsaved_plan(self) -> None:
        """Quit during the checks before the first launch: the plan is stored as interrupted (nothing
        measured, resumable from Sessions) instead of being lost with the window."""
        if self.store.has_session(self.session.id):  # saved before the first launch, or resumed
            return
        with contextlib.suppress(SpecAdvisorError):
            self.store.save_session(self.session)

    def _mark(self, status: SessionStatus) -> None:
        self.session.status = status
        with contextlib.suppress(SpecAdvisorError):
            self.store.set_status(self.session.id, status)

    def _api_key(self) -> str | None:
        if not self._api_key_env:
            return None
        key = os.environ.get(self._api_key_env)
        if not key:
            raise InputError(f"environment variable {self._api_key_env} is not set", hint="export it or drop --api-key-env")
        remember_secret(key)  # an endpoint may echo it in an error body: removed wherever it reappears
        return key


MAX_PASSES = 8  # passes over the prompts on one launch in one round of sequential measuring


# ---------------------------------------------------------------------- defaults (real process boundary)


class _Done:
    pass


_TAIL_FOR_CACHE = 2000  # log lines read for the compile-cache verdict (vLLM logs it during start-up)


_DONE = _Done()


def _default_server_factory(env: dict[str, str], session: Session) -> ServerFactory:
    if session.settings.endpoint:
        return lambda arm, s, placement=None: AttachedServer(s.settings.endpoint)
    return VllmServerFactory(env=env)


class VllmServerFactory:
    """Builds a real `vllm serve` launch for an arm (engine command, server args, a log file per arm)."""

    def __init__(self, env: dict[str, str] | None = None, ready_timeout_s: float = 1200):
        self.env = dict(env or {})
        self.ready_timeout_s = ready_timeout_s

    def __call__(self, arm: Arm, session: Session, placement: Placement | None = None) -> ServerHandle:
        from specadvisor.engine.server import VllmServer
        from specadvisor.engine.spec import ServerSpec
        from specadvisor.settings import paths

        log_dir = paths().logs / session.id
        log_dir.mkdir(parents=True, exist_ok=True)
        slot = placement.slot if placement else None
        spec_kwargs: dict[str, Any] = dict(
            model=session.model,
            speculative_config=arm.speculative_config,
            extra_args=[*session.settings.server_args, *arm.server_args],
            env={**self.env, **(slot.server_env() if slot else {})},
            ready_timeout_s=self.ready_timeout_s,
            log_path=log_dir / f"{arm.id}{placement.log_suffix if placement else ''}.log",
            port=placement.port if placement else None,
            gpu_ids=slot.gpu_ids if slot else None,
        )
        if session.settings.engine_cmd:
            spec_kwargs["engine_cmd"] = list(session.settings.engine_cmd)
        return VllmServer(ServerSpec(**spec_kwargs))


class AttachedServer:
    """A server someone else runs (--endpoint): nothing is launched or stopped."""

    def __init__(self, url: str):
        self.base_url = url.rstrip("/")
        self.command: list[str] = []
        self.running = True
        self.port: int | None = None
        self.diagnosis: Diagnosis | None = None
        self.log_path: Path | None = None  # its log is the operator's, not ours

    def subscribe(self, callback: Callable[[str], None]) -> None:
        return None

    def tail(self, n: int = 40) -> list[str]:
        return []

    async def start(self) -> None:
        return None

    async def wait_ready(self) -> float:
        import httpx

        from specadvisor.errors import EngineError

        try:
            # A total deadline, and the body is not read: a /health that never ends is no answer.
            async with asyncio.timeout(30.0), httpx.AsyncClient(timeout=10.0) as client, client.stream("GET", self.base_url + "/health") as response:
                status = response.status_code
        except (httpx.HTTPError, TimeoutError) as exc:
            raise EngineError(f"cannot reach {self.base_url}: {type(exc).__name__}", hint="check --endpoint and that the server is up") from exc
        if status != 200:
            raise EngineError(f"{self.base_url}/health answered HTTP {status}", hint="wait until the server is ready")
        return 0.0

    async def stop(self) -> None:
        return None


async def _default_prefetch(session: Session, emit: Callable[[SweepEvent], None]) -> None:
    from specadvisor.engine.dry_check import preflight
    from specadvisor.modelinfo.fetch import checkpoints, prefetch

    # The engine's own SpeculativeConfig checks every arm first: seconds, where vLLM refuses a bad
    # config only after its start-up.
    configs = {arm.id: arm.speculative_config for arm in session.arms if arm.speculative_config}
    problem = await asyncio.to_thread(preflight, session.settings.engine_cmd, configs)
    if problem:
        raise InputError(problem, hint="fix the arm's speculative config; vLLM would refuse it after start-up")
    await prefetch(checkpoints(session), emit)


async def _default_measure(**kwargs: Any) -> AsyncGenerator[SweepEvent, None]:
    from specadvisor.bench.measure import measure_arm

    async for event in measure_arm(**kwargs):
        yield event


def _looks_taken(previous: SweepStop | None) -> int:
    """Looks at the decision a resumed session's earlier run took whose error is spent. A run that
    stopped at a look stopped on the data that look saw: the resumed run takes that same look again
    (the step it names is measured next), not a new one; a run cut mid-measuring (time limit, cancel)
    may have measured after its last look, so the resumed run's first look is a new one."""
    if previous is None or not previous.looks:
        return 0
    return previous.looks if previous.code in ("time limit", "cancelled") else previous.looks - 1


def _default_prompt_loader(session: Session) -> Any:
    from specadvisor.bench.prompts import prompts_for

    prompts = prompts_for(session.settings)
    if session.settings.request_format == "auto":  # a plan that left it open records what its prompts were sent as
        session.settings = session.settings.replace(request_format=prompts.request_format)
    return prompts


async def _maybe_await(value: Any) -> Any:
    if asyncio.iscoroutine(value):
        return await value
    return value


async def _stop_quietly(server: ServerHandle) -> None:
    with contextlib.suppress(Exception):
        await server.stop()


def _partial_result(arm: Arm, progress: Progress, samples: list[MetricsSample], reason: str) -> ArmResult:
    """What an arm stopped early showed so far: its running throughput and acceptance from /metrics."""
    result = ArmResult(
        arm_id=arm.id,
        status=ArmStatus.stopped_early,
        completed=progress.completed,
        output_throughput=progress.output_throughput,
        warnings=[reason],
    )
    last = samples[-1] if samples else None
    if last is not None and last.num_drafts > 0:
        acceptance(last.num_drafts, last.num_draft_tokens, last.num_accepted_tokens, last.accepted_per_position).apply_to(result)
    return result


def _group_name(group: list[Arm]) -> str:
    arm = group[0]
    return "baseline" if arm.is_baseline else f"{family_label(arm)} N={arm.n}"


def _max_model_len_arg(args: list[str]) -> int | None:
    for i, arg in enumerate(args):
        if arg.startswith("--max-model-len="):
            return int(arg.split("=", 1)[1])
        if arg == "--max-model-len" and i + 1 < len(args):
            return int(args[i + 1])
    return None


def _describe(err: BaseException) -> str:
    """One line in our words: an exception's own text may carry what a hostile endpoint sent."""
    if isinstance(err, SpecAdvisorError):
        return err.one_line()
    import httpx

    if isinstance(err, (httpx.HTTPError, OSError)):
        return f"the connection to the server failed mid-arm ({type(err).__name__})"
    return f"the measurement stopped on an unexpected {type(err).__name__} (a specadvisor bug: please report it with the server log)"


def _log_path(server: ServerHandle) -> str | None:
    return str(server.log_path) if server.log_path else None
