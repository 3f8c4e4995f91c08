"""How listing, comparing and reporting scale with a huge shared session (the issue: 80,000 arms hung
`sessions list` for minutes because a per-arm baseline lookup scanned every arm).

Builds a session with ARMS arms (64 concurrency levels, each a baseline and ngram families at
N=1..8, a result for every RESULT_EVERY-th arm), writes it as a compact bundle, imports it through the CLI into a
fresh database, then times `sessions list`, `sessions compare`, `report` (Markdown and HTML) and the
TUI's sessions listing query, `sessions show`. Run: python benchmarks/bundle_scale.py [ARMS] (default 80000).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path

from specadvisor.cli.main import main
from specadvisor.domain import Arm, ArmResult, Session, SweepSettings
from specadvisor.store import Store
from specadvisor.store.bundle import bundle_document, export_bundle

RESULT_EVERY = 50
N_VALUES = 8
LEVELS = 64


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
    """The exported bundle document without indentation: what a hostile 80,000-arm bundle under the
    20 MB limit looks like (`sessions export` indents, which would not fit)."""
    path.write_text(json.dumps(bundle_document(session), separators=(",", ":")), encoding="utf-8")
    return path


def timed(label: str, argv: list[str]) -> float:
    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    elapsed = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"{label}: exit {code}: {err.getvalue().strip()}")
    print(f"{label:<28} {elapsed:8.2f} s   ({len(out.getvalue()) / 1e6:.1f} MB of output)")
    return elapsed


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
        db = str(folder / "s.db")
        timed("sessions import (big)", ["--db", db, "sessions", "import", str(big)])
        timed("sessions import (2000 arms)", ["--db", db, "sessions", "import", str(small)])
        timed("sessions list", ["--db", db, "sessions", "list"])
        timed("sessions list --json", ["--db", db, "sessions", "list", "--json"])
        timed("sessions compare", ["--db", db, "sessions", "compare", session.id[:8], other.id[:8], "--json"])
        timed("sessions compare (table)", ["--db", db, "sessions", "compare", session.id[:8], other.id[:8]])
        timed("sessions show", ["--db", db, "sessions", "show", session.id[:8]])
        timed("report (markdown)", ["--db", db, "report", session.id[:8], "-o", str(folder / "r.md")])
        timed("report (html)", ["--db", db, "report", session.id[:8], "-o", str(folder / "r.html")])
        start = time.perf_counter()
        with Store.open(Path(db)) as store:
            rows = store.list_sessions()  # what the TUI's Sessions screen lists
        print(f"{'TUI sessions listing':<28} {time.perf_counter() - start:8.2f} s   ({len(rows)} rows)")


if __name__ == "__main__":
    main_(int(sys.argv[1]) if len(sys.argv) > 1 else 80_000)
