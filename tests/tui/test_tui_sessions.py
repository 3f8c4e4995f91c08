"""Pilot tests of the Sessions screen on a real SQLite store: open, compare, export, import, delete."""

from __future__ import annotations

from datetime import timedelta

from conftest import settle
from rich.text import Text
from textual.widgets import DataTable, Input, Static

from specadvisor.store import Store
from specadvisor.tui.screens.results import ResultsScreen
from specadvisor.tui.screens.sessions import CompareScreen, SessionsScreen
from specadvisor.tui.widgets.modals import ConfirmModal, ErrorModal
from tui_fakes import FIXED_TIME, finished_session


def seed(db_path, count=2):
    with Store.open(db_path) as store:
        return [finished_session(store, name=f"run-{i}", created=FIXED_TIME + timedelta(hours=i)) for i in range(count)]


async def open_sessions(app, pilot):
    await settle(pilot)
    await pilot.press("f3")
    await pilot.pause()
    assert isinstance(app.screen, SessionsScreen)
    return app.screen.query_one("#sessions", DataTable)


def row(app, table, index: int) -> dict[str, str]:
    """A sessions row by column name (the columns shown depend on the width)."""
    return dict(zip([" ", *app.screen.columns], [str(c) for c in table.get_row_at(index)], strict=True))


async def test_lists_newest_first_and_opens_results(make_app, db_path):
    sessions = seed(db_path)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        table = await open_sessions(app, pilot)
        assert [row(app, table, i)["name"] for i in range(2)] == ["run-1", "run-0"]
        assert row(app, table, 0)["best"] == "1.54x" and row(app, table, 0)["id"] == sessions[1].id[:8]
        assert {"id", "name", "model", "status", "arms", "best"} <= set(app.screen.columns)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ResultsScreen)
        results = app.screen.query_one("#results", DataTable)
        cells = {str(results.get_row_at(i)[0]): [str(c) for c in results.get_row_at(i)] for i in range(results.row_count)}
        assert cells["★ n-gram N=4"][3].startswith("1.54x")  # the recommended arm is starred
        assert cells["★ n-gram N=4"][4] == "3.62"
        assert "  baseline" in cells  # mean acceptance length 1 + 262/100


async def test_at_80_columns_the_id_status_arms_and_best_stay(make_app, db_path):
    """Issue 24: at 80x24 Sessions hid status, arms and best, and no column showed the ids toasts name."""
    sessions = seed(db_path)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        table = await open_sessions(app, pilot)
        assert {"id", "name", "status", "arms", "best"} <= set(app.screen.columns)
        first = row(app, table, 0)
        assert first["id"] == sessions[1].id[:8] and first["status"] == "finished" and first["best"] == "1.54x" and first["arms"] == "4"
        assert sum(table.columns[key].get_render_width(table) for key in table.columns) <= 80 - 4
        await pilot.resize_terminal(140, 30)
        await pilot.pause(0.2)
        assert "model" in app.screen.columns and row(app, table, 0)["model"] == sessions[1].model


async def test_empty_store_explains_what_to_do(make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await open_sessions(app, pilot)
        assert "No saved sessions yet" in str(app.screen.query_one("#sessions-hint", Static).render())


async def test_compare_two_marked_sessions(make_app, db_path):
    seed(db_path)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        table = await open_sessions(app, pilot)
        await pilot.press("c")
        assert isinstance(app.screen, SessionsScreen)  # fewer than two marked: only a notice
        await pilot.press("space", "down", "space", "c")
        await pilot.pause()
        assert isinstance(app.screen, CompareScreen)
        compare = app.screen.query_one("#compare", DataTable)
        assert compare.row_count == 4
        row = [str(c) for c in compare.get_row("ngram-n4")]
        assert row == ["n-gram N=4", "15.4", "1.54x", "3.62", "15.4", "1.54x", "3.62"]
        assert "compare directly" in str(app.screen.query_one("#compare-differences", Static).render())
        del table


async def test_delete_asks_first(make_app, db_path):
    sessions = seed(db_path)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        table = await open_sessions(app, pilot)
        await pilot.press("d")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press("n")
        await pilot.pause()
        assert table.row_count == 2
        await pilot.press("d")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert table.row_count == 1
    with Store.open(db_path) as store:
        assert [s.id for s in store.list_sessions()] == [sessions[0].id]


async def test_export_then_import_a_bundle(make_app, db_path, tmp_path):
    seed(db_path, count=1)
    bundle = tmp_path / "shared.json"
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        table = await open_sessions(app, pilot)
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#prompt-input", Input).value = str(bundle)
        await pilot.press("enter")
        await pilot.pause()
        assert bundle.is_file() and '"specadvisor-session-bundle"' in bundle.read_text()
        await pilot.press("d")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert table.row_count == 0
        await pilot.press("i")
        await pilot.pause()
        app.screen.query_one("#prompt-input", Input).value = str(bundle)
        await pilot.press("enter")
        await pilot.pause()
        assert table.row_count == 1
        assert "Imported session" in notices(app)[-1]
        # the same bundle again: the TUI says what the CLI says, and nothing is added
        await pilot.press("i")
        await pilot.pause()
        app.screen.query_one("#prompt-input", Input).value = str(bundle)
        await pilot.press("enter")
        await settle(pilot)
        assert table.row_count == 1
        assert notices(app)[-1].endswith("is already in the database; nothing imported.")


def notices(app) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def test_importing_a_non_bundle_shows_the_cause(make_app, tmp_path):
    junk = tmp_path / "junk.json"
    junk.write_text('{"hello": 1}')
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await open_sessions(app, pilot)
        await pilot.press("i")
        await pilot.pause()
        app.screen.query_one("#prompt-input", Input).value = str(junk)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ErrorModal)
        assert "junk.json" in app.screen.message


async def test_markup_in_shared_names_shows_literally_and_does_not_crash(make_app, db_path):
    """A bundle's name or model like `[/]`, `[link=...]` or `[@click=app.quit]` is text, not markup."""
    with Store.open(db_path) as store:
        session = finished_session(store, name="[/]", model="[link=https://evil.example]m[/link]")
        session.name = "[@click=app.quit]x[/]"
        store.save_session(session)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        table = await open_sessions(app, pilot)
        shown = [Text.from_markup(str(cell)).plain for cell in table.get_row_at(0)]  # what DataTable draws
        assert shown[2:4] == ["[@click=app.quit]x[/]", "[link=https://evil.example]m[/link]"]  # after the mark and the id
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ResultsScreen)  # opened, nothing raised, the app did not quit
        assert app.is_running


async def test_resume_of_an_imported_session_is_refused(make_app, db_path, calls):
    with Store.open(db_path) as store:
        session = finished_session(store, name="from-a-teammate")
        session.status = "interrupted"
        session.provenance.origin = "imported"
        session.provenance.imported_from = "bundle.json"
        store.save_session(session)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await open_sessions(app, pilot)
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(app.screen, ErrorModal)
        assert "read-only evidence" in str(app.screen.query_one("#error-message", Static).render())
        assert calls.runners == []
