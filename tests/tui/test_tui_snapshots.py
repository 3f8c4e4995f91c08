"""Snapshots of every screen at 80x24 and 120x40 with fixed profiles (no host names, clocks or GPUs
from this machine). Update after a deliberate visual change: pytest tests/tui --snapshot-update."""

from __future__ import annotations

import asyncio

import pytest
from conftest import settle
from textual.widgets import Input

from specadvisor.store import Store
from tui_fakes import MODEL, finished_session

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]


async def to_advice(pilot) -> None:
    await settle(pilot)
    pilot.app.screen.query_one("#model", Input).value = MODEL.id
    await pilot.press("f5")
    await settle(pilot)


@pytest.mark.parametrize("size", SIZES)
def test_setup(snap_compare, make_app, size):
    async def run_before(pilot):
        await settle(pilot)
        pilot.app.screen.query_one("#model", Input).value = MODEL.id
        await pilot.press("enter")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_advice(snap_compare, make_app, size):
    assert snap_compare(make_app(), terminal_size=size, run_before=to_advice)


@pytest.mark.parametrize("size", SIZES)
def test_sweep_live(snap_compare, make_app, size):
    """Mid-arm: ngram N=4 half measured, baseline done, acceptance bars and the queue visible."""
    hold = asyncio.Event()

    async def run_before(pilot):
        await to_advice(pilot)
        await pilot.press("ctrl+s")
        for _ in range(50):
            await pilot.pause(0.05)
            row = pilot.app.state.sweep_state.arms.get("ngram-n4")
            if row is not None and row.completed == 3:
                break
        await pilot.pause(0.2)

    assert snap_compare(make_app(hold=hold, hold_arm="ngram-n4"), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_sweep_finished_with_log(snap_compare, make_app, size):
    async def run_before(pilot):
        await to_advice(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        await pilot.pause(0.2)
        await pilot.press("l")
        await pilot.pause(0.1)

    assert snap_compare(make_app(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_results(snap_compare, make_app, db_path, size):
    with Store.open(db_path) as store:
        finished_session(store, name="smollm2-code")

    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("f3")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause(0.1)

    assert snap_compare(make_app(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_sessions(snap_compare, make_app, db_path, size):
    from datetime import timedelta

    from tui_fakes import FIXED_TIME

    with Store.open(db_path) as store:
        finished_session(store, name="smollm2-code", session_id="5e55c0de-0000-4000-8000-000000000001")
        finished_session(store, name="smollm2-chat", created=FIXED_TIME + timedelta(days=1), session_id="c4a7c4a7-0000-4000-8000-000000000002")

    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("f3")
        await pilot.pause()
        await pilot.press("space")
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_help(snap_compare, make_app, size):
    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("f1")
        await pilot.pause(0.2)

    assert snap_compare(make_app(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_setup_inline_error(snap_compare, make_app, size):
    """A bad field: the message under it names its label, the field keeps the focus."""

    async def run_before(pilot):
        await settle(pilot)
        pilot.app.screen.query_one("#output_len", Input).value = "0"
        pilot.app.screen.query_one("#model", Input).value = MODEL.id
        await pilot.press("f5")
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_error_modal(snap_compare, make_app, size):
    async def run_before(pilot):
        await settle(pilot)
        pilot.app.screen.query_one("#model", Input).value = "missing/model"
        await pilot.press("enter")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_compare(snap_compare, make_app, db_path, size):
    from datetime import timedelta

    from tui_fakes import FIXED_TIME

    with Store.open(db_path) as store:
        finished_session(store, name="smollm2-code")
        finished_session(store, name="smollm2-code-t07", created=FIXED_TIME + timedelta(days=1))

    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("f3")
        await pilot.pause()
        await pilot.press("space", "down", "space", "c")
        await pilot.pause(0.1)

    assert snap_compare(make_app(), terminal_size=size, run_before=run_before)
