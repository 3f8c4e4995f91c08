"""A name from a bundle in Textual's own markup (round three): `ok [/` and `[link=http://evil` raised
MarkupError on the Results screen (Rich's escape does not cover Textual's parser, and a cut at 80
characters could leave half a tag), and `[$accent]` was applied as a style. Every title shows the
name literally; the screen opens."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from textual.markup import to_content
from textual.widgets import DataTable

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tui"))

from specadvisor import textsafe
from specadvisor.store import Store
from specadvisor.tui.app import create_app
from specadvisor.tui.screens.results import ResultsScreen
from tui_fakes import WORKLOAD, Calls, fake_services, finished_session

HOSTILE_NAMES = [
    "ok [/",
    "[link=http://evil.example]click[/link]",
    "[link=http://evil",
    "[$accent]styled",
    "x" * 74 + "[bold]cut[/bold]",
    "a\\[b] [@click=app.quit]q",
]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_tui_markup_shows_any_text_literally(name):
    escaped = textsafe.tui_markup(name, 80)
    content = to_content(escaped)
    assert content.spans == [] and content.plain == textsafe.line(name, 80)


@pytest.mark.parametrize("name", HOSTILE_NAMES)
async def test_results_screen_opens_on_a_hostile_session_name(tmp_path, name):
    db = tmp_path / "s.db"
    with Store.open(db) as store:
        session = finished_session(store, name=name)
    app = create_app(fake_services(db, Calls()), cursor_blink=False, workload=WORKLOAD)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        app.push_screen(ResultsScreen(session))
        await pilot.pause()
        await pilot.pause(0.1)
        assert isinstance(app.screen, ResultsScreen)
        table = app.screen.query_one("#results", DataTable)
        shown = table._border_title.plain if table._border_title is not None else ""
        assert shown == f"Arms measured ({textsafe.line(name, 80)})"
