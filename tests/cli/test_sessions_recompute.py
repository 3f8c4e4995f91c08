"""`sessions show --recompute`: the real H200 bundles, imported with their stored verdicts removed, are
re-judged from their measurements by this version's decision rule (nothing runs, nothing is written)."""

from __future__ import annotations

import json
from pathlib import Path

from specadvisor.cli.main import main
from specadvisor.domain import Recommendation
from specadvisor.report.content import build
from specadvisor.store import Store
from specadvisor.tui.format import verdict_headline

H200 = Path(__file__).parents[1] / "fixtures" / "h200"


def import_without_verdict(tmp_path, name):
    document = json.loads((H200 / name).read_text())
    document["session"]["recommendation"] = None
    bundle = tmp_path / name
    bundle.write_text(json.dumps(document))
    db = tmp_path / "cli.db"
    assert main(["--db", str(db), "sessions", "import", str(bundle)]) == 0
    with Store.open(db) as store:
        (summary,) = store.list_sessions()
    return db, summary.id


def show(db, session_id, capsys, *flags):
    capsys.readouterr()
    code = main(["--db", str(db), "sessions", "show", session_id, *flags])
    out, _ = capsys.readouterr()
    assert code == 0
    return out


def test_recompute_gives_the_edit_rename_verdict_in_json_text_report_and_tui(tmp_path, capsys):
    db, sid = import_without_verdict(tmp_path, "edit-rename-ngram-c1.bundle.json")
    before = json.loads(show(db, sid, capsys, "--json"))
    assert before["recommendation"]["verdict"] == "speculate: ngram N=4"  # computed once at import: every view reads it
    after = json.loads(show(db, sid, capsys, "--json", "--recompute"))
    assert after["recomputed"] is True and after["stored_verdict"] == "speculate: ngram N=4"
    rec = after["recommendation"]
    assert rec["verdict"] == "speculate: ngram N=4" and rec["per_concurrency"][0]["verdict"] == "speculate: ngram N=4"
    text = show(db, sid, capsys, "--recompute")
    assert "Verdict: speculate: ngram N=4 (1.34x)" in text and "verdict recomputed" in text
    assert "WITHHELD" not in text and "wins the tie" not in text
    with Store.open(db) as store:
        session = store.get_session(sid)
    assert session.recommendation == Recommendation.model_validate(before["recommendation"])  # recompute wrote nothing
    report = build(session.model_copy(update={"recommendation": None}))  # the report recomputes a missing verdict the same way
    assert report.verdict[0] == "verdict: speculate: ngram N=4"
    from specadvisor.analysis.recommend import recommend

    assert verdict_headline(recommend(session), "n-gram N=4", "1.34x").startswith("Speculate: n-gram N=4")


def test_recompute_gives_do_not_speculate_at_both_levels_for_humaneval(tmp_path, capsys):
    db, sid = import_without_verdict(tmp_path, "humaneval-ngram-c1-c8.bundle.json")
    rec = json.loads(show(db, sid, capsys, "--json", "--recompute"))["recommendation"]
    assert rec["decision"] == "do not speculate" and rec["do_not_speculate"] is True
    assert [(p["concurrency"], p["verdict"]) for p in rec["per_concurrency"]] == [(1, "do not speculate"), (8, "do not speculate")]
    text = show(db, sid, capsys, "--recompute")
    assert "Verdict: do not speculate (at concurrency 1 and 8)" in text
    # each level's answer is in the headline, said once (issue 41): its reasons follow without repeating it
    assert "at concurrency 8: do not speculate" not in text and "- at concurrency 8: " in text


def test_a_stored_old_verdict_is_shown_as_such_and_recompute_replaces_it(tmp_path, capsys):
    db = tmp_path / "cli.db"
    assert main(["--db", str(db), "sessions", "import", str(H200 / "edit-rename-ngram-c1.bundle.json")]) == 0
    with Store.open(db) as store:
        (summary,) = store.list_sessions()
    text = show(db, summary.id, capsys)
    assert "no verdict stored" in text and "--recompute" in text
    after = json.loads(show(db, summary.id, capsys, "--json", "--recompute"))
    assert after["stored_verdict"].startswith("no verdict stored") and after["recommendation"]["verdict"] == "speculate: ngram N=4"
