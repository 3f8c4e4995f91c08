"""The results view of a session over the report's row cap lists what the report and `sessions show`
list (one rule: report.content.tabled_arms) and says what it left out: 100,000 rows took minutes."""

from __future__ import annotations

from conftest import settle
from textual.widgets import DataTable, Static

from specadvisor.domain import Arm, ArmResult, Session
from specadvisor.store import Store
from specadvisor.tui.screens.results import ResultsScreen


def big_session() -> Session:
    session = Session(id="cccc3333-0000-4000-8000-000000000003", name="big", model="org/model", status="finished")
    session.arms.append(Arm(id="baseline", label="baseline c1"))
    session.results.append(ArmResult(arm_id="baseline", completed=8, output_throughput=100.0))
    for i in range(30):
        session.arms.append(
            Arm(id=f"ngram-{i}", label=f"ngram {i} c1", method="ngram", n=2, speculative_config={"method": "ngram", "num_speculative_tokens": 2})
        )
        if i % 3 == 0:  # 10 measured, 20 never run
            session.results.append(ArmResult(arm_id=f"ngram-{i}", completed=8, output_throughput=100.0 + i))
    return session


async def test_a_session_over_the_row_cap_opens_summarised(make_app, db_path, monkeypatch):
    from specadvisor.report import content

    monkeypatch.setattr(content, "MAX_REPORT_ARMS", 20)
    monkeypatch.setattr(content, "TOP_ARMS_PER_CONCURRENCY", 2)
    with Store.open(db_path) as store:
        store.save_session(big_session())
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ResultsScreen)
        table = app.screen.query_one("#results", DataTable)
        assert [key.value for key in table.rows] == ["baseline", "ngram-24", "ngram-27"]
        assert table.border_subtitle == "3 of 31 arms (see below)"
        text = str(app.screen.query_one("#recommendation-text", Static).render())
        assert "This session holds 31 arms (11 measured); the table shows 3:" in text and "Left out: 28 arm(s)" in text


async def test_a_session_under_the_cap_lists_every_arm(make_app, db_path):
    session = big_session()
    with Store.open(db_path) as store:
        store.save_session(session)
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot)
        table = app.screen.query_one("#results", DataTable)
        assert table.row_count == 31 and not table.border_subtitle
        assert "Left out" not in str(app.screen.query_one("#recommendation-text", Static).render())


def test_the_panel_lists_the_first_reasons_and_counts_the_rest():
    from specadvisor.domain import Recommendation
    from specadvisor.tui.screens.results import MAX_PANEL_REASONS, recommendation_text

    session = big_session()
    rec = Recommendation(arm_id=None, decision="undecided", verdict="undecided", reasons=[f"reason {i}" for i in range(MAX_PANEL_REASONS + 7)])
    text = recommendation_text(session, rec, "")
    assert f"• reason {MAX_PANEL_REASONS - 1}" in text and f"• reason {MAX_PANEL_REASONS}\n" not in text
    assert text.splitlines()[-1] == "… 7 more reasons: `specadvisor sessions show cccc3333 --json` has them all"
    few = recommendation_text(session, rec.model_copy(update={"reasons": ["only one"]}), "")
    assert "more reasons" not in few and "• only one" in few
