"""Pilot tests of sweep control: quitting mid-sweep asks and stops servers; failures reach the modal."""

from __future__ import annotations

import asyncio

from conftest import settle, to_advice
from textual.widgets import Collapsible, Input, RichLog

from specadvisor.store import Store
from specadvisor.tui.messages import SweepRequested
from specadvisor.tui.screens.sweep import SweepScreen
from specadvisor.tui.widgets.modals import ConfirmModal, ErrorModal


async def test_quit_during_sweep_asks_then_stops_servers(make_app, calls, db_path):
    hold = asyncio.Event()
    app = make_app(hold=hold)
    async with app.run_test(size=(120, 40)) as pilot:
        await to_advice(app, pilot)
        await pilot.press("ctrl+s")
        await pilot.pause(0.2)
        assert isinstance(app.screen, SweepScreen) and app.state.sweep_running
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press("n")
        await pilot.pause()
        assert app.is_running and calls.stop_servers == 0
        await pilot.press("ctrl+q")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert calls.stop_servers == 1 and calls.runners[0].cancelled
    assert app.return_value == 0
    with Store.open(db_path) as store:
        [summary] = store.list_sessions()
        assert summary.status == "running"  # left resumable: the real runner marks it interrupted


async def test_a_screen_asking_for_a_second_sweep_is_refused_while_one_runs(make_app, calls):
    """Screens ask the app for a sweep with a message; the app owns the one sweep worker and says no."""
    hold = asyncio.Event()
    app = make_app(hold=hold)
    async with app.run_test(size=(120, 40)) as pilot:
        await to_advice(app, pilot)
        await pilot.press("ctrl+s")
        await pilot.pause(0.2)
        sweep_screen = app.screen
        assert isinstance(sweep_screen, SweepScreen) and app.state.session is not None
        sweep_screen.post_message(SweepRequested(app.state.session))
        await pilot.pause(0.1)
        assert app.screen is sweep_screen and len(calls.runners) == 1
        assert "A sweep is already running." in [str(n.message) for n in app._notifications]
        hold.set()
        await settle(pilot)


async def test_runner_failure_opens_error_modal_with_hint(make_app):
    app = make_app(fail_arm="ngram-n4")
    async with app.run_test(size=(120, 40)) as pilot:
        await to_advice(app, pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, ErrorModal)
        assert "vLLM exited while starting arm ngram-n4" in app.screen.message
        assert app.screen.hint == "read the server log (l)"
        await pilot.press("escape")
        await pilot.pause(0.1)
        assert isinstance(app.screen, SweepScreen) and not app.state.sweep_running


async def test_server_log_opens_and_filters(make_app):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await to_advice(app, pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        await pilot.press("l")
        await pilot.pause()
        assert not app.screen.query_one("#log-box", Collapsible).collapsed
        log = app.screen.query_one("#log", RichLog)
        assert len(log.lines) >= 8  # a command, a start line and a ready line per arm
        await pilot.press("slash")
        app.screen.query_one("#log-filter", Input).value = "ready in"
        await pilot.pause(0.1)
        assert len(log.lines) == 4


async def test_real_runs_chain_the_server_reaper_into_signal_handlers(make_app):
    import signal

    from specadvisor.engine import reaper

    previous = {sig: signal.getsignal(sig) for sig in reaper._HANDLED_SIGNALS}
    app = make_app()
    app.guard_signals = True
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            assert signal.getsignal(signal.SIGTERM) is reaper._on_signal
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


async def test_unusable_database_at_start_shows_the_store_error(make_app, db_path):
    db_path.write_text("this is not a sqlite database, just text " * 100)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await to_advice(app, pilot)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ErrorModal)
        assert app.screen.title_text == "Cannot start the sweep"
        assert str(db_path) in app.screen.message
        assert not app.state.sweep_running


async def test_measurement_warnings_pop_up_as_they_happen(make_app):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await to_advice(app, pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        messages = [n.message for n in app._notifications]
        assert any("clamped by max_model_len" in m for m in messages)


async def test_finishing_notifies_once(make_app):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await to_advice(app, pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        await pilot.pause(0.2)
        finished = [n for n in app._notifications if n.message.startswith("Sweep finished")]
        assert len(finished) == 1
