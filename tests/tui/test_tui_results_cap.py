"""The results view of a session over the report's row cap lists what the report and `sessions show`
list (one rule: report.content.tabled_arms) and says what it left out: 100,000 rows took minutes."""

from __future__ import annotations

from conftest import settle
from textual.widgets import DataTable, Static

from specadvisor.domain import Session
from specadvisor.store import Store
from specadvisor.tui.screens.results import ResultsScreen


async def open_the_stored_session(db_path, session: Session, make_app, check) -> None:
    """Store `session`, open it from the Sessions screen (F3, Enter) as a user does, then `check` the
    Results screen it shows."""
    with Store.open(db_path) as store:
        store.save_session(session)
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ResultsScreen)
        check(app.screen.query_one("#results", DataTable), str(app.screen.query_one("#recommendation-text", Static).render()))


async def test_a_session_over_the_row_cap_opens_summarised(make_app, db_path, over_the_cap_session, capped_tables):
    def check(table: DataTable, text: str) -> None:
        assert [key.value for key in table.rows] == ["baseline", "ngram-24", "ngram-27"]
        assert table.border_subtitle == "3 of 31 arms (see below)"
        assert "This session holds 31 arms (11 measured); the table shows 3:" in text and "Left out: 28 arm(s)" in text

    await open_the_stored_session(db_path, over_the_cap_session, make_app, check)


async def test_a_session_under_the_cap_lists_every_arm(make_app, db_path, over_the_cap_session):
    def check(table: DataTable, text: str) -> None:
        assert table.row_count == 31 and not table.border_subtitle
        assert "Left out" not in text

    await open_the_stored_session(db_path, over_the_cap_session, make_app, check)


def test_the_panel_lists_the_first_reasons_and_counts_the_rest(over_the_cap_session):
    from specadvisor.domain import Recommendation
    from specadvisor.tui.screens.results import MAX_PANEL_REASONS, recommendation_text

    session = over_the_cap_session
    rec = Recommendation(arm_id=None, decision="undecided", verdict="undecided", reasons=[f"reason {i}" for i in range(MAX_PANEL_REASONS + 7)])
    text = recommendation_text(session, rec, "")
    assert f"• reason {MAX_PANEL_REASONS - 1}" in text and f"• reason {MAX_PANEL_REASONS}\n" not in text
    shown = text.splitlines()
    assert shown[-3] == "… 7 more reasons: `specadvisor sessions show cccc3333 --json` has them all"
    assert shown[-1].startswith("To decide it: ")  # undecided: the step that would decide it, never a serve command
    few = recommendation_text(session, rec.model_copy(update={"reasons": ["only one"]}), "")
    assert "more reasons" not in few and "• only one" in few
