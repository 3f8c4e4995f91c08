"""Fidelity, tracked as a figure: specadvisor's output throughput against `vllm bench serve`'s on the
same real CPU vLLM server, in each entry mode (launch through --engine-cmd, --cpu, --endpoint) at
concurrency 1 and 4.

It runs the e2e fidelity module (tests/e2e/test_fidelity_real.py: both tools RUNS times each, in
ABBA order, on one server per mode) and prints, per mode and concurrency, both tools' medians and
spreads, the ratio of medians, the paired 95% interval of the ratio and each client's CPU share while
it measured. The test asserts only that the runs show no gap over 5%; this script reports how close
the tools are.

  .venv/bin/python benchmarks/fidelity_modes.py [--runs 6] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from fidelity_harness import HEADER, Comparison  # noqa: E402


def one_round(runs: int) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "table.json"
        env = {**os.environ, "FIDELITY_RUNS": str(runs), "FIDELITY_TABLE_OUT": str(out)}
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/e2e/test_fidelity_real.py", "-k", "throughput"]
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        if not out.exists():
            sys.exit(f"the fidelity module wrote no table (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}")
        return json.loads(out.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=6, help="runs per tool per cell (even: ABBA order)")
    parser.add_argument("--repeat", type=int, default=1, help="rounds (a fresh server per mode each round)")
    args = parser.parse_args()
    cells: dict[tuple[str, int], Comparison] = {}
    for _ in range(args.repeat):
        for row in one_round(args.runs):
            cmp = cells.setdefault((row["mode"], row["concurrency"]), Comparison(row["mode"], row["concurrency"]))
            cmp.ours += row["ours"]
            cmp.bench += row["bench"]
            cmp.ours_cpu += row.get("ours_cpu", [])
            cmp.bench_cpu += row.get("bench_cpu", [])
    print(f"runs per tool per cell: {args.runs} x {args.repeat} round(s)\n")
    print(HEADER)
    order = ("launch", "cpu", "endpoint")
    for key in sorted(cells, key=lambda k: (order.index(k[0]), k[1])):
        print(cells[key].row())
    logs = [math.log(c.ratio) for c in cells.values()]
    print(f"\nmedian ratio over cells: {math.exp(statistics.median(logs)):.3f}")


if __name__ == "__main__":
    main()
