"""The sweep runner: launches one server per configuration, measures its arms, persists as it goes.

One async event stream feeds every view (TUI, headless CLI, tests). The runner puts the jobs
together, each part in its own module: the scheduler decides the waves (sweep/scheduler.py), a
launch is started and measured by `Launcher` (sweep/launch.py, one arm's run by
sweep/measuring.py), servers are held up for the next look (sweep/held.py), sequential measuring
spends the budget (sweep/sequential.py, sweep/budget.py), the time limit cuts (sweep/time_limit.py),
and every result is stored as it comes by `Recorder` (sweep/recorder.py). The server factory, the
measure function, the prompt loader, the prefetch and the GPU monitor are injectable: they are the
process boundary.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

from specadvisor.analysis.arms import family_label
from specadvisor.analysis.recommend import recommend
from specadvisor.domain import Arm, ArmQueued, MeasurementWarning, Session, SweepEvent, SweepFinished
from specadvisor.errors import InputError
from specadvisor.provenance import mark_sweep_finished, mark_sweep_started
from specadvisor.store import Store
from specadvisor.sweep.adaptive import AdaptivePolicy
from specadvisor.sweep.budget import Budget, looks_taken
from specadvisor.sweep.held import HeldWave
from specadvisor.sweep.launch import Launcher
from specadvisor.sweep.measuring import ArmMeasurer, MeasureFn
from specadvisor.sweep.monitor import GpuMonitor, Monitor, NoMonitor
from specadvisor.sweep.plan import SweepPlan
from specadvisor.sweep.recorder import Recorder
from specadvisor.sweep.scheduler import DONE_STATUSES, Job, Scheduler
from specadvisor.sweep.sequential import MAX_PASSES, Sequential
from specadvisor.sweep.servers import AttachedServer, Placement, RemoteServerHandle, ServerFactory, ServerHandle, VllmServerFactory
from specadvisor.sweep.slots import Slot
from specadvisor.sweep.time_limit import TimeLimit
from specadvisor.trust import refuse_imported

if TYPE_CHECKING:
    from specadvisor.bench.prompts import PromptSet

# The handles and factories live in sweep/servers.py; named here too, where callers and tests find them.
__all__ = [
    "MAX_PASSES",
    "AttachedServer",
    "Placement",
    "RemoteServerHandle",
    "ServerFactory",
    "ServerHandle",
    "SweepRunner",
    "VllmServerFactory",
]

Emit = Callable[[SweepEvent], None]
PromptLoader = Callable[[Session], "PromptSet | Awaitable[PromptSet | None] | None"]
Prefetch = Callable[[Session, Emit], Awaitable[None]]


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
        prefetch: Prefetch | None = None,
        monitor: Monitor | None = None,
        started_at: float | None = None,  # time.monotonic() when the sweep began, if before the runner (the time limit counts from it)
    ):
        self.session = session = plan.session if isinstance(plan, SweepPlan) else plan
        refuse_imported(session)  # a bundle's engine command and server args are never run
        self.store = store
        self.adaptive = session.settings.adaptive if adaptive is None else adaptive
        self.slots = slots or [Slot(index=0)]
        session.settings = session.settings.replace(adaptive=self.adaptive, parallel=len(self.slots))
        self._server_factory = server_factory or _default_server_factory(server_env or {}, session)
        # GPU memory check before launches and telemetry per arm; fake servers get none unless a test passes one
        monitor = monitor or (GpuMonitor(session, server_env) if server_factory is None else NoMonitor())
        self._monitor = monitor
        # Checkpoints are fetched before the first launch where this process launches the servers.
        real_launch = server_factory is None and not session.settings.endpoint
        self._prefetch = prefetch or (_default_prefetch if real_launch else None)
        self._prompt_loader = prompt_loader or _default_prompt_loader
        self._recorder = recorder = Recorder(session, store)
        self._limit = limit = TimeLimit(started_at)
        measurer = ArmMeasurer(
            session, recorder, monitor, limit, measure or _default_measure, model_name=model_name, sample_interval_s=sample_interval_s, api_key_env=api_key_env
        )
        self._launcher = Launcher(session, self.slots, self._server_factory, monitor, measurer, recorder, limit)
        self._budget = Budget(session, limit)
        self._sequential = Sequential(session, recorder, self._launcher, self._budget)
        self._scheduler: Scheduler | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._cancel_requested = threading.Event()

    # ------------------------------------------------------------------ public

    @property
    def launches_used(self) -> int:
        return self._launcher.launches

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
            self._recorder.mark("interrupted")
            self._recorder.keep_unsaved_plan()
            self._recorder.record_stop(self._budget.stopped("cancelled"))
        except BaseException as exc:  # noqa: BLE001 - reaches the consumer as the same exception
            self._recorder.mark("interrupted")
            put(exc)
        finally:
            self._monitor.close()  # stops a sampler left running by a cancelled arm
            put(_DONE)

    async def _run(self, emit: Emit) -> None:
        session, limit, budget = self.session, self._limit, self._budget
        limit.start(session.settings.time_limit_s)  # counts from here (or an endpoint's identification): downloads included
        policy = AdaptivePolicy(session) if self.adaptive else None
        scheduler = self._scheduler = Scheduler(session, self.slots, policy)
        wave = scheduler.next_wave()
        # Prompts first: a bad prompt source is an input error that must not leave a "running" session.
        self._launcher.prompts = await _maybe_await(self._prompt_loader(session)) if wave else None
        if wave and self._prefetch is not None:  # a full disk is refused before anything is launched
            await self._prefetch(session, emit)
        mark_sweep_started(session)
        previous, session.provenance.stopped = session.provenance.stopped, None  # this run's own reason is recorded when it stops
        self._sequential.looks_before = looks_taken(previous)  # a resumed sequential sweep continues its plan of looks
        session.status = "running"
        self.store.save_session(session)
        done = {r.arm_id for r in session.results if r.status in DONE_STATUSES and not r.runs}
        for arm in session.arms:
            if arm.id not in done:
                emit(ArmQueued(arm=arm))
        await limit.run(self._launch(scheduler, wave, emit, policy), emit, lambda: self.store.save_session(session))  # what sequential measuring counted
        for group in scheduler.skipped:
            for arm in group:
                self._recorder.skip(arm, (policy.skip_reasons.get(arm.id) if policy else None) or "skipped by --adaptive: the leader was confirmed", emit)
        unlaunched = limit.record_unlaunched(session, self._recorder, emit) if limit.fired else 0
        if limit.fired:
            budget.stop = budget.stopped("time limit", arms_stopped=limit.arms_stopped, passes_cut=limit.passes_cut, unlaunched=unlaunched)
        session.provenance.stopped = budget.stop or budget.stopped("planned runs measured")
        rec = recommend(session)  # its verdict says why measuring stopped (analysis/stops.py)
        session.recommendation = rec
        self.store.set_recommendation(session.id, rec)
        mark_sweep_finished(session)
        self.store.set_provenance(session.id, session.provenance)
        self._recorder.mark("finished")
        emit(SweepFinished(recommendation=rec, launches_used=self.launches_used, launches_full_grid=self.launches_full_grid))

    async def _launch(self, scheduler: Scheduler, wave: list[Job] | None, emit: Emit, policy: AdaptivePolicy | None) -> None:
        """The plan's waves, then sequential measuring (`--budget`). Measuring sequentially, each wave's
        servers are held until the next wave is known (sweep/held.py): after the plan's last one the
        first look may ask for more requests on them."""
        sequential = self.session.settings.budget_s is not None
        launcher, held = self._launcher, cast("HeldWave | None", None)
        try:
            while wave:
                if len(wave) > 1 or (wave[0].slot and wave[0].slot.label):
                    placed = ", ".join(f"{_group_name(j.group)} on {(j.slot.label if j.slot else '') or 'host'}" for j in wave)
                    emit(MeasurementWarning(arm_id=None, message=f"wave {wave[0].wave}: {placed}"))
                if not sequential:
                    await launcher.run_wave(wave, emit, policy)
                    wave = scheduler.next_wave()
                    continue
                held = await launcher.hold_wave(wave, emit, policy)
                wave = scheduler.next_wave()  # the wave's results are recorded: its servers may still be up
                if wave:
                    await held.close()
                    held = None
            if sequential:
                held = await self._sequential.until_decided(scheduler, emit, policy, held)
        except BaseException:
            if held is not None:
                await held.abort()
            raise
        if held is not None:
            await held.close()


# ---------------------------------------------------------------------- defaults (real process boundary)


class _Done:
    pass


_DONE = _Done()


def _default_server_factory(env: dict[str, str], session: Session) -> ServerFactory:
    endpoint = session.settings.endpoint
    if endpoint:
        return lambda arm, s, placement=None: AttachedServer(endpoint)
    return VllmServerFactory(env=env)


async def _default_prefetch(session: Session, emit: Emit) -> None:
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


def _default_prompt_loader(session: Session) -> PromptSet:
    from specadvisor.bench.prompts import prompts_for

    prompts = prompts_for(session.settings)
    if session.settings.request_format == "auto":  # a plan that left it open records what its prompts were sent as
        session.settings = session.settings.replace(request_format=prompts.request_format)
    return prompts


async def _maybe_await(value: PromptSet | Awaitable[PromptSet | None] | None) -> PromptSet | None:
    if isinstance(value, Awaitable):
        return await value
    return value


def _group_name(group: list[Arm]) -> str:
    arm = group[0]
    return "baseline" if arm.is_baseline else f"{family_label(arm)} N={arm.n}"
