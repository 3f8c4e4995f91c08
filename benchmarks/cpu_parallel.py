"""Serial versus `--parallel 2` on the real CPU engine: wall time to the recommendation, same answer?

Runs `specadvisor sweep --cpu` twice with the same arms (baseline, ngram N=2, ngram N=4; few
prompts, short outputs): once serially (one server at a time, all cores), once with `--parallel 2`
(two servers at a time, one core range each through VLLM_CPU_OMP_THREADS_BIND). Both bracket the
baseline; the parallel sweep also re-measures the leader beside the baseline in a confirmation
wave. Prints wall time, launches, waves, per-arm throughput and the answer of each.

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


def sweep(db: Path, parallel: str, args: argparse.Namespace) -> tuple[dict, float]:
    cmd = [
        sys.executable, "-m", "specadvisor.cli.main", "--db", str(db), "sweep", "--cpu", "--method", "ngram",
        "--n", "2,4", "--num-prompts", str(args.num_prompts), "--output-len", str(args.output_len),
        "--concurrency", str(args.concurrency), "--parallel", parallel, "--name", f"cpu-parallel-{parallel}", "--json",
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        sys.exit(f"sweep --parallel {parallel} failed ({out.returncode}): {out.stderr.strip()[-500:]}")
    return json.loads(out.stdout), wall


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
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = []
        for parallel in ("1", "2"):
            data, wall = sweep(Path(tmp) / f"p{parallel}.db", parallel, args)
            rows.append((parallel, data, wall))
        print(f"CPU engine, {os.cpu_count()} cores; baseline + ngram N=2 + N=4; {args.num_prompts} prompts x {args.output_len} tokens, concurrency {args.concurrency}")
        print(f"{'mode':<12} {'wall s':>7} {'launches':>8} {'waves':>5}  answer; per-arm runs tok/s [placement wave]")
        for parallel, data, wall in rows:
            waves = max((r.get("wave") or 0 for a in data["arms"] for r in a.get("runs", [])), default=0)
            print(f"{'serial' if parallel == '1' else '--parallel ' + parallel:<12} {wall:>7.0f} {data['launches_used']:>8} {waves:>5}  {answer(data)}; drift {((data.get('drift') or {}).get('change') or 0) * 100:+.1f}%")
            for arm in data["arms"]:
                runs = ", ".join(f"{r['output_throughput']:.1f} [{r['placement'] or 'host'} w{r['wave']}]" for r in arm.get("runs", []) if r.get("output_throughput"))
                print(f"    {arm['arm_id']:<10} {runs}")
        (_, a, wa), (_, b, wb) = rows
        print(f"parallel/serial wall time: {wb / wa:.2f} ({wa - wb:+.0f} s); same answer: {'yes' if answer(a).split()[0] == answer(b).split()[0] else 'NO'}")


if __name__ == "__main__":
    main()
