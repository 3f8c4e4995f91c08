"""CPU, RAM, OS and Python of this host: context for CPU-only runs and for the report."""

from __future__ import annotations

import os
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


def _linux_counts(meminfo: Path, cpu_dir: Path) -> tuple[int, int, int, int] | None:
    """(physical cores, logical CPUs, total bytes, available bytes) as psutil reads them on Linux, read
    here: importing psutil was a fifth of `detect`'s start-up. None where any figure is not plainly
    there (another OS, a kernel before MemAvailable, a container hiding the topology): psutil then
    answers, with its estimates and fallbacks."""
    try:
        memory: dict[str, int] = {}
        for line in meminfo.read_text().splitlines():
            key, _, rest = line.partition(":")
            fields = rest.split()
            if fields:
                memory[key] = int(fields[0]) * 1024
        total, available = memory["MemTotal"], memory["MemAvailable"]
        # psutil's cpu_count(logical=False): distinct core_cpus_list (else thread_siblings_list) of cpuN
        cpus = [entry for entry in cpu_dir.iterdir() if entry.name.startswith("cpu") and entry.name[3:4].isdigit()]
        cores = 0
        for listing in ("core_cpus_list", "thread_siblings_list"):
            files = [cpu / "topology" / listing for cpu in cpus if (cpu / "topology" / listing).exists()]
            if files:
                cores = len({f.read_bytes().strip() for f in files})
                break
        logical = os.sysconf("SC_NPROCESSORS_ONLN")  # psutil's cpu_count(logical=True) on Linux
    except (OSError, KeyError, ValueError, AttributeError):
        return None
    if cores < 1 or logical < 1 or not 0 < available <= total:
        return None
    return cores, logical, total, available


def probe_cpu(
    cpuinfo: Path = Path("/proc/cpuinfo"), meminfo: Path = Path("/proc/meminfo"), cpu_dir: Path = Path("/sys/devices/system/cpu")
) -> tuple[CpuInfo, ProbeNote]:
    info = CpuInfo(model=_cpu_model(cpuinfo))
    read = _linux_counts(meminfo, cpu_dir) if sys.platform.startswith("linux") else None
    try:
        if read is None:
            import psutil

            mem = psutil.virtual_memory()
            read = (psutil.cpu_count(logical=False), psutil.cpu_count(logical=True), mem.total, mem.available)
        cores, logical, total, available = read
        info = replace(
            info,
            cores_physical=cores,
            cores_logical=logical,
            ram_total_gib=round(total / 2**30, 1),
            ram_available_gib=round(available / 2**30, 1),
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
