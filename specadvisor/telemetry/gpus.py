"""Read one GPU's live state through NVML (nvidia-ml-py) or amdsmi, one call per figure.

Every figure is optional: a field the driver does not support reads as None instead of losing
the reading. Indices are physical (NVML numbering); CUDA_VISIBLE_DEVICES is mapped by the caller
(`visible_to_physical`), because NVML ignores it.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from types import ModuleType
from typing import Any

from specadvisor.machine import GpuReading, GpuState

# NVML clock-event ("throttle") reason bits, stable across driver versions (nvml.h).
THROTTLE_BITS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}
# Reasons that do not mean the GPU was held back while working.
BENIGN_THROTTLE = {"gpu_idle", "applications_clocks_setting", "display_clock_setting", "sync_boost"}

NVML_CLOCK_SM, NVML_CLOCK_MEM, NVML_TEMPERATURE_GPU = 1, 2, 0
MIB = 2**20


@dataclass
class Holder:
    """A process holding memory on a GPU."""

    pid: int
    gpu: int
    used_mib: float | None
    name: str

    def describe(self) -> str:
        used = f"{self.used_mib:.0f} MiB" if self.used_mib is not None else "memory not reported"
        return f"pid {self.pid} {self.name} ({used} on GPU {self.gpu})"


def _safe(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except Exception:  # noqa: BLE001 - an unsupported field (NVMLError_NotSupported, amdsmi errors) reads as None
        return None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def process_name(pid: int, proc: str = "/proc") -> str:
    """The command line of `pid` (short), or its name, or "?" when it has gone or is not ours to read."""
    try:
        with open(f"{proc}/{pid}/cmdline", "rb") as handle:
            argv = [a.decode(errors="replace") for a in handle.read().split(b"\0") if a]
        if argv:
            return " ".join([os.path.basename(argv[0]), *argv[1:]])[:160]
    except OSError:
        pass
    try:
        with open(f"{proc}/{pid}/comm") as handle:
            return handle.read().strip() or "?"
    except OSError:
        return "?"


def decode_throttle(mask: int | None) -> list[str]:
    """Active reasons that held clocks down while working (idle and settings excluded)."""
    if not mask:
        return []
    return [name for bit, name in THROTTLE_BITS.items() if mask & bit and name not in BENIGN_THROTTLE]


class NvmlReader:
    source = "nvml"

    def __init__(self, nvml: ModuleType):
        self.nvml = nvml
        nvml.nvmlInit()
        self._handles: dict[int, Any] = {}

    def count(self) -> int:
        return int(self.nvml.nvmlDeviceGetCount())

    def _h(self, gpu: int) -> Any:
        if gpu not in self._handles:
            self._handles[gpu] = self.nvml.nvmlDeviceGetHandleByIndex(gpu)
        return self._handles[gpu]

    def uuid(self, gpu: int) -> str | None:
        return _text(_safe(lambda: self.nvml.nvmlDeviceGetUUID(self._h(gpu))))

    def name(self, gpu: int) -> str | None:
        return _text(_safe(lambda: self.nvml.nvmlDeviceGetName(self._h(gpu))))

    def _throttle_mask(self, h: Any) -> int | None:
        for fn in ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"):
            call = getattr(self.nvml, fn, None)
            if call is not None:
                value = _safe(partial(call, h))
                if value is not None:
                    return int(value)
        return None

    def _power_w(self, h: Any) -> float | None:
        mw = _safe(lambda: self.nvml.nvmlDeviceGetPowerUsage(h))
        return mw / 1000 if mw is not None else None

    def memory(self, gpu: int) -> tuple[float | None, float | None, float | None]:
        """(used, total, free) MiB."""
        mem = _safe(lambda: self.nvml.nvmlDeviceGetMemoryInfo(self._h(gpu)))
        if mem is None:
            return None, None, None
        return mem.used / MIB, mem.total / MIB, mem.free / MIB

    def reading(self, gpu: int, t: float) -> GpuReading:
        h = self._h(gpu)
        util = _safe(lambda: self.nvml.nvmlDeviceGetUtilizationRates(h))
        return GpuReading(
            t=t,
            gpu=gpu,
            memory_used_mib=self.memory(gpu)[0],
            utilization_pct=float(util.gpu) if util is not None else None,
            power_w=self._power_w(h),
            sm_clock_mhz=_safe(lambda: float(self.nvml.nvmlDeviceGetClockInfo(h, NVML_CLOCK_SM))),
            temperature_c=_safe(lambda: float(self.nvml.nvmlDeviceGetTemperature(h, NVML_TEMPERATURE_GPU))),
            throttle=decode_throttle(self._throttle_mask(h)),
        )

    def state(self, gpu: int) -> GpuState:
        h = self._h(gpu)
        used, total, _ = self.memory(gpu)
        limit = _safe(lambda: self.nvml.nvmlDeviceGetEnforcedPowerLimit(h))
        return GpuState(
            gpu=gpu,
            uuid=self.uuid(gpu),
            name=self.name(gpu),
            sm_clock_mhz=_safe(lambda: float(self.nvml.nvmlDeviceGetClockInfo(h, NVML_CLOCK_SM))),
            sm_clock_max_mhz=_safe(lambda: float(self.nvml.nvmlDeviceGetMaxClockInfo(h, NVML_CLOCK_SM))),
            memory_clock_mhz=_safe(lambda: float(self.nvml.nvmlDeviceGetClockInfo(h, NVML_CLOCK_MEM))),
            temperature_c=_safe(lambda: float(self.nvml.nvmlDeviceGetTemperature(h, NVML_TEMPERATURE_GPU))),
            power_w=self._power_w(h),
            power_limit_w=limit / 1000 if limit is not None else None,
            memory_used_mib=used,
            memory_total_mib=total,
            throttle=decode_throttle(self._throttle_mask(h)),
        )

    def energy_j(self, gpu: int) -> float | None:
        """The board's own energy counter (Volta and later), joules since the driver loaded."""
        mj = _safe(lambda: self.nvml.nvmlDeviceGetTotalEnergyConsumption(self._h(gpu)))
        return mj / 1000 if mj is not None else None

    def holders(self, gpu: int) -> list[Holder]:
        h = self._h(gpu)
        seen: dict[int, Holder] = {}
        for fn in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses"):
            call = getattr(self.nvml, fn, None)
            for proc in (_safe(partial(call, h)) if call else None) or []:
                pid = int(getattr(proc, "pid", 0) or 0)
                used = getattr(proc, "usedGpuMemory", None)
                if pid and pid not in seen:
                    seen[pid] = Holder(pid=pid, gpu=gpu, used_mib=used / MIB if isinstance(used, int) else None, name=process_name(pid))
        return list(seen.values())

    def close(self) -> None:
        _safe(self.nvml.nvmlShutdown)


class AmdsmiReader:
    """The same readings from AMD's amdsmi (ROCm 6+). Field names follow amdsmi's Python API."""

    source = "amdsmi"

    def __init__(self, lib: ModuleType):
        self.lib = lib
        lib.amdsmi_init()
        self._handles = list(lib.amdsmi_get_processor_handles())

    def count(self) -> int:
        return len(self._handles)

    def uuid(self, gpu: int) -> str | None:
        return _text(_safe(lambda: self.lib.amdsmi_get_gpu_device_uuid(self._handles[gpu])))

    def name(self, gpu: int) -> str | None:
        info = _safe(lambda: self.lib.amdsmi_get_gpu_asic_info(self._handles[gpu])) or {}
        return info.get("market_name")

    def memory(self, gpu: int) -> tuple[float | None, float | None, float | None]:
        usage = _safe(lambda: self.lib.amdsmi_get_gpu_vram_usage(self._handles[gpu])) or {}
        used, total = usage.get("vram_used"), usage.get("vram_total")  # MiB
        if used is None or total is None:
            return None, None, None
        return float(used), float(total), float(total) - float(used)

    def _power_w(self, h: Any) -> tuple[float | None, float | None]:
        info = _safe(lambda: self.lib.amdsmi_get_power_info(h)) or {}
        power = next((info[k] for k in ("current_socket_power", "average_socket_power") if isinstance(info.get(k), (int, float))), None)
        limit = info.get("power_limit")
        if isinstance(limit, (int, float)) and limit > 1e5:  # some releases report microwatts
            limit = limit / 1e6
        return (float(power) if power is not None else None), (float(limit) if isinstance(limit, (int, float)) else None)

    def _clock(self, h: Any) -> tuple[float | None, float | None]:
        kind = getattr(getattr(self.lib, "AmdSmiClkType", None), "GFX", None)
        info = _safe(lambda: self.lib.amdsmi_get_clock_info(h, kind)) or {}
        return info.get("clk"), info.get("max_clk")

    def _temperature(self, h: Any) -> float | None:
        types = getattr(self.lib, "AmdSmiTemperatureType", None)
        metric = getattr(getattr(self.lib, "AmdSmiTemperatureMetric", None), "CURRENT", None)
        for name in ("HOTSPOT", "EDGE"):
            value = _safe(partial(self.lib.amdsmi_get_temp_metric, h, getattr(types, name), metric))
            if isinstance(value, (int, float)):
                return float(value)
        return None

    def reading(self, gpu: int, t: float) -> GpuReading:
        h = self._handles[gpu]
        activity = _safe(lambda: self.lib.amdsmi_get_gpu_activity(h)) or {}
        clock, _ = self._clock(h)
        power, _ = self._power_w(h)
        return GpuReading(t=t, gpu=gpu, memory_used_mib=self.memory(gpu)[0], utilization_pct=activity.get("gfx_activity"),
                       power_w=power, sm_clock_mhz=clock, temperature_c=self._temperature(h))  # fmt: skip

    def state(self, gpu: int) -> GpuState:
        h = self._handles[gpu]
        used, total, _ = self.memory(gpu)
        clock, clock_max = self._clock(h)
        power, limit = self._power_w(h)
        return GpuState(gpu=gpu, uuid=self.uuid(gpu), name=self.name(gpu), sm_clock_mhz=clock, sm_clock_max_mhz=clock_max,
                     temperature_c=self._temperature(h), power_w=power, power_limit_w=limit, memory_used_mib=used, memory_total_mib=total)  # fmt: skip

    def energy_j(self, gpu: int) -> float | None:
        return None  # amdsmi's energy counter units vary by release: the power integral is used instead

    def holders(self, gpu: int) -> list[Holder]:
        h = self._handles[gpu]
        out = []
        for proc in _safe(lambda: self.lib.amdsmi_get_gpu_process_list(h)) or []:
            info = proc if isinstance(proc, dict) else (_safe(partial(self.lib.amdsmi_get_gpu_process_info, h, proc)) or {})
            pid = int(info.get("pid") or 0)
            mem = (info.get("memory_usage") or {}).get("vram_mem")
            if pid:
                out.append(Holder(pid=pid, gpu=gpu, used_mib=mem / MIB if isinstance(mem, int) else None, name=process_name(pid)))
        return out

    def close(self) -> None:
        _safe(self.lib.amdsmi_shut_down)


def _load_nvml() -> ModuleType:
    return importlib.import_module("pynvml")  # nvidia-ml-py


def _load_amdsmi() -> ModuleType:
    return importlib.import_module("amdsmi")


def open_reader(nvml_loader: Callable[[], ModuleType] = _load_nvml, amdsmi_loader: Callable[[], ModuleType] = _load_amdsmi) -> NvmlReader | AmdsmiReader | None:
    """An NVML reader, else an amdsmi one, else None (no GPU, no library, no driver). Never raises."""
    for make, loader in ((NvmlReader, nvml_loader), (AmdsmiReader, amdsmi_loader)):
        try:
            reader = make(loader())
            if reader.count() > 0:
                return reader
            reader.close()
        except Exception:  # noqa: BLE001 - ImportError, driver not loaded, library missing: no telemetry, nothing else lost
            continue
    return None


def visible_to_physical(value: str | None, reader: Any) -> list[int]:
    """Physical indices a process started with CUDA_VISIBLE_DEVICES=value sees, in its own order.
    Entries are indices or (prefixes of) UUIDs; like the CUDA runtime, parsing stops at the first
    entry that names no device. None (unset) means every GPU."""
    count = reader.count()
    if value is None:
        return list(range(count))
    uuids = {i: (reader.uuid(i) or "").lower().removeprefix("gpu-") for i in range(count)}
    chosen: list[int] = []
    for raw in value.split(","):
        entry = raw.strip()
        if not entry:
            continue
        if entry.lstrip("-").isdigit():
            index = int(entry)
            match = index if 0 <= index < count else None
        else:
            wanted = entry.lower().removeprefix("gpu-")
            hits = [i for i, u in uuids.items() if u and u.startswith(wanted)]
            match = hits[0] if len(hits) == 1 else None
        if match is None:
            break
        if match not in chosen:
            chosen.append(match)
    return chosen
