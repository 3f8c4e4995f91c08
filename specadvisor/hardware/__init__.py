"""What this machine (or a planned one) offers: GPUs, CPU, OS, and the vLLM that will serve.

Every probe is bounded by a timeout and degrades to a ProbeNote saying why it found nothing, so
`detect()` always returns. Kept free of textual/httpx so `specadvisor detect` starts instantly.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from specadvisor.hardware import amd, nvidia
from specadvisor.hardware.commands import Runner, run_command
from specadvisor.hardware.cpu import os_label, probe_cpu, python_label
from specadvisor.hardware.engine_probe import probe_engine
from specadvisor.hardware.planning import hypothetical_profile
from specadvisor.hardware.visible import apply_visible_devices
from specadvisor.machine import EngineInfo, GpuInfo, HardwareProfile, ProbeNote

if TYPE_CHECKING:
    from specadvisor.rulebase import RuleBase

__all__ = ["detect", "detect_gpus", "engine_info", "hypothetical"]


def bounded(probe: Callable[[], tuple[list[GpuInfo], ProbeNote]], name: str, timeout_s: float) -> Callable[[], tuple[list[GpuInfo], ProbeNote]]:
    """Run an in-process library probe (NVML, amdsmi) on a daemon thread so a wedged driver cannot hang us."""

    def guarded(box: list[tuple[list[GpuInfo], ProbeNote]]) -> None:
        try:
            box.append(probe())
        except Exception as exc:  # noqa: BLE001 - the probes guard their calls; this catches what they could not foresee
            box.append(([], ProbeNote(probe=name, ok=False, detail=f"{name} failed: {type(exc).__name__}: {exc}")))

    def run() -> tuple[list[GpuInfo], ProbeNote]:
        box: list[tuple[list[GpuInfo], ProbeNote]] = []
        worker = threading.Thread(target=guarded, args=(box,), name=f"probe-{name}", daemon=True)
        worker.start()
        worker.join(timeout_s)
        if not box:
            return [], ProbeNote(probe=name, ok=False, detail=f"{name}: no answer within {timeout_s:g}s")
        return box[0]

    return run


def _first_hit(probes: list[Callable[[], tuple[list[GpuInfo], ProbeNote]]]) -> tuple[list[GpuInfo], list[ProbeNote]]:
    """Run probes in order until one finds GPUs; keep every note so the user sees what was tried."""
    notes: list[ProbeNote] = []
    for probe in probes:
        gpus, note = probe()
        notes.append(note)
        if gpus:
            return gpus, notes
    return [], notes


def detect_gpus(
    *,
    runner: Runner = run_command,
    timeout_s: float = 2.0,
    env: Mapping[str, str] | None = None,
    sys_root: Path = Path("/sys"),
    nvml_loader: Callable[[], ModuleType] = nvidia._load_nvml,
    amdsmi_loader: Callable[[], ModuleType] = amd._load_amdsmi,
) -> tuple[list[GpuInfo], list[ProbeNote]]:
    """NVIDIA then AMD GPUs, filtered by *_VISIBLE_DEVICES as the serving process would see them."""
    environ: Mapping[str, str] = os.environ if env is None else env
    nv, nv_notes = _first_hit([bounded(lambda: nvidia.probe_nvml(nvml_loader), "nvml", timeout_s), lambda: nvidia.probe_nvidia_smi(runner, timeout_s)])
    am, am_notes = _first_hit(
        [
            bounded(lambda: amd.probe_amdsmi(amdsmi_loader), "amdsmi", timeout_s),
            lambda: amd.probe_amd_smi(runner, timeout_s),
            lambda: amd.probe_rocm_smi(runner, timeout_s),
            lambda: amd.probe_sysfs(sys_root),
        ]
    )
    notes = nv_notes + am_notes
    nv, note = apply_visible_devices(nv, "CUDA_VISIBLE_DEVICES", environ.get("CUDA_VISIBLE_DEVICES"))
    notes += [note] if note else []
    amd_var = next((v for v in ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES") if v in environ), None)
    if amd_var:
        am, note = apply_visible_devices(am, amd_var, environ.get(amd_var))
        notes += [note] if note else []
    offset = len(nv)
    am = [replace(g, index=g.index + offset) for g in am] if offset else am
    return nv + am, notes


def engine_info(engine_cmd: list[str] | None = None, *, runner: Runner = run_command, timeout_s: float = 5.0) -> EngineInfo:
    return probe_engine(engine_cmd, runner=runner, timeout_s=timeout_s)


def detect(engine_cmd: list[str] | None = None, *, timeout_s: float = 2.0, runner: Runner = run_command) -> HardwareProfile:
    gpus, notes = detect_gpus(runner=runner, timeout_s=timeout_s)
    cpu, cpu_note = probe_cpu()
    engine = probe_engine(engine_cmd, runner=runner, timeout_s=max(timeout_s, 5.0))
    engine_note = ProbeNote(probe="vllm", ok=engine.found, detail=engine.detail)
    return HardwareProfile(
        gpus=gpus,
        cpu=cpu,
        os=os_label(),
        python=python_label(),
        engine=engine,
        notes=[*notes, cpu_note, engine_note],
    )


def hypothetical(spec: str, rulebase: RuleBase | None = None) -> HardwareProfile:
    """A planned machine ("H100x8"); raises InputError naming the known GPUs for an unknown name.
    `rulebase`: the catalog to read (default: the shipped rules and the user's folder)."""
    profile = hypothetical_profile(spec, rulebase)
    cpu, _ = probe_cpu()
    return replace(profile, cpu=cpu, os=os_label(), python=python_label())
