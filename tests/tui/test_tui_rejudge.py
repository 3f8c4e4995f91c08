"""The Sessions screen's re-judge (`v`): the real H200 bundles, imported into a real SQLite file with
their stored verdicts removed, get this version's verdict shown beside the stored one (none), the
same answer `sessions show --recompute` prints; nothing is written back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import settle
from textual.widgets import Static

from specadvisor.store import Store
from specadvisor.store.bundle import import_bundle
from specadvisor.tui.screens.sessions import SessionsScreen

H200 = Path(__file__).parents[1] / "fixtures" / "h200"


def import_without_verdict(db_path: Path, tmp_path: Path, name: str) -> str:
    document = json.loads((H200 / name).read_text())
    document["session"]["recommendation"] = None
    bundle = tmp_path / name
    bundle.write_text(json.dumps(document))
    with Store.open(db_path) as store:
        session, added = import_bundle(store, bundle)
    assert added
    return session.id


async def rejudged_panel(app, pilot) -> str:
    await settle(pilot)
    await pilot.press("f3")
    await settle(pilot)
    assert isinstance(app.screen, SessionsScreen)
    panel = app.screen.query_one("#sessions-verdict", Static)
    assert not panel.display  # nothing shown until asked
    await pilot.press("v")
    await settle(pilot)
    assert panel.display
    return str(panel.render())


@pytest.mark.parametrize(
    ("bundle", "verdict"),
    [
        ("edit-rename-ngram-c1.bundle.json", "re-judged now: speculate: ngram N=4 (1.34x, interval "),
        ("humaneval-ngram-c1-c8.bundle.json", "re-judged now: do not speculate (at concurrency 1 and 8)\n"),
    ],
)
async def test_v_shows_the_recomputed_verdict_next_to_the_stored_one(make_app, db_path, tmp_path, bundle, verdict):
    session_id = import_without_verdict(db_path, tmp_path, bundle)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        shown = await rejudged_panel(app, pilot)
        assert verdict in shown, shown
        assert shown.rstrip().endswith("stored:        none")
        assert app.screen.query_one("#sessions-verdict", Static).border_title == f"Verdict of {session_id[:8]}"
    with Store.open(db_path) as store:
        assert store.get_session(session_id).recommendation is None  # computed on the data, nothing stored
