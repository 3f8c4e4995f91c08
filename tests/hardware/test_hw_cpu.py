"""The CPU and memory figures are read from /proc and /sys as psutil reads them (psutil's import was a
fifth of `detect`), and psutil answers wherever a figure is not plainly there."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import psutil
import pytest

from specadvisor.hardware.cpu import _linux_counts, probe_cpu

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc and /sys")


def _fake_host(tmp_path: Path, meminfo: str, siblings: dict[str, str], listing: str = "core_cpus_list") -> tuple[Path, Path]:
    (tmp_path / "meminfo").write_text(meminfo)
    cpu_dir = tmp_path / "cpu"
    for name, value in siblings.items():
        (cpu_dir / name / "topology").mkdir(parents=True)
        (cpu_dir / name / "topology" / listing).write_text(value + "\n")
    (cpu_dir / "cpufreq").mkdir(parents=True, exist_ok=True)  # not a CPU
    return tmp_path / "meminfo", cpu_dir


MEMINFO = "MemTotal:        8000000 kB\nMemFree:         1000000 kB\nMemAvailable:    4000000 kB\nHugePages_Total:       0\n"
HYPERTHREADED = {"cpu0": "0-1", "cpu1": "0-1", "cpu2": "2-3", "cpu3": "2-3"}


@linux_only
def test_this_host_reads_as_psutil_reads_it():
    read = _linux_counts(Path("/proc/meminfo"), Path("/sys/devices/system/cpu"))
    mem = psutil.virtual_memory()
    assert read is not None
    cores, logical, total, available = read
    assert (cores, logical, total) == (psutil.cpu_count(logical=False), psutil.cpu_count(logical=True), mem.total)
    assert abs(available - mem.available) < 256 * 2**20  # read a moment apart: the free figure moves


@linux_only
@pytest.mark.parametrize("listing", ["core_cpus_list", "thread_siblings_list"])
def test_cores_are_the_distinct_sibling_lists(tmp_path, listing):
    meminfo, cpu_dir = _fake_host(tmp_path, MEMINFO, HYPERTHREADED, listing)
    assert _linux_counts(meminfo, cpu_dir) == (2, os.sysconf("SC_NPROCESSORS_ONLN"), 8000000 * 1024, 4000000 * 1024)
    info, note = probe_cpu(tmp_path / "no-cpuinfo", meminfo, cpu_dir)
    assert (info.cores_physical, info.ram_total_gib, info.ram_available_gib) == (2, 7.6, 3.8) and note.ok


@linux_only
@pytest.mark.parametrize(
    "meminfo, siblings",
    [
        ("MemTotal:        8000000 kB\nMemFree:         1000000 kB\n", HYPERTHREADED),  # a kernel before MemAvailable
        ("MemTotal:        8000000 kB\nMemAvailable:          0 kB\n", HYPERTHREADED),  # psutil estimates this one
        (MEMINFO, {}),  # a container hiding the topology
    ],
)
def test_psutil_answers_where_a_figure_is_not_plainly_there(tmp_path, meminfo, siblings):
    meminfo_path, cpu_dir = _fake_host(tmp_path, meminfo, siblings)
    assert _linux_counts(meminfo_path, cpu_dir) is None
    info, note = probe_cpu(tmp_path / "no-cpuinfo", meminfo_path, cpu_dir)
    assert note.ok and info.cores_physical == psutil.cpu_count(logical=False)
    assert info.ram_total_gib == round(psutil.virtual_memory().total / 2**30, 1)  # this host's, not the fake's 7.6
