"""`specadvisor detect`: what this machine (or a planned one) offers for serving, in one screen.

Imports stay light (no textual, no httpx) so the command answers in a fraction of a second.
"""

from __future__ import annotations

import argparse
import shlex
from typing import TYPE_CHECKING

from specadvisor.errors import InputError

if TYPE_CHECKING:
    from specadvisor.machine import HardwareProfile


def register(parser: argparse.ArgumentParser) -> None:
    parser.description = "Probe GPUs (NVML/nvidia-smi, amdsmi/amd-smi/rocm-smi/sysfs), the CPU and vLLM. Honours CUDA_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES."
    parser.add_argument("--json", action="store_true", help="print the HardwareProfile as JSON")
    parser.add_argument("--engine-cmd", metavar="CMD", help='command that runs vLLM elsewhere, e.g. "/opt/vllm/bin/python" or "docker run ... vllm"')
    parser.add_argument("--gpu", metavar="NAME[xCOUNT]", help="plan for hardware you do not have, e.g. H100x8, MI300Xx4, L40S")
    parser.add_argument("--timeout", type=float, default=2.0, metavar="S", help="per-probe timeout in seconds (default 2)")
    parser.set_defaults(func=run)


def parse_engine_cmd(text: str | None) -> list[str] | None:
    if text is None:
        return None
    try:
        cmd = shlex.split(text)
    except ValueError as exc:
        raise InputError(f"--engine-cmd {text!r} cannot be parsed: {exc}", hint="quote it as you would in a shell") from exc
    if not cmd:
        raise InputError("--engine-cmd is empty", hint='give the command that runs vLLM, e.g. "/opt/vllm/bin/python"')
    return cmd


def run(args: argparse.Namespace) -> int:
    from specadvisor.app import machines
    from specadvisor.cli import validate

    validate.setting("timeout", args.timeout)  # nan reached a lock, 1e308 overflowed time_t
    engine_cmd = parse_engine_cmd(args.engine_cmd)
    profile = machines.planned(args.gpu, engine_cmd) if args.gpu else machines.detect(engine_cmd, timeout_s=args.timeout)
    if args.json:
        from specadvisor.cli.output import print_json

        print_json(profile)
    else:
        render_profile(profile)
    return 0


def _gib(mib: int | None) -> str:
    return f"{mib / 1024:.0f} GiB" if mib is not None else "?"


def render_profile(profile: HardwareProfile) -> None:
    from specadvisor.cli.output import console

    out = console()
    title = "Planned hardware (hypothetical, from the GPU catalog)" if profile.hypothetical else "This machine"
    out.print(f"[bold]{title}[/bold]: {profile.gpu_label}")
    if profile.gpus:
        from rich.table import Table  # a CPU-only machine prints no table: it does not pay for one

        table = Table(show_edge=False, pad_edge=False)
        for column in ("#", "GPU", "memory", "free", "arch", "driver", "source"):
            table.add_column(column)
        for g in profile.gpus:
            arch = f"sm {g.compute_capability}" if g.compute_capability else (g.gfx_target or "?")
            driver = g.driver_version or ""
            if g.cuda_driver_version:
                driver += f" (CUDA {g.cuda_driver_version})"
            table.add_row(str(g.index), g.name, _gib(g.memory_total_mib), _gib(g.memory_free_mib), arch, driver, g.source)
        out.print(table)
    cpu = profile.cpu
    ram = f"{cpu.ram_total_gib} GiB RAM" if cpu.ram_total_gib is not None else "RAM unknown"
    out.print(f"CPU: {cpu.model}, {cpu.cores_physical or '?'} cores / {cpu.cores_logical or '?'} threads, {ram}")
    if profile.os or profile.python:
        out.print(f"OS: {profile.os}   Python: {profile.python}")
    engine = profile.engine
    if engine.found:
        out.print(f"vLLM: {engine.version} ({engine.distribution}, {engine.platform})   methods: {', '.join(engine.methods) or '?'}")
        from specadvisor.vllm_command import shell_command

        out.print(f"  serves with: {shell_command(engine.command)}", soft_wrap=True, markup=False)
    else:
        out.print(f"vLLM: [yellow]not found[/yellow] ({engine.detail})")
    misses = [n for n in profile.notes if not n.ok]
    if misses and not profile.gpus:
        out.print("[dim]No GPU found. Probes tried:[/dim]")
    elif misses:
        out.print("[dim]Other probes:[/dim]")
    for note in misses:
        out.print(f"[dim]  {note.probe}: {note.detail}[/dim]", soft_wrap=True)
    for note in profile.notes:
        if note.ok and note.probe.endswith("VISIBLE_DEVICES"):
            out.print(f"  {note.detail}")
