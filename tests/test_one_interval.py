"""One interval per arm: the speedup every view shows is the one the verdict rests on.

On the two real H200 bundles, imported through the CLI with their stored verdicts removed and then
recomputed: for every speculative arm at every level, the interval in the TUI's results table, the
report's table, `sessions show` (text and --json), `sessions compare` and the sweep summary (--json)
is the one the verdict's reasons state, and for the arm the verdict rests on, exactly its stored
`speedup_ci`. Before this, the tables showed a narrower within-run interval for the same quantity.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from specadvisor.analysis.decision import name
from specadvisor.analysis.recommend import recommend
from specadvisor.analysis.summary import session_summary
from specadvisor.cli.main import main
from specadvisor.figures import all_speedups, speedup_text
from specadvisor.report.content import build
from specadvisor.store import Store
from specadvisor.store.compare import compare_sessions
from specadvisor.store.summary import summarize
from specadvisor.tui.format import result_row

H200 = Path(__file__).parent / "fixtures" / "h200"
BUNDLES = ["edit-rename-ngram-c1.bundle.json", "humaneval-ngram-c1-c8.bundle.json"]


def imported(tmp_path: Path, bundle: str, capsys):
    document = json.loads((H200 / bundle).read_text())
    document["session"]["recommendation"] = None  # re-judged by this version's rule
    path = tmp_path / bundle
    path.write_text(json.dumps(document))
    db = tmp_path / "one.db"
    assert main(["--db", str(db), "sessions", "import", str(path)]) == 0
    with Store.open(db) as store:
        (summary,) = store.list_sessions()
        session = store.get_session(summary.id)
    capsys.readouterr()
    return db, session


def stated_intervals(reasons: list[str]) -> dict[str, tuple[float, float, float]]:
    """(speedup, low, high) of each arm as the verdict's reasons print them."""
    found = {}
    for reason in reasons:
        for m in re.finditer(r"(\S+ N=\d+) at (\d+\.\d\d)x the baseline \([^;]*; interval (\d+\.\d\d)-(\d+\.\d\d)x", reason):
            found.setdefault(m.group(1), (float(m.group(2)), float(m.group(3)), float(m.group(4))))
    return found


@pytest.mark.parametrize("bundle", BUNDLES)
def test_every_table_shows_the_verdicts_interval(tmp_path, capsys, bundle):
    db, session = imported(tmp_path, bundle, capsys)
    rec = recommend(session)
    session.recommendation = rec
    speedups = all_speedups(session)
    report_rows = {row[0]: row for row in build(session).rows}
    summary_rows = {row["arm_id"]: row for row in session_summary(session)["arms"]}
    compared = {row.arm_id: row for row in compare_sessions([session]).arms}
    capsys.readouterr()
    assert main(["--db", str(db), "sessions", "show", session.id, "--recompute"]) == 0
    shown_text = capsys.readouterr().out
    assert main(["--db", str(db), "sessions", "show", session.id, "--recompute", "--json"]) == 0
    shown_json = json.loads(capsys.readouterr().out)["speedups"]
    checked = 0
    for pick in rec.per_concurrency:
        stated = stated_intervals(pick.reasons)
        for arm in (a for a in session.arms if a.concurrency == pick.concurrency and not a.is_baseline):
            figure = speedups[arm.id]
            value, low, high = stated[name(arm)]
            assert (round(figure.value, 2), round(figure.ci[0], 2), round(figure.ci[1], 2)) == (value, low, high)
            if pick.arm_id == arm.id or len(stated) == 1:  # the arm the verdict rests on: its stored figure, exactly
                assert (figure.value, figure.ci) == (pick.speedup, pick.speedup_ci)
            text = speedup_text(figure.value, figure.ci)
            assert text == f"{value:.2f}x [{low:.2f}-{high:.2f}]"
            assert result_row(arm.label, session.result_for(arm.id), figure)[3] == text  # TUI results table
            assert report_rows[arm.label][3] == text  # report table
            assert text in shown_text  # sessions show
            assert shown_json[arm.id]["speedup_ci"] == pytest.approx(list(figure.ci))  # sessions show --json
            assert summary_rows[arm.id]["speedup_ci"] == figure.ci  # sweep --json
            assert compared[arm.id].cells[0].speedup_ci == figure.ci  # sessions compare
            checked += 1
    assert checked == len([a for a in session.arms if not a.is_baseline]) >= 1


def test_an_undecided_session_names_no_best_config(tmp_path, capsys):
    _, session = imported(tmp_path, "edit-rename-ngram-c1.bundle.json", capsys)
    rec = recommend(session)
    rec.decision, rec.arm_id = "undecided", None  # as a sweep whose budget ran out before deciding stores it
    session.recommendation = rec
    summary = summarize(session)
    assert summary.best_arm == "undecided" and summary.best_speedup is None
    assert compare_sessions([session]).sessions[0].best_arm == "undecided"
