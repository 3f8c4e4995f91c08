"""Fakes at the process boundary for the hardware probes: a scripted command runner."""

from __future__ import annotations

from pathlib import Path

from specadvisor.hardware.commands import CommandResult

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hardware"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


class ScriptedRunner:
    """Answers each command by its executable name; records every call."""

    def __init__(self, answers: dict[str, CommandResult | list[CommandResult]]):
        self.answers = {k: (v if isinstance(v, list) else [v]) for k, v in answers.items()}
        self.calls: list[list[str]] = []

    def __call__(self, cmd: list[str], timeout_s: float) -> CommandResult:
        self.calls.append(cmd)
        queue = self.answers.get(Path(cmd[0]).name)
        if not queue:
            return CommandResult(None, error=f"{cmd[0]}: not installed")
        return queue.pop(0) if len(queue) > 1 else queue[0]


def ok(stdout: str) -> CommandResult:
    return CommandResult(0, stdout, "")


class NVMLError(Exception):
    """What nvidia-ml-py raises for an unsupported query."""


class FakeGpu:
    """One GPU's state as NVML would report it; tests change the fields between readings.
    Defaults are an idle NVIDIA H200 as read through the device tool (driver 580.159.04)."""

    def __init__(self, index: int = 0, **fields):
        self.name = "NVIDIA H200"
        self.uuid = f"GPU-abb4e75c-4558-1ee4-76b0-e3ef47f5181{index}"
        self.total_mib = 143771
        self.used_mib = 615.0
        self.util = 0
        self.power_mw = 76000
        self.sm_clock = 345
        self.max_sm_clock = 1980
        self.mem_clock = 3201
        self.temperature = 31
        self.limit_mw = 700000
        self.throttle = 0x1  # gpu_idle
        self.energy_mj = 1_000_000
        self.processes: list[tuple[int, int | None]] = []  # (pid, used bytes)
        self.unsupported: set[str] = set()
        self.__dict__.update(fields)


class FakeNvml:
    """A stand-in for the `pynvml` module (nvidia-ml-py) at the process boundary."""

    def __init__(self, gpus: list[FakeGpu] | None = None, *, fail_init: bool = False):
        self.gpus = gpus if gpus is not None else [FakeGpu(0)]
        self.fail_init = fail_init
        self.inits = self.shutdowns = 0
        self.calls = 0

    def _gpu(self, handle: int, what: str) -> FakeGpu:
        self.calls += 1
        gpu = self.gpus[handle]
        if what in gpu.unsupported:
            raise NVMLError(f"{what}: Not Supported")
        return gpu

    def nvmlInit(self):
        if self.fail_init:
            raise NVMLError("NVML Shared Library Not Found")
        self.inits += 1

    def nvmlShutdown(self):
        self.shutdowns += 1

    def nvmlDeviceGetCount(self):
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index):
        if not 0 <= index < len(self.gpus):
            raise NVMLError("Invalid Argument")
        return index

    def nvmlDeviceGetUUID(self, h):
        return self._gpu(h, "uuid").uuid

    def nvmlDeviceGetName(self, h):
        return self._gpu(h, "name").name

    def nvmlDeviceGetMemoryInfo(self, h):
        from types import SimpleNamespace

        g = self._gpu(h, "memory")
        total, used = g.total_mib * 2**20, int(g.used_mib * 2**20)
        return SimpleNamespace(total=total, used=used, free=total - used)

    def nvmlDeviceGetUtilizationRates(self, h):
        from types import SimpleNamespace

        return SimpleNamespace(gpu=self._gpu(h, "utilization").util, memory=0)

    def nvmlDeviceGetPowerUsage(self, h):
        return self._gpu(h, "power").power_mw

    def nvmlDeviceGetEnforcedPowerLimit(self, h):
        return self._gpu(h, "power_limit").limit_mw

    def nvmlDeviceGetClockInfo(self, h, kind):
        g = self._gpu(h, "clock")
        return g.sm_clock if kind == 1 else g.mem_clock

    def nvmlDeviceGetMaxClockInfo(self, h, kind):
        return self._gpu(h, "clock").max_sm_clock

    def nvmlDeviceGetTemperature(self, h, sensor):
        return self._gpu(h, "temperature").temperature

    def nvmlDeviceGetCurrentClocksEventReasons(self, h):
        return self._gpu(h, "throttle").throttle

    def nvmlDeviceGetTotalEnergyConsumption(self, h):
        return self._gpu(h, "energy").energy_mj

    def nvmlDeviceGetComputeRunningProcesses(self, h):
        from types import SimpleNamespace

        return [SimpleNamespace(pid=pid, usedGpuMemory=used) for pid, used in self._gpu(h, "processes").processes]

    def nvmlDeviceGetGraphicsRunningProcesses(self, h):
        return []
