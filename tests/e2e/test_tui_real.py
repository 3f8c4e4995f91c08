"""The TUI driving a real sweep on the CPU build of vLLM (SmolLM2-135M, n-gram), and quitting
mid-sweep stopping the real server's process group."""

from __future__ import annotations

import asyncio
import time

import psutil
import pytest
from textual.widgets import DataTable, Static

from specadvisor.app.demo import demo
from specadvisor.domain import ArmStatus
from specadvisor.store import Store
from specadvisor.tui.app import create_app
from specadvisor.tui.screens.results import ResultsScreen
from specadvisor.tui.screens.sweep import SweepScreen
from specadvisor.tui.services import default_services
from specadvisor.tui.widgets.charts import AcceptanceChart, ThroughputChart
from specadvisor.tui.widgets.modals import ConfirmModal

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.timeout(1500)]


def vllm_children() -> list[psutil.Process]:
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            if "vllm" in " ".join(child.cmdline()):
                found.append(child)
        except psutil.Error:
            continue
    return found


def _stored_status(db, session_id: str) -> str | None:
    if not db.exists():
        return None
    with Store.open(db) as store:
        return store.get_session(session_id).status if store.has_session(session_id) else None


async def wait_for(predicate, pilot, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting for the sweep"
        await pilot.pause(0.5)


async def test_tui_runs_a_real_sweep_to_results(cpu_engine, tmp_path):
    db = tmp_path / "tui.db"
    session = demo(cpu_engine, [4], num_prompts=4, output_len=32).session
    services = default_services(db, server_env=dict(cpu_engine.env))
    app = create_app(services, sweep=session, cursor_blink=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.5)
        assert isinstance(app.screen, SweepScreen)
        await wait_for(lambda: app.state.sweep_state.log_count > 3, pilot, 300)  # real server output streams in
        await wait_for(lambda: app.state.sweep_state.finished or not app.state.sweep_running, pilot, 1200)
        await pilot.pause(1.5)
        state = app.state.sweep_state
        assert state.finished, list(state.warnings)
        assert {a: r.status for a, r in state.arms.items()} == {"baseline": ArmStatus.ok, "ngram-n4": ArmStatus.ok}
        queue = app.screen.query_one("#queue", DataTable)
        icons = [str(queue.get_row_at(i)[0]) for i in range(queue.row_count)]
        chosen = state.recommendation.arm_id if state.recommendation else None
        rows = [key for key, _ in state.rows()]  # the baseline's bracket re-run is a row of its own
        assert rows[:2] == ["baseline", "ngram-n4"] and rows[2:] in ([], ["baseline · bracket re-run"])
        assert icons == ["★" if key == chosen else "✔" for key in rows]
        rates = app.screen.query_one("#acceptance", AcceptanceChart).rates
        assert len(rates) == 4 and all(0.0 <= r <= 1.0 for r in rates) and rates[0] >= rates[-1]
        points = {p.label: p.measured for p in app.screen.query_one("#throughput", ThroughputChart).points}
        assert points["baseline"] > 0 and points["n-gram N=4"] > 0
        await pilot.press("r")
        await pilot.pause(0.5)
        assert isinstance(app.screen, ResultsScreen)
        text = str(app.screen.query_one("#recommendation-text", Static).render())
        assert "baseline" in text or "ngram" in text or "speculate" in text.lower()
        await pilot.press("ctrl+q")
    assert not vllm_children()
    with Store.open(db) as store:
        stored = store.get_session(session.id)
        assert stored.status == "finished" and len(stored.results) == 2


async def test_quitting_mid_sweep_stops_the_real_server(cpu_engine, tmp_path):
    db = tmp_path / "quit.db"
    session = demo(cpu_engine, [2], num_prompts=4, output_len=32).session
    services = default_services(db, server_env=dict(cpu_engine.env))
    app = create_app(services, sweep=session, cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        # past the pre-launch checks (a vLLM import of their own): the session is stored and a server starts
        await wait_for(lambda: _stored_status(db, session.id) == "running" and bool(vllm_children()), pilot, 240)
        await pilot.pause(3)
        assert vllm_children(), "the real vLLM server is running"
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press("y")
        await pilot.pause(1)
    for _ in range(60):
        if not vllm_children():
            break
        await asyncio.sleep(0.5)
    assert not vllm_children(), "quitting stopped the vLLM process group"
    with Store.open(db) as store:
        assert store.get_session(session.id).status in ("interrupted", "running")
