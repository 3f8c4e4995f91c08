"""Start-up time of the CLI: a fresh `python -m specadvisor ...` per run, to exit (target: detect,
--help and sessions list on an empty database under 0.3 s on a quiet machine).

Wall time depends on how busy the machine is; CPU time (user + sys of the child) much less, so
both are printed: median and spread (min-max) over the runs, per command.

    python benchmarks/startup.py [--runs 15]
    SPECADVISOR_ENGINE_DIR=... python benchmarks/startup.py   # adds `detect` with that vLLM found
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMANDS = {
    "--version": ["--version"],
    "--help": ["--help"],
    "detect": ["detect"],
    "detect (vLLM found)": ["detect"],  # run with SPECADVISOR_ENGINE_DIR when it is set, skipped otherwise
    "sessions list (no database)": ["--db", "{tmp}/none.db", "sessions", "list"],
    "sessions list (empty database)": ["--db", "{tmp}/empty.db", "sessions", "list"],
}


def one_run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one fresh interpreter running the command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "specadvisor", *argv], env=env, cwd=env["SPECADVISOR_HOME"], capture_output=True, text=True, timeout=120)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"specadvisor {' '.join(argv)} exited {done.returncode}:\n{done.stderr}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def summary(values: list[float]) -> str:
    return f"median {statistics.median(values):.3f} s ({min(values):.3f}-{max(values):.3f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        from specadvisor.store import Store

        Store.open(Path(tmp) / "empty.db").close()
        env = dict(os.environ, SPECADVISOR_HOME=str(Path(tmp) / "home"))
        # A user's Python writes .pyc files on the first run; with PYTHONDONTWRITEBYTECODE set (as in some
        # sandboxes) every run would compile the changed modules from source and measure that instead.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        Path(env["SPECADVISOR_HOME"]).mkdir()  # also the working directory: `-m` puts it first on sys.path
        load = os.getloadavg()[0]
        print(f"{args.runs} runs per command, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load:.1f} at the start")
        # Plain `detect` finds no vLLM in the fresh home (a user without one): its cost is the probes and
        # the imports. With an engine found it also answers which methods that vLLM serves.
        bare = {k: v for k, v in env.items() if k != "SPECADVISOR_ENGINE_DIR"}
        engine_dir = os.environ.get("SPECADVISOR_ENGINE_DIR")
        for name, template in COMMANDS.items():
            if name == "detect (vLLM found)" and not engine_dir:
                print(f"  {name:32} skipped: set SPECADVISOR_ENGINE_DIR to a provisioned CPU engine")
                continue
            run_env = env if name == "detect (vLLM found)" else bare
            argv = [part.format(tmp=tmp) for part in template]
            one_run(argv, run_env)  # warm the page cache, .pyc files and the served-methods cache; not counted
            runs = [one_run(argv, run_env) for _ in range(args.runs)]
            walls, cpus = [w for w, _ in runs], [c for _, c in runs]
            print(f"  {name:32} wall {summary(walls)}   cpu {summary(cpus)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
