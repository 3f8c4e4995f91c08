"""Results screen exports (snippet, Markdown/HTML report, bundle) and resuming a sweep from Sessions."""

from __future__ import annotations

import asyncio

from conftest import settle
from textual.widgets import DataTable, Input

from specadvisor.store import Store
from specadvisor.tui.screens.results import ResultsScreen
from specadvisor.tui.screens.sweep import SweepScreen
from specadvisor.tui.widgets.modals import ErrorModal
from tui_fakes import finished_session


async def open_results(app, pilot):
    await settle(pilot)
    await pilot.press("f3")
    await pilot.pause()
    await pilot.press("enter")
    await pilot.pause()
    assert isinstance(app.screen, ResultsScreen)


async def answer(app, pilot, key: str, text: str) -> None:
    await pilot.press(key)
    await pilot.pause()
    app.screen.query_one("#prompt-input", Input).value = text
    await pilot.press("enter")
    await settle(pilot)


async def test_saves_snippet_reports_and_bundle(make_app, db_path, tmp_path):
    with Store.open(db_path) as store:
        session = finished_session(store)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await open_results(app, pilot)
        await answer(app, pilot, "s", str(tmp_path / "serve.sh"))
        await answer(app, pilot, "e", str(tmp_path / "report.md"))
        await answer(app, pilot, "e", str(tmp_path / "report.html"))
        await answer(app, pilot, "b", str(tmp_path / "bundle.json"))
    snippet = (tmp_path / "serve.sh").read_text()
    assert snippet.startswith("#!/usr/bin/env bash\nvllm serve ") and "ngram" in snippet
    assert (tmp_path / "serve.sh").stat().st_mode & 0o111, "the saved script is executable"
    assert session.model in (tmp_path / "report.md").read_text()
    assert (tmp_path / "report.html").read_text().lstrip().lower().startswith("<!doctype html")
    assert session.id in (tmp_path / "bundle.json").read_text()
    assert not list(tmp_path.glob(".*.tmp")), "no temporary files left behind"


async def test_export_into_a_missing_folder_is_an_error_and_writes_nothing(make_app, db_path, tmp_path):
    with Store.open(db_path) as store:
        finished_session(store)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await open_results(app, pilot)
        await answer(app, pilot, "e", str(tmp_path / "nope" / "report.md"))
        assert isinstance(app.screen, ErrorModal)
        assert "does not exist" in app.screen.message and app.screen.hint == "create it or choose another path"
    assert not (tmp_path / "nope").exists()


async def test_resume_shows_stored_arms_done_and_runs_the_rest(make_app, db_path, calls):
    with Store.open(db_path) as store:
        session = finished_session(store)
        store.delete_session(session.id)
        session.results = session.results[:2]
        session.status = "interrupted"
        session.recommendation = None
        store.save_session(session)
    hold = asyncio.Event()
    missing = [a.id for a in session.arms if a.id not in {r.arm_id for r in session.results}]
    app = make_app(hold=hold, hold_arm=missing[0])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await pilot.pause()
        await pilot.press("r")
        await pilot.pause(0.2)
        assert isinstance(app.screen, SweepScreen)
        phases = {a: r.phase for a, r in app.state.sweep_state.arms.items()}
        assert {a for a, p in phases.items() if p == "done"} == {r.arm_id for r in session.results}
        assert phases[missing[0]] == "measuring" and phases[missing[1]] == "queued"
        hold.set()
        await settle(pilot)
        assert app.state.sweep_state.finished
        queue = app.screen.query_one("#queue", DataTable)
        assert queue.row_count == 4
    assert calls.runners and calls.runners[0].session.id == session.id


def test_a_capacity_session_answers_in_request_rates():
    from specadvisor.analysis.capacity import recommend_capacity
    from specadvisor.domain import ArmResult, RatePoint, SweepSettings
    from specadvisor.sweep.plan import plan_from_methods
    from specadvisor.tui.screens.results import recommendation_text

    session = plan_from_methods("org/m", [("ngram", {})], [2], SweepSettings(slo_tpot_ms=250, goodput=True)).session
    session.results = [
        ArmResult(arm_id="baseline", goodput_rps=1.6, rate_points=[RatePoint(rate=1.6, meets_slo=True), RatePoint(rate=3.2)]),
        ArmResult(arm_id="ngram-n2", goodput_rps=2.4, rate_points=[RatePoint(rate=2.4, meets_slo=True)]),
    ]
    rec = recommend_capacity(session)
    text = recommendation_text(session, rec, "vllm serve org/m")
    assert text.startswith("Capacity: at p99 TPOT <= 250 ms, n-gram N=2 sustains 2.4 req/s against 1.6 req/s without speculation")
    assert "• baseline: goodput 1.60 req/s (2 rates measured)" in text and text.endswith("vllm serve org/m")
