"""CPU, RAM, OS and Python of this host: context for CPU-only runs and for the report."""

from __future__ import annotations

import platform
import sys
from dataclasses import replace
from pathlib import Path

from specadvisor.machine import CpuInfo, ProbeNote


def _cpu_model(cpuinfo: Path) -> str:
    """/proc/cpuinfo's "model name" (platform.processor() is empty on most Linux systems)."""
    try:
        for line in cpuinfo.read_text(errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in {"model name", "Model", "cpu model"} and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def probe_cpu(cpuinfo: Path = Path("/proc/cpuinfo")) -> tuple[CpuInfo, ProbeNote]:
    info = CpuInfo(model=_cpu_model(cpuinfo))
    try:
        import psutil

        mem = psutil.virtual_memory()
        info = replace(
            info,
            cores_physical=psutil.cpu_count(logical=False),
            cores_logical=psutil.cpu_count(logical=True),
            ram_total_gib=round(mem.total / 2**30, 1),
            ram_available_gib=round(mem.available / 2**30, 1),
        )
    except Exception as exc:  # noqa: BLE001 - psutil missing or a restricted /proc: keep the model name
        return info, ProbeNote(probe="cpu", ok=False, detail=f"psutil failed: {exc}")
    return info, ProbeNote(probe="cpu", ok=True, detail=f"{info.cores_logical} logical cores, {info.ram_total_gib} GiB RAM")


def os_label() -> str:
    if sys.platform.startswith("linux"):
        try:
            fields = dict(line.split("=", 1) for line in Path("/etc/os-release").read_text().splitlines() if "=" in line)
            pretty = fields.get("PRETTY_NAME", "").strip('"')
            if pretty:
                return f"{pretty} (Linux {platform.release()})"
        except OSError:
            pass
    return f"{platform.system()} {platform.release()}".strip()


def python_label() -> str:
    return f"{platform.python_implementation()} {platform.python_version()}"
