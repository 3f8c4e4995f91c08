"""How importing, listing, comparing, showing and reporting scale with a huge shared session (the
issue: a 100,000-arm bundle took 51 s to import, up to 134 s to show and 78 s to compare).

Builds a session with ARMS arms (64 concurrency levels, each a baseline and ngram families at
N=1..8, a result for every RESULT_EVERY-th arm), writes it as a compact bundle, then runs each
operation through the CLI in a fresh Python process (so each has its own peak RSS, start-up
included, as a user would see it): import into a fresh database, `sessions list`, `sessions
compare`, `sessions show`, `report` (Markdown and HTML) and the TUI's sessions listing query.
Prints a table of operation, seconds and peak RSS (MiB).

Run: python benchmarks/bundle_scale.py [ARMS] (default 100000, the bundle limit).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from specadvisor.domain import Arm, ArmResult, Session, SweepSettings
from specadvisor.store.bundle import bundle_document, export_bundle

RESULT_EVERY = 50
N_VALUES = 8
LEVELS = 64

# Runs one operation in a child process and prints "seconds peak_rss_kib" on its last line.
_CHILD = """
import contextlib, io, sys, time
start = time.perf_counter()
if sys.argv[1] == "tui-listing":
    from pathlib import Path
    from specadvisor.store import Store
    with Store.open(Path(sys.argv[2])) as store:
        rows = store.list_sessions()  # what the TUI's Sessions screen lists
    code = 0 if rows else 1
else:
    from specadvisor.cli.main import main
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(sys.argv[1:])
elapsed = time.perf_counter() - start
# VmHWM, not ru_maxrss: Linux carries the parent's peak RSS into ru_maxrss across fork and exec
peak = next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(f"{elapsed} {peak} {code}")
"""


def build(arms: int) -> Session:
    """LEVELS concurrency levels (the bundle limit), each with a baseline and ngram families
    (prompt_lookup_max = 1, 2, ...) at N = 1..8 until `arms` arms exist."""
    session = Session(name="scale", model="org/model", status="finished", settings=SweepSettings(concurrency=list(range(1, LEVELS + 1))))
    per_level = -(-arms // LEVELS)
    made = 0
    for level in range(1, LEVELS + 1):
        configs = [(None, None)] + [(n, lookup) for lookup in range(1, per_level) for n in range(1, N_VALUES + 1)]
        for n, lookup in configs[:per_level]:
            if made == arms:
                break
            spec = None if n is None else {"method": "ngram", "num_speculative_tokens": n, "prompt_lookup_max": lookup}
            arm_id = "baseline" if n is None else f"ngram-l{lookup}-n{n}"
            arm = Arm(id=f"{arm_id}-c{level}", label=f"{arm_id} c{level}", method=spec and "ngram", n=n, speculative_config=spec, concurrency=level)
            session.arms.append(arm)
            if n is None or made % RESULT_EVERY == 0:
                session.results.append(ArmResult(arm_id=arm.id, completed=8, output_throughput=100.0 + (n or 0) * 3 + level * 0.01))
            made += 1
    return session


def write_compact(session: Session, path: Path) -> Path:
    """The exported bundle document without indentation and without the arms' and results' fields
    that hold their default values (import fills them in): what a hostile 100,000-arm bundle under
    the 20 MB limit looks like (`sessions export` writes every field, indented, which would not fit)."""
    document = bundle_document(session)
    for key, default in (("arms", Arm(id="x", label="x").model_dump(mode="json")), ("results", ArmResult(arm_id="x").model_dump(mode="json"))):
        document["session"][key] = [{k: v for k, v in item.items() if k not in default or v != default[k]} for item in document["session"][key]]
    path.write_text(json.dumps(document, separators=(",", ":")), encoding="utf-8")
    return path


def timed(label: str, argv: list[str]) -> tuple[str, float, float]:
    """(label, seconds, peak RSS MiB) of one operation run in its own process."""
    done = subprocess.run([sys.executable, "-c", _CHILD, *argv], capture_output=True, text=True, check=False)
    last = done.stdout.strip().splitlines()[-1:] or ["0 0 1"]
    seconds, rss_kib, code = last[0].split()
    if done.returncode != 0 or code != "0":
        raise SystemExit(f"{label}: exit {done.returncode}/{code}: {done.stderr.strip()[-2000:]}")
    row = (label, float(seconds), int(rss_kib) / 1024)
    print(f"{row[0]:<30} {row[1]:8.2f} s {row[2]:8.0f} MiB", flush=True)
    return row


def main_(arms: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        session = build(arms)
        other = build(min(arms, 2_000))
        start = time.perf_counter()
        big = write_compact(session, folder / "big.json")
        small = export_bundle(other, folder / "small.json")
        print(
            f"{len(session.arms)} arms, {len(session.results)} results, bundle {big.stat().st_size / 1e6:.1f} MB (export {time.perf_counter() - start:.2f} s)"
        )
        calibration = time.perf_counter()
        sum(range(10**7))
        # On a shared box the figures scale with its load: this says how busy it was.
        print(f"load gauge: sum(range(10**7)) took {time.perf_counter() - calibration:.2f} s (about 0.15 s on an idle core)")
        db = str(folder / "s.db")
        big_id, small_id = session.id[:8], other.id[:8]
        rows = [
            timed("sessions import (big)", ["--db", db, "sessions", "import", str(big)]),
            timed("sessions import (2000 arms)", ["--db", db, "sessions", "import", str(small)]),
            timed("sessions list", ["--db", db, "sessions", "list"]),
            timed("sessions list --json", ["--db", db, "sessions", "list", "--json"]),
            timed("sessions compare --json", ["--db", db, "sessions", "compare", big_id, small_id, "--json"]),
            timed("sessions compare (table)", ["--db", db, "sessions", "compare", big_id, small_id]),
            timed("sessions show", ["--db", db, "sessions", "show", big_id]),
            timed("sessions show --json", ["--db", db, "sessions", "show", big_id, "--json"]),
            timed("report (markdown)", ["--db", db, "report", big_id, "-o", str(folder / "r.md")]),
            timed("report (html)", ["--db", db, "report", big_id, "-o", str(folder / "r.html")]),
            timed("TUI sessions listing", ["tui-listing", db]),
        ]
        print("\n| operation | seconds | peak RSS MiB |\n|---|---|---|")
        for label, seconds, rss in rows:
            print(f"| {label} | {seconds:.1f} | {rss:.0f} |")


if __name__ == "__main__":
    main_(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
