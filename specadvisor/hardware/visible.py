"""Apply CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES ourselves: NVML, amd-smi and sysfs ignore them.

The serving process only sees the listed devices, renumbered from 0, so the advisor must plan with
that subset. Entries are indices or UUIDs (a unique prefix is enough, with or without "GPU-"); like
the CUDA runtime, parsing stops at the first entry that names no device.
"""

from __future__ import annotations

from dataclasses import replace

from specadvisor.machine import GpuInfo, ProbeNote


def _match(entry: str, gpus: list[GpuInfo]) -> GpuInfo | None:
    if entry.lstrip("-").isdigit():
        idx = int(entry)
        return next((g for g in gpus if g.index == idx), None)
    wanted = entry.lower().removeprefix("gpu-")
    hits = [g for g in gpus if g.uuid and g.uuid.lower().removeprefix("gpu-").startswith(wanted)]
    return hits[0] if len(hits) == 1 else None


def apply_visible_devices(gpus: list[GpuInfo], env_name: str, value: str | None) -> tuple[list[GpuInfo], ProbeNote | None]:
    """The GPUs a process started with `env_name=value` would see, renumbered from 0."""
    if value is None or not gpus:
        return gpus, None
    chosen: list[GpuInfo] = []
    stopped_at: str | None = None
    for raw in value.split(","):
        entry = raw.strip()
        if not entry:
            continue
        gpu = _match(entry, gpus)
        if gpu is None:
            stopped_at = entry
            break
        if gpu not in chosen:
            chosen.append(gpu)
    renumbered = [replace(g, index=i) for i, g in enumerate(chosen)]
    physical = ", ".join(str(g.index) for g in chosen) or "none"
    detail = f"{env_name}={value!r}: {len(chosen)} of {len(gpus)} GPUs visible (physical {physical})"
    if stopped_at is not None:
        detail += f"; stopped at {stopped_at!r}, which names no GPU"
    return renumbered, ProbeNote(probe=env_name, ok=stopped_at is None, detail=detail)
