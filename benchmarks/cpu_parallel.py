"""Serial versus `--parallel 2` versus `--ray` on the real CPU engine: wall time to the recommendation, same answer?

Runs `specadvisor sweep --cpu` with the same arms (baseline, ngram N=2, ngram N=4; few prompts,
short outputs) in each mode of --modes: serially (one server at a time, all cores), with
`--parallel 2` (two servers at a time, one core range each through VLLM_CPU_OMP_THREADS_BIND), and
with `--ray` on a local Ray cluster this script starts (`ray start --head --num-cpus 2`, stopped at
the end): one actor per server, each with one CPU and its own core, serving and measuring on the
node. All bracket the baseline; the two-slot modes also re-measure the leader beside the baseline in
a confirmation wave. Prints wall time, launches, waves, per-arm throughput, cold/warm start-up and
the answer of each, then each mode against serial.

Starts real vLLM servers: run it under the shared engine lock, e.g.
  flock /tmp/specadvisor-engine.lock .venv/bin/python benchmarks/cpu_parallel.py
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


MODES = {"serial": ["--parallel", "1"], "parallel": ["--parallel", "2"], "ray": ["--ray"]}
NAMES = {"serial": "serial", "parallel": "--parallel 2", "ray": "--ray (local)"}


def sweep(db: Path, mode: str, args: argparse.Namespace, extra: list[str], env: dict[str, str] | None = None) -> tuple[dict, float]:
    cmd = [
        sys.executable,
        "-m",
        "specadvisor.cli.main",
        "--db",
        str(db),
        "sweep",
        "--cpu",
        "--method",
        "ngram",
        "--n",
        "2,4",
        "--num-prompts",
        str(args.num_prompts),
        "--output-len",
        str(args.output_len),
        "--concurrency",
        str(args.concurrency),
        *MODES[mode],
        *extra,
        "--name",
        f"cpu-{mode}",
        "--json",
    ]
    env = {**os.environ, **(env or {}), "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        sys.exit(f"sweep ({NAMES[mode]}) failed ({out.returncode}): {out.stderr.strip()[-500:]}")
    return json.loads(out.stdout), wall


def run_mode(mode: str, tmp: str, args: argparse.Namespace) -> tuple[dict, float]:
    if mode != "ray":
        return sweep(Path(tmp) / f"{mode}.db", mode, args, [])
    sys.path.insert(0, str(ROOT / "tests"))  # the tests' throwaway cluster (tests/ray_local.py)
    from ray_local import local_cluster

    with local_cluster(2, {"PYTHONPATH": str(ROOT)}) as (address, env):
        return sweep(Path(tmp) / f"{mode}.db", mode, args, [address], env)


def startup(data: dict) -> str:
    cold = [a["startup_cold_s"] for a in data["arms"] if a.get("startup_cold_s")]
    warm = [a["startup_warm_s"] for a in data["arms"] if a.get("startup_warm_s")]
    return f"start-up cold {_mean_s(cold)} / warm {_mean_s(warm)}"


def _mean_s(values: list[float]) -> str:
    return f"{sum(values) / len(values):.0f} s" if values else "-"


def answer(data: dict) -> str:
    rec = data.get("recommendation") or {}
    if rec.get("arm_id"):
        return f"{rec['arm_id']} ({rec['speedup']:.2f}x)" if rec.get("speedup") else rec["arm_id"]
    return "withheld" if rec.get("withheld") else "do not speculate"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--num-prompts", type=int, default=8)
    ap.add_argument("--output-len", type=int, default=32)
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--modes", default="serial,parallel,ray", help="comma-separated: serial, parallel, ray")
    args = ap.parse_args()
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not modes or set(modes) - set(MODES):
        sys.exit(f"--modes takes serial, parallel and/or ray, got {args.modes!r}")
    with tempfile.TemporaryDirectory() as tmp:
        rows = []
        for mode in modes:
            data, wall = run_mode(mode, tmp, args)
            rows.append((mode, data, wall))
        print(
            f"CPU engine, {os.cpu_count()} cores; baseline + ngram N=2 + N=4; {args.num_prompts} prompts x {args.output_len} tokens, concurrency {args.concurrency}"
        )
        print(f"{'mode':<14} {'wall s':>7} {'launches':>8} {'waves':>5}  answer; per-arm runs tok/s [placement wave]")
        for mode, data, wall in rows:
            waves = max((r.get("wave") or 0 for a in data["arms"] for r in a.get("runs", [])), default=0)
            print(
                f"{NAMES[mode]:<14} {wall:>7.0f} {data['launches_used']:>8} {waves:>5}  {answer(data)}; drift {((data.get('drift') or {}).get('change') or 0) * 100:+.1f}%; {startup(data)}"
            )
            for arm in data["arms"]:
                runs = ", ".join(
                    f"{r['output_throughput']:.1f} [{r['placement'] or 'host'} w{r['wave']}]" for r in arm.get("runs", []) if r.get("output_throughput")
                )
                print(f"    {arm['arm_id']:<10} {runs}")
        (first, a, wa) = next((r for r in rows if r[0] == "serial"), rows[0])
        for mode, b, wb in (r for r in rows if r[0] != first):
            same = "yes" if answer(a).split()[0] == answer(b).split()[0] else "NO"
            print(f"{NAMES[mode]} / {NAMES[first]} wall time: {wb / wa:.2f} ({wa - wb:+.0f} s); same answer: {same}")


if __name__ == "__main__":
    main()
