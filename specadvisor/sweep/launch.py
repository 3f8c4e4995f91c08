"""Measuring a launch: one server started on its job's slot (GPUs or cores, its own port and log),
the prompts fitted to it once, every arm of its group measured on it, then stopped (or held up for
the look that follows, sweep/held.py). A wave's jobs start together and measure together
(sweep/wave_sync.py). A start that fails costs its arms, with the diagnosed cause; the sweep goes on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from specadvisor.analysis.arms import server_key
from specadvisor.domain import Arm, ServerLog, ServerReady, ServerStarting, Session, SweepEvent
from specadvisor.engine.caches import startup_cache
from specadvisor.errors import SpecAdvisorError
from specadvisor.sweep.held import HeldWave, Parked
from specadvisor.sweep.runs import RunWhere
from specadvisor.sweep.servers import Placement, RemoteServerHandle, ServerFactory, ServerHandle, stop_quietly
from specadvisor.sweep.wave_sync import Arrival, StartupLocks, WaveGate

if TYPE_CHECKING:
    from specadvisor.bench.prompts import PromptSet
    from specadvisor.sweep.adaptive import AdaptivePolicy
    from specadvisor.sweep.measuring import ArmMeasurer
    from specadvisor.sweep.monitor import Monitor
    from specadvisor.sweep.recorder import Recorder
    from specadvisor.sweep.scheduler import Job
    from specadvisor.sweep.slots import Slot
    from specadvisor.sweep.time_limit import TimeLimit

Emit = Callable[[SweepEvent], None]
_TAIL_FOR_CACHE = 2000  # log lines read for the compile-cache verdict (vLLM logs it during start-up)


class Launcher:
    """Runs the sweep's launches (waves of jobs) and counts them."""

    def __init__(
        self, session: Session, slots: list[Slot], factory: ServerFactory, monitor: Monitor, measurer: ArmMeasurer, recorder: Recorder, limit: TimeLimit
    ) -> None:
        self.session = session
        self.slots = slots
        self.factory = factory
        self.monitor = monitor
        self.measurer = measurer
        self.recorder = recorder
        self.limit = limit
        self.launches = 0
        self.prompts: PromptSet | None = None  # loaded when the run starts, fitted to the first ready server
        self._prompts_fitted = False
        self._ports: set[int | None] = set()
        self._startup_locks = StartupLocks()
        self._launched_keys: set[str] = set()

    async def run_wave(self, wave: list[Job], emit: Emit, policy: AdaptivePolicy | None) -> None:
        gate = WaveGate(len(wave))
        await asyncio.gather(*(self.run_job(job, emit, policy, gate) for job in wave))

    async def hold_wave(self, wave: list[Job], emit: Emit, policy: AdaptivePolicy | None) -> HeldWave:
        """Run a wave whose servers stay up once measured; returns when every job has parked its server
        (or ended). The caller closes (or, on an error, aborts) it."""
        gate, held = WaveGate(len(wave)), HeldWave(wave)
        held.start(self.run_job(job, emit, policy, gate, held) for job in wave)
        try:
            await held.ready()
        except BaseException:
            await held.abort()
            raise
        return held

    async def run_job(self, job: Job, emit: Emit, policy: AdaptivePolicy | None, gate: WaveGate | None = None, held: HeldWave | None = None) -> None:
        """One server launch on the job's slot: start, measure every arm of its group, stop. With
        `held`, the server stays up once measured until the wave is released."""
        try:
            async with (gate or WaveGate(1)).member() as arrival:
                await self._run_in_wave(job, emit, policy, arrival, held)
        finally:
            if held is not None:
                held.leave(job)

    async def _run_in_wave(self, job: Job, emit: Emit, policy: AdaptivePolicy | None, arrival: Arrival, held: HeldWave | None) -> None:
        where: RunWhere = {"trial": job.trial, "role": job.role, "wave": job.wave, "placement": job.slot.label if job.slot else ""}
        unfinished = list(job.group)  # arms of this launch whose run is not recorded yet
        try:
            await self._launch_and_measure(job, emit, policy, arrival, where, unfinished, held)
        except asyncio.CancelledError:
            if self.limit.fired:  # the server is stopped by now
                self.limit.stop_unfinished(unfinished, self.recorder, emit, where)
            raise

    async def _launch_and_measure(
        self, job: Job, emit: Emit, policy: AdaptivePolicy | None, arrival: Arrival, where: RunWhere, unfinished: list[Arm], held: HeldWave | None
    ) -> None:
        group, first, slot = job.group, job.group[0], job.slot
        try:
            await self.monitor.before_launch(first, emit, slot)
            server = self._make_server(first, slot, job)
        except SpecAdvisorError as err:
            unfinished.clear()
            for arm in group:
                self.recorder.fail(arm, err.one_line(), None, emit, where=where)
            return
        self.launches += 1
        server.subscribe(lambda line: emit(ServerLog(arm_id=first.id, line=line)))
        try:
            startup_s = await self._start(server, job, emit, where, unfinished)
            if startup_s is None:
                return
            await self._fit_prompts(server)
            await arrival.ready()  # the wave measures together
            for arm in group:
                try:
                    for repeat in range(1, job.passes + 1):  # more requests on the running server: no start-up to pay
                        run_where: RunWhere = {**where, "startup_s": startup_s}
                        if repeat > 1:
                            run_where["repeat"] = repeat
                        await self.measurer.measure(arm, server, self.prompts, emit, policy, run_where)
                except asyncio.CancelledError:
                    if self.limit.fired:  # its cut run is recorded (ArmMeasurer)
                        unfinished.remove(arm)
                    raise
                unfinished.remove(arm)
            if held is not None:  # up until the look that follows is done with it
                await held.park(Parked(job, server, where, startup_s, job.passes))
        finally:
            await asyncio.shield(stop_quietly(server))
            if slot is not None:
                self._ports.discard(server.port)

    async def _start(self, server: ServerHandle, job: Job, emit: Emit, where: RunWhere, unfinished: list[Arm]) -> float | None:
        """The server up (None: it failed to start, and its arms are recorded as failed)."""
        first, slot = job.group[0], job.slot
        try:
            async with self._startup_locks.hold(slot):  # servers sharing a GPU start one at a time
                await server.start()  # spawns the process: its exact command line is known from here
                self.monitor.launched(server, slot)
                emit(ServerStarting(arm_id=first.id, command=list(server.command)))
                startup_s = await server.wait_ready()
        except SpecAdvisorError as err:
            unfinished.clear()
            for arm in job.group:
                self.recorder.fail(arm, err.one_line(), server, emit, during_start=True, where=where)
            return None
        emit(ServerReady(arm_id=first.id, startup_s=startup_s, vllm_version=self.session.vllm_version))
        key = server_key(first)
        cache = startup_cache(server.tail(_TAIL_FOR_CACHE)) or ("warm" if key in self._launched_keys else "cold")
        self._launched_keys.add(key)
        remote_placement = server.placement if isinstance(server, RemoteServerHandle) else None
        where["startup_cache"], where["placement"] = cache, remote_placement or where["placement"]
        return startup_s

    def _make_server(self, arm: Arm, slot: Slot | None, job: Job) -> ServerHandle:
        """The factory's server; pinned to the slot (GPUs or cores, its own port and log) when the
        sweep runs more than one server at a time or repeats a configuration."""
        pinned = slot is not None and (slot.label or len(self.slots) > 1)
        if not pinned and job.role == "trial" and job.trial == 1:
            return self.factory(arm, self.session)
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
            return self.factory(arm, self.session, placement=placement)
        except TypeError as exc:  # a factory that knows no placement (tests, older callers)
            if "placement" not in str(exc):
                raise
            return self.factory(arm, self.session)

    async def _fit_prompts(self, server: ServerHandle) -> None:
        """Once, on the first ready server: drop prompts too long for max_model_len (vLLM would
        silently clamp their output and the arms would compare unequal work)."""
        settings = self.session.settings
        limit = settings.max_model_len or max_model_len_arg(settings.server_args)
        if self._prompts_fitted or limit is None or self.prompts is None:
            return
        from specadvisor.bench.prompts import fit_prompts

        self.prompts = await (server.fit_prompts if isinstance(server, RemoteServerHandle) else fit_prompts)(
            self.prompts,
            base_url=server.base_url,
            model_name=self.measurer.model_name,
            output_len=settings.output_len,
            max_model_len=limit,
            api_key=self.measurer.api_key(),
        )
        self._prompts_fitted = True


def max_model_len_arg(args: list[str]) -> int | None:
    for i, arg in enumerate(args):
        if arg.startswith("--max-model-len="):
            return int(arg.split("=", 1)[1])
        if arg == "--max-model-len" and i + 1 < len(args):
            return int(args[i + 1])
    return None
