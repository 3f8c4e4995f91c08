"""The runner's GPU hook: room on the arm's GPUs before a launch, telemetry while each arm runs.

SweepRunner calls four methods (before_launch, launched, watch, finish) and knows nothing else
about GPUs; tests inject a fake reader at the NVML boundary. Without a GPU (the CPU engine, a
laptop) the reader is None and every method returns at once.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from specadvisor.domain import Arm, ArmResult, GpuMemoryWait, GpuTelemetry, MeasurementWarning, Session
from specadvisor.errors import EngineError
from specadvisor.telemetry.gpus import open_reader, visible_to_physical
from specadvisor.telemetry.memory import MemoryCheck, is_ours, need_per_gpu, wait_for_memory
from specadvisor.telemetry.sampler import ArmSampler, ArmTelemetry

if TYPE_CHECKING:
    from specadvisor.sweep.servers import ServerHandle
    from specadvisor.sweep.slots import Slot

_WORLD_FLAGS = {
    "--tensor-parallel-size": "tp", "-tp": "tp",
    "--pipeline-parallel-size": "pp", "-pp": "pp",
    "--data-parallel-size": "dp", "-dp": "dp",
}  # fmt: skip


def server_flag(args: list[str], names: tuple[str, ...]) -> str | None:
    """The value of the last of `names` in a vllm serve argv (`--flag V` or `--flag=V`)."""
    found = None
    for i, arg in enumerate(args):
        for name in names:
            if arg == name and i + 1 < len(args):
                found = args[i + 1]
            elif arg.startswith(name + "="):
                found = arg.split("=", 1)[1]
    return found


def world_size(args: list[str]) -> int:
    """GPUs one server uses: tensor x pipeline x data parallel sizes."""
    sizes = {"tp": 1, "pp": 1, "dp": 1}
    for flag, key in _WORLD_FLAGS.items():
        value = server_flag(args, (flag,))
        if value and value.isdigit():
            sizes[key] = int(value)
    return sizes["tp"] * sizes["pp"] * sizes["dp"]


def to_domain(record: ArmTelemetry, result: ArmResult) -> GpuTelemetry:
    """The one boundary where the sampler's record becomes the stored telemetry (its readings are
    `machine`'s plain dataclasses, shared as they are: no pydantic on a bare GPU box)."""
    return GpuTelemetry(
        source=record.source,
        gpus=record.gpus,
        interval_s=record.interval_s,
        start=list(record.start),
        end=list(record.end),
        samples=list(record.samples),
        energy_j=record.energy_j,
        mean_power_w=round(record.mean_power_w, 2) if record.mean_power_w is not None else None,
        energy_per_output_token_j=record.energy_per_token_j(result.output_tokens, result.duration_s),
        warnings=list(record.warnings),
    )


class Monitor(Protocol):
    """What the runner asks of a GPU hook (GpuMonitor, NoMonitor, a test's)."""

    async def before_launch(self, arm: Arm, emit: Callable[[Any], None], slot: Slot | None = None) -> None: ...
    def launched(self, server: ServerHandle, slot: Slot | None = None) -> None: ...
    def watch(self, arm: Arm, server: ServerHandle | None = None) -> ArmSampler | None: ...
    def finish(self, sampler: ArmSampler | None, result: ArmResult, emit: Callable[[Any], None]) -> None: ...
    def close(self) -> None: ...


class GpuMonitor:
    def __init__(
        self,
        session: Session,
        server_env: dict[str, str] | None = None,
        *,
        reader_factory: Callable[[], Any] = open_reader,
        interval_s: float = 1.0,
        memory_timeout_s: float = 120.0,
        foreign_grace_s: float = 10.0,
        poll_s: float = 1.0,
    ):
        self.session = session
        self.env = {**os.environ, **(server_env or {})}
        self._factory = reader_factory
        self._reader: Any = None
        self._opened = False
        self.interval_s = interval_s
        self.memory_timeout_s = memory_timeout_s
        self.foreign_grace_s = foreign_grace_s
        self.poll_s = poll_s
        self.own_groups: set[int] = set()
        self._running: set[ArmSampler] = set()
        self._slots: dict[int, Any] = {}

    @property
    def reader(self) -> Any:
        if not self._opened:
            self._opened = True
            on_cpu = self.session.hardware.engine.platform == "cpu"
            self._reader = None if on_cpu else self._factory()
        return self._reader

    def gpus_for(self, arm: Arm, slot: Any = None) -> list[int]:
        """Physical indices of the GPUs the arm's server uses (CUDA_VISIBLE_DEVICES applied; NVML ignores
        it): its slot's GPUs when the sweep pins servers, else the first tp x pp x dp visible ones."""
        reader = self.reader
        if reader is None:
            return []
        if slot is not None and getattr(slot, "gpus", None):
            return visible_to_physical(",".join(map(str, slot.gpus)), reader)
        settings = self.session.settings
        if settings.endpoint:
            from specadvisor.provenance import is_loopback

            return visible_to_physical(None, reader) if is_loopback(settings.endpoint) else []
        var = next((v for v in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES") if v in self.env), None)
        visible = visible_to_physical(self.env.get(var) if var else None, reader)
        return visible[: world_size([*settings.server_args, *arm.server_args])]

    # ------------------------------------------------------------------ before a launch

    async def before_launch(self, arm: Arm, emit: Callable[[Any], None], slot: Any = None) -> None:
        """Wait (bounded) until the arm's GPUs have the memory vLLM will ask for; EngineError if not.
        A slot that shares its GPUs with another on purpose is not checked."""
        if self.session.settings.endpoint or getattr(slot, "shared", False):
            return
        gpus = self.gpus_for(arm, slot)
        if not gpus:
            return
        args = [*self.session.settings.server_args, *arm.server_args]
        utilization = server_flag(args, ("--gpu-memory-utilization",))
        need = need_per_gpu(self.reader, gpus, float(utilization) if utilization else None, self._estimate_mib(len(gpus)))

        def progress(check: MemoryCheck) -> None:
            emit(GpuMemoryWait(arm_id=arm.id, waited_s=check.waited_s, timeout_s=self.memory_timeout_s,
                               free_mib={g: round(v or 0, 1) for g, v in check.free_mib.items()},
                               need_mib=round(max(check.need_mib.values()), 1), holders=[h.describe() for h in check.holders]))  # fmt: skip

        check = await wait_for_memory(
            self.reader, need, timeout_s=self.memory_timeout_s, poll_s=self.poll_s, foreign_grace_s=self.foreign_grace_s,
            ours=lambda pid: is_ours(pid, self.own_groups), on_wait=progress,
        )  # fmt: skip
        if not check.ok:
            hint = "stop that process, pick free GPUs with CUDA_VISIBLE_DEVICES, or lower --gpu-memory-utilization"
            raise EngineError(check.message(), hint=hint)
        if check.waited_s > 0:
            emit(MeasurementWarning(arm_id=arm.id, message=f"waited {check.waited_s:.0f} s for GPU memory to be released before the launch"))

    def _estimate_mib(self, gpu_count: int) -> float | None:
        profile = self.session.model_profile
        if profile is None:
            return None
        from specadvisor.advisor.sizing import weights_gib

        weights = weights_gib(profile)
        return weights * 1024 / max(1, gpu_count) if weights else None

    def launched(self, server: Any, slot: Any = None) -> None:
        """Remember the server's process group (its processes' memory is ours to wait for, not a
        stranger's) and its slot (whose GPUs its arms are sampled on)."""
        pid = getattr(server, "pid", None)
        if isinstance(pid, int):
            self.own_groups.add(pid)
        self._slots[id(server)] = slot

    # ------------------------------------------------------------------ while an arm runs

    def watch(self, arm: Arm, server: Any = None) -> ArmSampler | None:
        gpus = self.gpus_for(arm, self._slots.get(id(server)))
        if not gpus:
            return None
        try:
            sampler = ArmSampler(self.reader, gpus, interval_s=self.interval_s).start()
        except Exception:  # noqa: BLE001 - telemetry never costs an arm
            return None
        self._running.add(sampler)
        return sampler

    def finish(self, sampler: ArmSampler | None, result: ArmResult, emit: Callable[[Any], None]) -> None:
        if sampler is None:
            return
        self._running.discard(sampler)
        try:
            result.telemetry = to_domain(sampler.stop(), result)
        except Exception:  # noqa: BLE001 - a driver failing at the end loses the readings, not the arm
            return
        for note in result.telemetry.warnings:
            result.warnings.append(note)
            emit(MeasurementWarning(arm_id=result.arm_id, message=note))

    def close(self) -> None:
        for sampler in list(self._running):
            sampler.stop()
        self._running.clear()
        if self._reader is not None:
            self._reader.close()
            self._reader, self._opened = None, False


class NoMonitor:
    """For runners whose servers are fakes: no GPU work at all."""

    async def before_launch(self, arm: Arm, emit: Callable[[Any], None], slot: Any = None) -> None:
        return None

    def launched(self, server: Any, slot: Any = None) -> None:
        return None

    def watch(self, arm: Arm, server: Any = None) -> None:
        return None

    def finish(self, sampler: Any, result: ArmResult, emit: Callable[[Any], None]) -> None:
        return None

    def close(self) -> None:
        return None
