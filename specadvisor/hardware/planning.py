"""Hypothetical hardware for planning ("H100x8", "MI300Xx4"): GPUs from the rule base's catalog.

The advisor then reasons about a machine the user does not have; the profile says hypothetical=True
so nobody mistakes it for a measurement.
"""

from __future__ import annotations

import re

from specadvisor.domain import GpuInfo, HardwareProfile, ProbeNote
from specadvisor.errors import InputError

MAX_GPUS = 64
_SUFFIX_COUNT = re.compile(r"^(?P<name>.+?)(?:\s*[x×*]\s*(?P<count>\d+))?$", re.I)
_PREFIX_COUNT = re.compile(r"^(?P<count>\d+)\s*[x×*]\s*(?P<name>.+)$", re.I)


def parse_gpu_spec(spec: str) -> tuple[str, int]:
    """"H100x8" -> ("H100", 8); "MI300Xx4" -> ("MI300X", 4); "8xH100" and "H200" work too."""
    text = spec.strip()
    match = _PREFIX_COUNT.match(text) or _SUFFIX_COUNT.match(text)
    if not text or not match:
        raise InputError(f"--gpu {spec!r} is empty", hint="write NAME or NAMExCOUNT, e.g. H100x8")
    name, count = match.group("name").strip(), int(match.group("count") or 1)
    if not 1 <= count <= MAX_GPUS:
        raise InputError(f"--gpu {spec!r}: {count} GPUs is out of range", hint=f"use a count from 1 to {MAX_GPUS}")
    return name, count


def _catalog():
    """(find_gpu, known names) from the rule base; its absence is reported as a clear error."""
    try:
        from specadvisor.rulebase import default_rulebase, find_gpu

        names = sorted(g.id for g in default_rulebase().gpus)
    except Exception as exc:
        raise InputError(f"the GPU catalog (rules/gpus.toml) cannot be loaded: {exc}", hint="reinstall specadvisor or fix your rules files") from exc
    return find_gpu, names


def hypothetical_profile(spec: str) -> HardwareProfile:
    name, count = parse_gpu_spec(spec)
    find_gpu, known = _catalog()
    gpu = find_gpu(name)
    if gpu is None:
        shown = ", ".join(known[:40]) or "none (the catalog is empty)"
        raise InputError(f"unknown GPU {name!r}", hint=f"known GPUs: {shown}; add one in your rules folder")
    memory_mib = int(gpu.memory_gib * 1024)
    gpus = [
        GpuInfo(
            index=i,
            vendor=gpu.vendor,
            name=gpu.name,
            memory_total_mib=memory_mib,
            memory_free_mib=memory_mib,
            compute_capability=gpu.compute_capability,
            gfx_target=gpu.gfx_target,
            source="catalog",
        )
        for i in range(count)
    ]
    note = ProbeNote(probe="catalog", ok=True, detail=f"hypothetical {count}x {gpu.name} from --gpu {spec!r}")
    return HardwareProfile(gpus=gpus, hypothetical=True, notes=[note])
