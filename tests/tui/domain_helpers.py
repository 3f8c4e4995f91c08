"""Small profile variants for TUI tests."""

from __future__ import annotations

from dataclasses import replace

from specadvisor.domain import GpuInfo, HardwareProfile
from tui_fakes import HARDWARE


def gpu_hardware() -> HardwareProfile:
    return replace(HARDWARE, gpus=[GpuInfo(index=0, vendor="nvidia", name="H100", memory_total_mib=81559)])
