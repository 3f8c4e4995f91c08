"""Launch every speculative method on the CPU engine and print the README's launch table.

Runs tests/e2e/test_methods_launch_real.py (specadvisor's own sweep, one short arm per method on the
real CPU build of vLLM) one test at a time, each appending what it saw to a records file, then prints
a Markdown table: method x engine x vLLM version -> started, acceptance read, date (and the first
error line of a method that did not start). Nothing is assumed: a row is what a real launch did.

    python benchmarks/cpu_method_launches.py                  # run the launches (5-15 min on 2 cores)
    python benchmarks/cpu_method_launches.py --records FILE   # only print the table from FILE
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests" / "e2e" / "test_methods_launch_real.py"
ORDER = ["ngram", "draft_model", "eagle", "eagle3", "dflash", "mtp"]


def run_launches(records: Path) -> None:
    """One pytest run per test (one vLLM server at a time); a failing test is a row, not a stop."""
    env = {**os.environ, "SPECADVISOR_LAUNCH_RECORDS": str(records)}
    selectors = ("ngram", "itself", "tiny_head and eagle and not eagle3", "tiny_head and eagle3", "tiny_head and dflash", "mimo")
    for selector in selectors:
        command = [sys.executable, "-m", "pytest", str(TESTS), "-m", "slow", "-q", "-p", "no:cacheprovider", "-k", selector, "-s"]
        print("$", " ".join(command[2:]), flush=True)
        subprocess.run(command, cwd=ROOT, env=env, check=False, timeout=1500)


def table(rows: list[dict]) -> str:
    rows = sorted(rows, key=lambda r: ORDER.index(r["vllm_method"]) if r["vllm_method"] in ORDER else len(ORDER))
    lines = ["| method | engine | vLLM | started | acceptance read | date |", "|---|---|---|---|---|---|"]
    for r in rows:
        started = "yes" if r["started"] else f"no: `{r['error'] or 'failed'}`"
        if r["acceptance_read"] and r["mean_acceptance_length"] is not None:
            read = f"yes (N={r['n']}, AL {r['mean_acceptance_length']:.2f})"
        else:
            read = "no"
        lines.append(f"| {r['method']} | {r['engine']} | {r['vllm_version']} | {started} | {read} | {r['date']} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=Path, help="print the table from this records file instead of launching")
    args = parser.parse_args()
    if args.records is None:
        records = Path(tempfile.mkdtemp(prefix="launches-")) / "records.jsonl"
        run_launches(records)
    else:
        records = args.records
    rows = [json.loads(line) for line in records.read_text(encoding="utf-8").splitlines() if line.strip()] if records.is_file() else []
    if not rows:
        print(f"no launch records in {records}", file=sys.stderr)
        return 1
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
