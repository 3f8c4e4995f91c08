"""How importing, listing, comparing, showing and reporting scale with a huge shared session (the
issue: a 100,000-arm bundle took 51 s to import, up to 134 s to show and 78 s to compare).

Builds a session with ARMS arms (64 concurrency levels, each a baseline and ngram families at
N=1..8), writes it as a compact bundle, then runs each operation through the CLI in a fresh Python
process (so each has its own peak RSS, start-up included, as a user would see it): import into a
fresh database, `sessions list`, `sessions compare`, `sessions show`, `report` (Markdown and HTML),
the TUI's sessions listing query and opening the session in the TUI's results view (headless, the
real app: until its table, verdict and chart are on screen). Two sessions: one with a result for
every RESULT_EVERY-th arm, one with a result for every arm (a fully measured session). Each
operation runs --repeat times (default 3); the table gives the median and the range.

Run: python benchmarks/bundle_scale.py [ARMS] [--repeat 3] (default 100000 arms, the bundle limit).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from specadvisor.analysis.recommend import recommend
from specadvisor.domain import Arm, ArmResult, Session, SweepSettings
from specadvisor.store import Store
from specadvisor.store.bundle import bundle_document, export_bundle
from specadvisor.store.safe_json import MAX_FILE_BYTES as MAX_BUNDLE_BYTES

RESULT_EVERY = 50
OPERATION_LIMIT_S = 90.0  # an operation still running after this is stopped and reported as over it
N_VALUES = 8
LEVELS = 64

# Runs one operation in a child process and prints "seconds peak_rss_kib code cpu_seconds" on its last line.
_CHILD = """
import contextlib, io, sys, time
start = time.perf_counter()
cpu_start = time.process_time()
if sys.argv[1] == "tui-listing":
    from pathlib import Path
    from specadvisor.store import Store
    with Store.open(Path(sys.argv[2])) as store:
        rows = store.list_sessions()  # what the TUI's Sessions screen lists
    code = 0 if rows else 1
elif sys.argv[1] == "tui-open":
    from pathlib import Path
    from textual.widgets import DataTable, Static
    from specadvisor.tui.app import create_app
    from specadvisor.tui.screens.results import ResultsScreen
    app = create_app(db_path=Path(sys.argv[2]))
    seen = {}

    async def open_session(pilot):
        session = app.state.store.get_session(sys.argv[3])  # what Sessions' Enter does, then its results view
        await app.push_screen(ResultsScreen(session))
        await pilot.pause()
        screen = app.screen
        seen["rows"] = screen.query_one("#results", DataTable).row_count
        seen["verdict"] = str(screen.query_one("#recommendation-text", Static).render())
        app.exit(0)

    app.run(headless=True, size=(160, 50), auto_pilot=open_session)
    code = 0 if seen.get("rows") and seen.get("verdict") else 1
else:
    from specadvisor.cli.main import main
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(sys.argv[1:])
elapsed = time.perf_counter() - start
# VmHWM, not ru_maxrss: Linux carries the parent's peak RSS into ru_maxrss across fork and exec
peak = next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(f"{elapsed} {peak} {code} {time.process_time() - cpu_start}")
"""


def build(arms: int, result_every: int = RESULT_EVERY) -> Session:
    """LEVELS concurrency levels (the bundle limit), each with a baseline and ngram families
    (prompt_lookup_max = 1, 2, ...) at N = 1..8 until `arms` arms exist; a result for every baseline
    and every `result_every`-th arm (1: every arm measured)."""
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
            if n is None or made % result_every == 0:
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


def once(label: str, argv: list[str]) -> tuple[float, float]:
    """(seconds, peak RSS MiB) of one operation run in its own process; its CPU seconds (user + sys,
    which a shared box's load inflates less than the wall) are remembered in CPU_SECONDS."""
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD, *argv], capture_output=True, text=True, check=False, timeout=OPERATION_LIMIT_S)
    except subprocess.TimeoutExpired:
        return math.inf, 0.0  # printed as "over the limit": the operation did not finish
    last = done.stdout.strip().splitlines()[-1:] or ["0 0 1 0"]
    seconds, rss_kib, code, cpu = last[0].split()
    if done.returncode != 0 or code != "0":
        raise SystemExit(f"{label}: exit {done.returncode}/{code}: {done.stderr.strip()[-2000:]}")
    CPU_SECONDS.setdefault(label, []).append(float(cpu))
    return float(seconds), int(rss_kib) / 1024


CPU_SECONDS: dict[str, list[float]] = {}


def timed(label: str, argv: list[str], repeat: int) -> tuple[str, list[float], float]:
    """(label, seconds of each run, the largest peak RSS MiB) of one operation run `repeat` times."""
    runs = [once(label, argv) for _ in range(repeat)]
    seconds = [s for s, _ in runs]
    row = (label, seconds, max(rss for _, rss in runs))
    cpu = statistics.median(CPU_SECONDS.get(label, [math.inf])[-repeat:])  # inf: every run was stopped
    print(f"{label:<34} median {statistics.median(seconds):7.2f} s ({min(seconds):.2f}-{max(seconds):.2f}) CPU {cpu:6.2f} s {row[2]:7.0f} MiB", flush=True)
    return row


def measure_session(session: Session, other: Session, folder: Path, repeat: int) -> list[tuple[str, list[float], float]]:
    """Every operation on `session` (compared with `other`), each in a fresh database-sharing run;
    the import is timed into a fresh database each time (a second import of a bundle is refused).
    A bundle over the import limit (a fully measured 100,000-arm session is) is refused in one line:
    the session is then saved into the database directly, as a local sweep would have stored it."""
    start = time.perf_counter()
    big = write_compact(session, folder / f"big-{session.id[:8]}.json")
    small = export_bundle(other, folder / f"small-{session.id[:8]}.json")
    size = big.stat().st_size
    print(f"{len(session.arms)} arms, {len(session.results)} results, bundle {size / 1e6:.1f} MB (export {time.perf_counter() - start:.2f} s)", flush=True)
    db = str(folder / f"import-{session.id[:8]}-0.db")
    if size > MAX_BUNDLE_BYTES:
        refused = subprocess.run([sys.executable, "-m", "specadvisor", "--db", db, "sessions", "import", str(big)], capture_output=True, text=True, check=False)
        print(f"import refused (exit {refused.returncode}): {refused.stderr.strip()[:160]}", flush=True)
        start = time.perf_counter()
        # As an import stores it (store/bundle.py): with the verdict computed once from the data,
        # marked as computed by this decision code, so the views read it instead of recomputing.
        judged = session.model_copy(update={"recommendation": recommend(session)})
        judging = time.perf_counter() - start
        with Store.open(Path(db)) as store:
            store.save_session(judged, verdict_computed_here=True)
        rows = [("store the session (bundle over the limit)", [time.perf_counter() - start], 0.0)]
        print(f"saved into the database directly in {rows[0][1][0]:.2f} s (in process; its verdict computed in {judging:.2f} s)", flush=True)
    else:
        imports = [
            once("sessions import (big)", ["--db", str(folder / f"import-{session.id[:8]}-{i}.db"), "sessions", "import", str(big)]) for i in range(repeat)
        ]
        seconds = [s for s, _ in imports]
        rows = [("sessions import (big)", seconds, max(r for _, r in imports))]
        print(
            f"{'sessions import (big)':<34} median {statistics.median(seconds):7.2f} s ({min(seconds):.2f}-{max(seconds):.2f}) {rows[0][2]:7.0f} MiB",
            flush=True,
        )
    big_id, small_id = session.id[:8], other.id[:8]
    once("sessions import (2000 arms)", ["--db", db, "sessions", "import", str(small)])
    rows += [
        timed("sessions list", ["--db", db, "sessions", "list"], repeat),
        timed("sessions compare --json", ["--db", db, "sessions", "compare", big_id, small_id, "--json"], repeat),
        timed("sessions compare (table)", ["--db", db, "sessions", "compare", big_id, small_id], repeat),
        timed("sessions show", ["--db", db, "sessions", "show", big_id], repeat),
        timed("sessions show --json", ["--db", db, "sessions", "show", big_id, "--json"], repeat),
        timed("report (markdown)", ["--db", db, "report", big_id, "-o", str(folder / "r.md")], repeat),
        timed("report (html)", ["--db", db, "report", big_id, "-o", str(folder / "r.html")], repeat),
        timed("TUI sessions listing", ["tui-listing", db], repeat),
        timed("TUI open session (results view)", ["tui-open", db, session.id], repeat),
    ]
    return rows


def main_(arms: int, repeat: int, repeat_full: int, only_full: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        calibration = time.perf_counter()
        sum(range(10**7))
        # On a shared box the figures scale with its load: this says how busy it was.
        print(f"load gauge: sum(range(10**7)) took {time.perf_counter() - calibration:.2f} s (about 0.15 s on an idle core)")
        print(f"load average at the start: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}", flush=True)
        other = build(min(arms, 2_000))
        tables = {}
        variants = [(f"a result every {RESULT_EVERY} arms", RESULT_EVERY, repeat), ("every arm measured", 1, repeat_full)]
        for name, every, times in variants[1:] if only_full else variants:
            print(f"-- {name}", flush=True)
            tables[name] = (times, measure_session(build(arms, every), other, folder, times))
        for name, (times, rows) in tables.items():
            print(f"\n{name}\n| operation | seconds, median of {times} (min-max) | CPU s, median | peak RSS MiB |\n|---|---|---|---|")
            for label, seconds, rss in rows:
                cpu = CPU_SECONDS.get(label)
                cpu_text = f"{statistics.median(cpu[-times:]):.1f}" if cpu else "-"
                if math.isinf(max(seconds)):
                    print(f"| {label} | over {OPERATION_LIMIT_S:.0f} (stopped) in {sum(map(math.isinf, seconds))} of {times} | {cpu_text} | {rss:.0f} |")
                else:
                    print(f"| {label} | {statistics.median(seconds):.1f} ({min(seconds):.1f}-{max(seconds):.1f}) | {cpu_text} | {rss:.0f} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("arms", nargs="?", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--repeat-full", type=int, default=1, help="runs of each operation on the fully measured session (minutes each at 100k)")
    parser.add_argument("--only-full", action="store_true", help="measure the fully measured session only")
    args = parser.parse_args()
    main_(args.arms, args.repeat, args.repeat_full, args.only_full)
