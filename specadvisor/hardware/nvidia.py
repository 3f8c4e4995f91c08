"""NVIDIA GPUs: NVML through nvidia-ml-py first, `nvidia-smi --query-gpu` CSV when NVML is unusable.

Both report physical devices (CUDA_VISIBLE_DEVICES is applied later by the caller).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

from specadvisor.hardware.commands import Runner, run_command
from specadvisor.machine import GpuInfo, ProbeNote

SMI_FIELDS = ("index", "name", "uuid", "memory.total", "memory.free", "compute_cap", "driver_version", "pci.bus_id")
"""compute_cap needs driver >= 510; older drivers reject the query and we retry without it."""


def _load_nvml() -> ModuleType:
    return importlib.import_module("pynvml")  # nvidia-ml-py


def _text(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _cuda_version(code: int) -> str:
    """NVML encodes CUDA 12.4 as 12040."""
    return f"{code // 1000}.{(code % 1000) // 10}"


def _safe(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except Exception:  # noqa: BLE001 - one unsupported NVML field must not lose the whole GPU
        return None


def probe_nvml(loader: Callable[[], ModuleType] = _load_nvml) -> tuple[list[GpuInfo], ProbeNote]:
    try:
        nvml = loader()
    except Exception as exc:  # noqa: BLE001 - ImportError, or a broken install raising anything
        return [], ProbeNote(probe="nvml", ok=False, detail=f"nvidia-ml-py not usable: {type(exc).__name__}: {exc}")
    try:
        nvml.nvmlInit()
    except Exception as exc:  # noqa: BLE001 - NVMLError_LibraryNotFound / DriverNotLoaded on machines without NVIDIA
        return [], ProbeNote(probe="nvml", ok=False, detail=f"NVML init failed: {exc}")
    try:
        driver = _safe(lambda: _text(nvml.nvmlSystemGetDriverVersion()))
        cuda_code = _safe(nvml.nvmlSystemGetCudaDriverVersion)
        cuda = _cuda_version(cuda_code) if isinstance(cuda_code, int) else None
        gpus = [_nvml_gpu(nvml, i, driver, cuda) for i in range(nvml.nvmlDeviceGetCount())]
    except Exception as exc:  # noqa: BLE001 - a failure here is reported, never raised
        return [], ProbeNote(probe="nvml", ok=False, detail=f"NVML query failed: {exc}")
    finally:
        _safe(nvml.nvmlShutdown)
    return gpus, ProbeNote(probe="nvml", ok=bool(gpus), detail=f"{len(gpus)} NVIDIA GPU(s)")


def _nvml_gpu(nvml: Any, index: int, driver: str | None, cuda: str | None) -> GpuInfo:
    handle = nvml.nvmlDeviceGetHandleByIndex(index)
    mem = _safe(lambda: nvml.nvmlDeviceGetMemoryInfo(handle))
    cc = _safe(lambda: nvml.nvmlDeviceGetCudaComputeCapability(handle))
    pci = _safe(lambda: nvml.nvmlDeviceGetPciInfo(handle))
    return GpuInfo(
        index=index,
        vendor="nvidia",
        name=_text(_safe(lambda: nvml.nvmlDeviceGetName(handle)) or "NVIDIA GPU"),
        uuid=_text(u) if (u := _safe(lambda: nvml.nvmlDeviceGetUUID(handle))) else None,
        memory_total_mib=int(mem.total) // 2**20 if mem else None,
        memory_free_mib=int(mem.free) // 2**20 if mem else None,
        compute_capability=f"{cc[0]}.{cc[1]}" if cc else None,
        driver_version=driver,
        cuda_driver_version=cuda,
        pci_bus_id=(_text(getattr(pci, "busId", "")) or None) if pci is not None else None,
        source="nvml",
    )


def _field(value: str) -> str | None:
    value = value.strip()
    return None if not value or value.startswith("[") or value in {"N/A", "[N/A]"} else value


def _mib(value: str) -> int | None:
    text = _field(value)
    if text is None:
        return None
    try:
        return int(float(text.split()[0]))
    except ValueError:
        return None


def parse_nvidia_smi_csv(text: str, fields: tuple[str, ...] = SMI_FIELDS) -> list[GpuInfo]:
    """Rows of `--format=csv,noheader,nounits`; a header line or units are tolerated too."""
    gpus: list[GpuInfo] = []
    for line in text.strip().splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) != len(fields) or cells[0] == "index":
            continue
        row = dict(zip(fields, cells, strict=True))
        try:
            index = int(row["index"])
        except ValueError:
            continue
        gpus.append(
            GpuInfo(
                index=index,
                vendor="nvidia",
                name=_field(row["name"]) or "NVIDIA GPU",
                uuid=_field(row["uuid"]),
                memory_total_mib=_mib(row["memory.total"]),
                memory_free_mib=_mib(row["memory.free"]),
                compute_capability=_field(row.get("compute_cap", "")),
                driver_version=_field(row["driver_version"]),
                pci_bus_id=_field(row["pci.bus_id"]),
                source="nvidia-smi",
            )
        )
    return gpus


def probe_nvidia_smi(runner: Runner = run_command, timeout_s: float = 2.0) -> tuple[list[GpuInfo], ProbeNote]:
    fields: tuple[str, ...] = SMI_FIELDS
    result = runner(["nvidia-smi", f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"], timeout_s)
    if result.returncode not in (0, None) and "compute_cap" in (result.stdout + result.stderr):
        fields = tuple(f for f in SMI_FIELDS if f != "compute_cap")
        result = runner(["nvidia-smi", f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"], timeout_s)
    if not result.ok:
        return [], ProbeNote(probe="nvidia-smi", ok=False, detail=result.reason())
    gpus = parse_nvidia_smi_csv(result.stdout, fields)
    if not gpus:
        return [], ProbeNote(probe="nvidia-smi", ok=False, detail="output had no GPU rows")
    return gpus, ProbeNote(probe="nvidia-smi", ok=True, detail=f"{len(gpus)} NVIDIA GPU(s)")
