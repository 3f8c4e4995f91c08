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
        assert compare.row_count == 8  # each arm, each session
        assert [str(c) for c in compare.get_row("ngram-n4/A")] == ["n-gram N=4", "A", "15.4", "1.54x [1.04-2.28]", "3.62"]
        assert [str(c) for c in compare.get_row("ngram-n4/B")] == ["", "B", "15.4", "1.54x [1.04-2.28]", "3.62"]
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


def seed_named(db_path) -> dict[str, str]:
    """beta (oldest), alpha, gamma (newest, imported from a bundle): name -> id."""
    ids = {}
    with Store.open(db_path) as store:
        for hours, name in enumerate(("beta", "alpha", "gamma")):
            session = finished_session(store, name=name, created=FIXED_TIME + timedelta(hours=hours))
            if name == "gamma":
                session.provenance.origin = "imported"
                store.save_session(session)
            ids[name] = session.id
    return ids


def names(app, table) -> list[str]:
    return [row(app, table, i)["name"] for i in range(table.row_count)]


async def test_an_imported_session_is_marked_and_the_mark_explained(make_app, db_path):
    """Issue 41: Sessions did not say which sessions were imported (read-only evidence, never resumed)."""
    seed_named(db_path)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        table = await open_sessions(app, pilot)
        marks = {row(app, table, i)["name"]: row(app, table, i)[" "] for i in range(table.row_count)}
        assert marks == {"gamma": " ⇣", "alpha": "  ", "beta": "  "}
        assert "⇣ imported (read-only evidence)" in str(app.screen.query_one("#sessions-hint", Static).render())


async def test_slash_filters_the_list_and_escape_clears_it_first(make_app, db_path):
    """Issue 41: no filter (k9s, lazygit: `/`). Words match any column, the origin too; Esc clears, then leaves."""
    seed_named(db_path)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        table = await open_sessions(app, pilot)
        assert names(app, table) == ["gamma", "alpha", "beta"]  # newest first
        await pilot.press("slash", *"alp")
        await pilot.pause()
        assert names(app, table) == ["alpha"] and 'filter "alp": 1 of 3' in str(table.border_title)
        await pilot.press("enter")  # keeps the filter, back to the list
        await pilot.pause()
        assert app.focused is table and names(app, table) == ["alpha"]
        await pilot.press("slash", "ctrl+u", *"imported")
        await pilot.pause()
        assert names(app, table) == ["gamma"]
        await pilot.press("ctrl+u", *"nothing-like-it")
        await pilot.pause()
        assert table.row_count == 0 and 'No session matches "nothing-like-it"' in str(app.screen.query_one("#sessions-hint", Static).render())
        await pilot.press("escape")  # clears the filter, stays
        await pilot.pause()
        assert isinstance(app.screen, SessionsScreen) and names(app, table) == ["gamma", "alpha", "beta"]
        await pilot.press("escape")  # then leaves
        await pilot.pause()
        assert not isinstance(app.screen, SessionsScreen)


async def test_s_sorts_by_the_next_column_and_shift_s_reverses(make_app, db_path):
    """Issue 41: no sort. `s` steps through the columns shown, `S` turns the order round, the title says which."""
    seed_named(db_path)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        table = await open_sessions(app, pilot)
        assert str(table.border_title) == "Saved sessions · sorted by created (UTC) ↓"
        for _ in range(len(app.screen.columns)):
            if "sorted by name" in str(table.border_title):
                break
            await pilot.press("s")
            await pilot.pause()
        assert str(table.border_title) == "Saved sessions · sorted by name ↑" and names(app, table) == ["alpha", "beta", "gamma"]
        await pilot.press("S")
        await pilot.pause()
        assert str(table.border_title) == "Saved sessions · sorted by name ↓" and names(app, table) == ["gamma", "beta", "alpha"]
        await pilot.press("space")  # marking reloads the list: the sort stays
        await pilot.pause(0.2)
        assert names(app, table) == ["gamma", "beta", "alpha"]
        x = 1  # a click on a column's header sorts by it (again: the other way)
        for column in table.columns.values():
            if str(column.label) == "name":
                await pilot.click("#sessions", offset=(x + 2, 1))
                break
            x += column.get_render_width(table)
        await pilot.pause(0.2)
        assert str(table.border_title) == "Saved sessions · sorted by name ↑" and names(app, table) == ["alpha", "beta", "gamma"]


def test_the_view_sorts_numbers_as_numbers_and_empty_cells_last():
    from types import SimpleNamespace

    from specadvisor.tui.session_list import SessionView

    def summary(name, best, arms):
        return SimpleNamespace(id=name, name=name, model="m", workload="code", status="finished", arms=arms, best_speedup=best, created_at=FIXED_TIME)

    rows = [summary("a", 1.2, 10), summary("b", None, 9), summary("c", 10.5, 2)]
    best = SessionView().sorted_by("best")
    assert [s.name for s in best.apply(rows)] == ["c", "a", "b"]  # fastest first, no figure last
    assert [s.name for s in best.reversed().apply(rows)] == ["a", "c", "b"]
    assert [s.name for s in SessionView().sorted_by("arms").apply(rows)] == ["a", "b", "c"]
    assert [s.name for s in SessionView(filter="10.50X FINISHED").apply(rows)] == ["c"]  # every word, any case


async def test_compare_shows_intervals_at_80_columns_and_no_difference_for_the_same_prompts_elsewhere(make_app, db_path):
    """Issue 41: Compare showed speedups without their intervals (the CLI prints the verdict's interval), and
    flagged a prompt-path difference where the prompt hashes matched."""
    with Store.open(db_path) as store:
        for hours, path in enumerate(("/home/alice/prompts.jsonl", "/data/team/prompts.jsonl")):
            session = finished_session(store, name=f"run-{hours}", created=FIXED_TIME + timedelta(hours=hours))
            session.settings = session.settings.replace(prompt_source=path)
            session.provenance.prompt_sha256 = "ab" * 32  # the same prompts
            store.save_session(session)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await open_sessions(app, pilot)
        await pilot.press("space", "down", "space", "c")
        await pilot.pause()
        compare = app.screen.query_one("#compare", DataTable)
        cells = [str(c) for c in compare.get_row("ngram-n4/A")]
        assert cells[3] == "1.54x [1.04-2.28]" and str(compare.get_row("baseline/B")[3]) == "1.00x (baseline)"
        assert sum(column.get_render_width(compare) for column in compare.columns.values()) <= 80 - 4, "every column on screen"
        differences = str(app.screen.query_one("#compare-differences", Static).render())
        assert "prompt source" not in differences and "compare directly" in differences
