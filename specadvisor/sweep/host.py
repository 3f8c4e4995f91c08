"""This host's slots for a session: the visible GPUs (and their links) or the CPU cores, split by
`--parallel auto|K` (one home for the CLI and the TUI; the pure splitting is in sweep.slots)."""

from __future__ import annotations

import os

from specadvisor.domain import GpuInfo, Session
from specadvisor.sweep.slots import Slot, plan_slots, tp_size


def slots_for(parallel: str | int, session: Session, gpus: list[GpuInfo] | None = None) -> list[Slot]:
    """Slots for `session` on this host. `gpus`: already detected GPUs (None: detect now)."""
    if session.settings.endpoint:
        return plan_slots(1, gpus=[])
    if gpus is None:
        from specadvisor.hardware import detect_gpus

        gpus, _notes = detect_gpus()
    indices = [g.index for g in gpus]
    tp = max([tp_size([*session.settings.server_args, *a.server_args]) for a in session.arms] or [1])
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))
    return plan_slots(parallel, gpus=indices, tp=tp, cores=cores, affinity=_affinity(gpus) if len(indices) > 1 else {})


def _affinity(gpus: list[GpuInfo]) -> dict[tuple[int, int], int]:
    from specadvisor.hardware import topology

    indices = [g.index for g in gpus]
    vendor = gpus[0].vendor
    if vendor == "nvidia":
        return topology.nvidia_affinity(indices)
    if vendor == "amd":
        return topology.amd_affinity(indices)
    return {}
