"""Hypothetical hardware for planning ("H100x8", "MI300Xx4"): GPUs from the rule base's catalog.

The advisor then reasons about a machine the user does not have; the profile says hypothetical=True
so nobody mistakes it for a measurement.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from specadvisor.errors import InputError
from specadvisor.machine import GpuInfo, HardwareProfile, ProbeNote

if TYPE_CHECKING:
    from specadvisor.rulebase import RuleBase
    from specadvisor.rulebase.schema import GpuSpec

MAX_GPUS = 64
_SUFFIX_COUNT = re.compile(r"^(?P<name>.+)[x×*](?P<count>\d+)$", re.I)
_PREFIX_COUNT = re.compile(r"^(?P<count>\d+)[x×*](?P<name>.+)$", re.I)


def gpu_spec_readings(spec: str) -> list[tuple[str, int]]:
    """Possible (name, count) readings of NAME[xCOUNT], most likely first.

    "H100x8" -> [("H100", 8), ("H100x8", 1)]; "MI300Xx4" -> [("MI300X", 4), ...]; "RTX4090" reads as
    ("RT", 4090) first, so the caller keeps the first reading whose name is a known GPU.
    """
    text = re.sub(r"\s+", "", spec)
    if not text:
        raise InputError("--gpu is empty", hint="write NAME or NAMExCOUNT, e.g. H100x8")
    if re.search(r"[x×*][-+]\d*$|^[-+]\d+[x×*]", text, re.I):
        raise InputError(f"--gpu {spec!r}: the GPU count must be a positive whole number", hint="write NAME or NAMExCOUNT, e.g. H100x8")
    readings = [(m.group("name"), int(m.group("count"))) for m in (_PREFIX_COUNT.match(text), _SUFFIX_COUNT.match(text)) if m]
    return [*readings, (text, 1)]


def _meant_name(readings: list[tuple[str, int]]) -> str:
    """The name an unknown --gpu meant: the first reading with a plausible count ("FOOx8" -> FOO),
    else the whole text ("RTX9999" is not "RT" times 9999)."""
    return next(name for name, count in readings if 1 <= count <= MAX_GPUS)


def _catalog(rulebase: RuleBase | None = None) -> tuple[Callable[[str], GpuSpec | None], list[str]]:
    """(find_gpu, known names) from `rulebase` (default: the shipped rules and the user's folder);
    its absence is reported as a clear error."""
    try:
        from specadvisor.rulebase import default_rulebase, find_gpu

        rb = rulebase or default_rulebase()
        names = sorted(g.id for g in rb.gpus)
    except Exception as exc:
        raise InputError(f"the GPU catalog (rules/gpus.toml) cannot be loaded: {exc}", hint="reinstall specadvisor or fix your rules files") from exc
    return (lambda name: find_gpu(name, rb)), names


def hypothetical_profile(spec: str, rulebase: RuleBase | None = None) -> HardwareProfile:
    """The machine `spec` names, its GPU from `rulebase`'s catalog (a `--rules DIR` GPU or alias too)."""
    readings = gpu_spec_readings(spec)
    find_gpu, known = _catalog(rulebase)
    found = next(((gpu, count) for name, count in readings if (gpu := find_gpu(name)) is not None), None)
    if found is None:
        shown = ", ".join(known[:40]) or "none (the catalog is empty)"
        raise InputError(
            f"unknown GPU {_meant_name(readings)!r}",
            hint=f"known GPUs: {shown}; `specadvisor rules show h200` prints an entry to copy into your rules folder",
        )
    gpu, count = found
    if not 1 <= count <= MAX_GPUS:
        raise InputError(f"--gpu {spec!r}: {count} GPUs is out of range", hint=f"use a count from 1 to {MAX_GPUS}")
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
