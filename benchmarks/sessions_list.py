"""How fast the Sessions screen opens on a store of 1,000 sessions (each with 4 measured arms).

Prints: the one-query `Store.list_sessions()` time (median of 5), and the TUI's time from pressing F3
until the table holds every row (median of 3), with the UI thread's longest stall meanwhile (the
list loads in a worker, so the UI keeps drawing).

    python benchmarks/sessions_list.py [--sessions 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "tui"))


def fill(db: Path, count: int) -> None:
    from specadvisor.store import Store
    from tui_fakes import FIXED_TIME, finished_session

    with Store.open(db) as store:
        template = finished_session(store, name="s0")
        for i in range(1, count):
            session = template.model_copy(deep=True)
            session.id = f"{i:08x}-0000-4000-8000-000000000000"
            session.name = f"s{i}"
            session.created_at = session.updated_at = FIXED_TIME + timedelta(minutes=i)
            store.save_session(session)


def time_query(db: Path) -> float:
    from specadvisor.store import Store

    runs = []
    with Store.open(db) as store:
        for _ in range(5):
            t0 = time.perf_counter()
            rows = store.list_sessions()
            runs.append(time.perf_counter() - t0)
    assert len(rows) >= 1
    return statistics.median(runs)


async def time_screen(db: Path, count: int) -> tuple[float, float, float]:
    from textual.widgets import DataTable

    from specadvisor.tui.app import create_app
    from tui_fakes import fake_services

    app = create_app(fake_services(db), cursor_blink=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        ticks: list[float] = []
        timer = app.set_interval(0.01, lambda: ticks.append(time.perf_counter()))  # runs on the UI loop
        t0 = time.perf_counter()
        first = None
        await pilot.press("f3")
        while True:
            await asyncio.sleep(0.005)
            table = app.screen.query("#sessions")
            rows = table.first(DataTable).row_count if table else 0
            if rows and first is None:
                first = time.perf_counter() - t0
            if rows >= count:
                break
            if time.perf_counter() - t0 > 60:
                raise SystemExit("the sessions table did not fill within 60 s")
        shown = time.perf_counter() - t0
        await pilot.pause(0.05)
        timer.stop()
        gaps = [b - a for a, b in itertools.pairwise(ticks)]
        stall = max(gaps, default=0.0)
        return shown, stall, first


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    args = parser.parse_args()
    db = Path(tempfile.mkdtemp()) / "sessions.db"
    t0 = time.perf_counter()
    fill(db, args.sessions)
    print(f"store: {args.sessions} sessions x 4 arms written in {time.perf_counter() - t0:.1f} s ({db.stat().st_size / 1e6:.1f} MB)")
    print(f"Store.list_sessions(): {time_query(db) * 1000:.0f} ms median of 5")
    opens = [asyncio.run(time_screen(db, args.sessions)) for _ in range(3)]
    print(
        f"Sessions screen, F3 to the first rows shown: {statistics.median(o[2] for o in opens) * 1000:.0f} ms median of 3; "
        f"to all {args.sessions} rows: {statistics.median(o[0] for o in opens) * 1000:.0f} ms; "
        f"longest gap between 10 ms UI timer ticks meanwhile {max(o[1] for o in opens) * 1000:.0f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
