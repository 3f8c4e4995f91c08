"""Check GPU telemetry and the pre-launch memory check on a real NVIDIA GPU, without vLLM.

Needs only torch (CUDA), nvidia-ml-py and this repository on PYTHONPATH:

    PYTHONPATH=. python benchmarks/gpu_telemetry_check.py [--gib 20] [--busy-s 20]

A stand-in server (this file with --stand-in, in its own process group like a launched vLLM)
allocates --gib GiB through torch and busy-loops a bf16 matmul for --busy-s seconds, then holds its
memory until told to free it. Meanwhile the arm sampler (1 Hz) records memory, utilization, power,
SM clock and temperature, and the memory check runs three times against a need that only fits once
the stand-in's memory is gone:
  1. "stranger": the stand-in is not ours -> the check must name its pid after the grace period;
  2. "timeout":  the stand-in is ours but keeps its memory -> the bounded wait must time out;
  3. "release":  the stand-in is ours and frees its memory after a few seconds -> the wait completes.
Prints one JSON document (readings, energy, outcomes, timings, pass/fail per expectation); exit 0
when every expectation holds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from specadvisor.telemetry.gpus import open_reader, visible_to_physical
from specadvisor.telemetry.memory import is_ours, wait_for_memory
from specadvisor.telemetry.sampler import ArmSampler

GIB = 1024.0  # MiB


def stand_in(args: argparse.Namespace) -> int:
    """The fake server: hold memory, keep the GPU busy, free on request, then idle until killed."""
    import torch

    device = torch.device("cuda", 0)
    block = torch.empty(int(args.gib * 2**30), dtype=torch.uint8, device=device)
    block.fill_(1)
    a = torch.randn(8192, 8192, dtype=torch.bfloat16, device=device)
    b = torch.randn(8192, 8192, dtype=torch.bfloat16, device=device)
    torch.cuda.synchronize()
    Path(args.ready_file).write_text(json.dumps({"pid": os.getpid(), "allocated_gib": args.gib}))
    iterations, t0 = 0, time.monotonic()
    while time.monotonic() - t0 < args.busy_s:
        for _ in range(20):
            a @ b
        torch.cuda.synchronize()
        iterations += 20
    busy = time.monotonic() - t0
    Path(args.busy_file).write_text(
        json.dumps({"iterations": iterations, "busy_s": round(busy, 3), "tflops": round(iterations * 2 * 8192**3 / busy / 1e12, 1)})
    )
    while not Path(args.free_file).exists():
        time.sleep(0.1)
    del block, a, b
    torch.cuda.empty_cache()
    Path(args.freed_file).write_text(str(time.time()))
    while True:  # like a server after an arm: alive until stopped
        time.sleep(1)


def wait_file(path: Path, timeout_s: float, proc: subprocess.Popen) -> dict:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        if proc.poll() is not None:
            raise SystemExit(f"stand-in exited early with code {proc.returncode}")
        if time.monotonic() > deadline:
            raise SystemExit(f"stand-in did not write {path.name} within {timeout_s:.0f} s")
        time.sleep(0.1)
    time.sleep(0.05)
    return json.loads(path.read_text() or "{}")


def outcome(check, started: float, progress: list) -> dict:
    return {
        "ok": check.ok,
        "reason": check.reason,
        "waited_s": check.waited_s,
        "polls": check.polls,
        "need_mib": {str(k): round(v, 1) for k, v in check.need_mib.items()},
        "free_mib": {str(k): round(v, 1) if v is not None else None for k, v in check.free_mib.items()},
        "holders": [h.describe() for h in check.holders],
        "message": "" if check.ok else check.message(),
        "progress_events": len(progress),
        "first_progress_holders": [h.describe() for h in progress[0].holders] if progress else [],
        "wall_s": round(time.monotonic() - started, 2),
    }


async def checks(reader, gpu: int, need: dict, pid: int, files: dict, args) -> dict:
    out = {}
    progress: list = []
    t = time.monotonic()
    check = await wait_for_memory(reader, need, timeout_s=30, foreign_grace_s=args.grace_s, ours=lambda p: False, on_wait=progress.append)
    out["stranger"] = outcome(check, t, progress)
    mine = {pid}
    progress = []
    t = time.monotonic()
    check = await wait_for_memory(reader, need, timeout_s=args.timeout_s, ours=lambda p: is_ours(p, mine), on_wait=progress.append)
    out["timeout"] = outcome(check, t, progress)

    async def release_later():
        await asyncio.sleep(args.release_after_s)
        files["free"].write_text("free")
        return time.monotonic()

    progress = []
    t = time.monotonic()
    releaser = asyncio.create_task(release_later())
    check = await wait_for_memory(reader, need, timeout_s=60, ours=lambda p: is_ours(p, mine), on_wait=progress.append)
    released_at = await releaser
    out["release"] = outcome(check, t, progress)
    out["release"]["signal_after_s"] = round(released_at - t, 2)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=20.0, help="GPU memory the stand-in allocates (default 20)")
    parser.add_argument("--busy-s", type=float, default=20.0, help="seconds of matmul load (default 20)")
    parser.add_argument("--grace-s", type=float, default=3.0, help="grace before a stranger is reported")
    parser.add_argument("--timeout-s", type=float, default=5.0, help="bound of the wait that must time out")
    parser.add_argument("--release-after-s", type=float, default=4.0, help="when the stand-in is told to free its memory")
    parser.add_argument("--interval-s", type=float, default=1.0, help="sampling interval")
    parser.add_argument("--stand-in", action="store_true", help=argparse.SUPPRESS)
    for name in ("ready", "busy", "free", "freed"):
        parser.add_argument(f"--{name}-file", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.stand_in:
        return stand_in(args)

    reader = open_reader()
    if reader is None:
        print(json.dumps({"ok": False, "error": "no GPU readable through NVML (is nvidia-ml-py installed and a driver loaded?)"}))
        return 1
    visible = visible_to_physical(os.environ.get("CUDA_VISIBLE_DEVICES"), reader)
    if not visible:
        print(json.dumps({"ok": False, "error": f"CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')!r} names no GPU"}))
        return 1
    gpu = visible[0]  # the stand-in's cuda:0, as NVML numbers it
    before = reader.state(gpu)
    _, total, free0 = reader.memory(gpu)
    need = {gpu: free0 - args.gib * GIB / 2}  # fits only once the stand-in's memory is back
    tmp = Path(tempfile.mkdtemp(prefix="gpu-telemetry-"))
    files = {name: tmp / name for name in ("ready", "busy", "free", "freed")}
    timings: dict[str, float] = {}
    t0, t0_wall = time.monotonic(), time.time()
    sampler = ArmSampler(reader, [gpu], interval_s=args.interval_s).start()
    cmd = [sys.executable, os.path.abspath(__file__), "--stand-in", "--gib", str(args.gib), "--busy-s", str(args.busy_s),
           *[x for name, path in files.items() for x in (f"--{name}-file", str(path))]]  # fmt: skip
    proc = subprocess.Popen(cmd, start_new_session=True)
    try:
        ready = wait_file(files["ready"], 120, proc)
        timings["stand_in_ready_s"] = round(time.monotonic() - t0, 2)
        used_with_stand_in = reader.memory(gpu)[0]
        holders_seen = [h.describe() for h in reader.holders(gpu)]
        # All three run while the stand-in is busy or holding; it frees only when told to and its loop is done.
        checks_started = time.monotonic()
        memory_checks = asyncio.run(checks(reader, gpu, need, proc.pid, files, args))
        timings["checks_s"] = round(time.monotonic() - checks_started, 2)
        freed_wall = wait_file(files["freed"], 60, proc)
        timings["stand_in_freed_at_s"] = round(float(freed_wall) - t0_wall, 2)
        time.sleep(2 * args.interval_s)  # a couple of readings after the release
    finally:
        record = sampler.stop()
        timings["total_s"] = round(time.monotonic() - t0, 2)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    busy = json.loads(files["busy"].read_text()) if files["busy"].exists() else {}
    shutil.rmtree(tmp, ignore_errors=True)
    iterations = busy.get("iterations") or 0
    used = [s.memory_used_mib for s in record.samples if s.memory_used_mib is not None]
    expectations = {
        "sampled_about_1hz": len(record.samples) >= 0.8 * timings["total_s"] / args.interval_s,
        "memory_rose_by_allocation": bool(used) and max(used) - (before.memory_used_mib or 0) >= 0.9 * args.gib * GIB,
        "busy_utilization_seen": any((s.utilization_pct or 0) >= 50 for s in record.samples),
        "power_integral_positive": (record.energy_j or 0) > 0,
        "stranger_named": memory_checks["stranger"]["reason"] == "held" and any(f"pid {proc.pid} " in h for h in memory_checks["stranger"]["holders"]),
        "own_memory_wait_timed_out": memory_checks["timeout"]["reason"] == "timeout",
        "wait_completed_after_release": memory_checks["release"]["ok"] and memory_checks["release"]["waited_s"] >= args.release_after_s * 0.9,
    }
    document = {
        "ok": all(expectations.values()),
        "expectations": expectations,
        "gpu": {
            "physical_index": gpu,
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "memory_total_mib": total,
            "memory_free_before_mib": round(free0, 1),
            "state_before": asdict(before),
            "state_start": asdict(record.start[0]),
            "state_end": asdict(record.end[0]),
        },
        "stand_in": {"pid": proc.pid, **ready, **busy, "used_mib_while_held": used_with_stand_in, "nvml_processes": holders_seen},
        "energy": {
            "integral_j": record.energy_j,
            "driver_counter_j": record.energy_counter_j,
            "mean_power_w": round(record.mean_power_w, 1) if record.mean_power_w else None,
            "span_s": record.span_s,
            "j_per_matmul_iteration": record.energy_per_token_j(iterations, busy.get("busy_s")) if iterations else None,
            "note": "J/token in a sweep = mean power over the arm x measured duration / output tokens; here one 8192^3 bf16 matmul stands in for a token",
        },
        "warnings": record.warnings,
        "memory_checks": memory_checks,
        "timings": timings,
        "samples": [asdict(s) for s in record.samples],
    }
    print(json.dumps(document, indent=1))
    reader.close()
    return 0 if document["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
