"""An imported measured session without a verdict gets one computed at import, once, and every view
reads that one; a build whose decision code differs computes it again. `sessions show` lists 50
reasons, as the TUI does; --json redacts a session key by key with the same result as whole."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic_core import to_json

from specadvisor.analysis.recommend import recommend
from specadvisor.cli.main import main
from specadvisor.cli.output import print_json, to_jsonable
from specadvisor.domain import Recommendation
from specadvisor.redact import redact
from specadvisor.report.content import MAX_SHOWN_REASONS, build
from specadvisor.store import Store

H200 = Path(__file__).parents[1] / "fixtures" / "h200"


def imported_without_verdict(tmp_path):
    document = json.loads((H200 / "edit-rename-ngram-c1.bundle.json").read_text())
    document["session"]["recommendation"] = None
    bundle = tmp_path / "no-verdict.bundle.json"
    bundle.write_text(json.dumps(document))
    db = tmp_path / "cli.db"
    assert main(["--db", str(db), "sessions", "import", str(bundle)]) == 0
    return db, document["session"]["id"]


def show_json(db, session_id, capsys):
    capsys.readouterr()
    assert main(["--db", str(db), "sessions", "show", session_id, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_verdict_computed_at_import_is_what_show_json_report_and_listing_read(tmp_path, capsys):
    db, sid = imported_without_verdict(tmp_path)
    stored = show_json(db, sid, capsys)["recommendation"]
    with Store.open(db) as store:
        session = store.get_session(sid)
        (summary,) = store.list_sessions()
    computed = recommend(session.model_copy(update={"recommendation": None}))
    assert stored is not None and Recommendation.model_validate(stored) == computed
    assert stored["verdict"] == "speculate: ngram N=4"
    assert build(session).verdict[0] == f"verdict: {computed.headline}"
    assert summary.best_speedup == computed.speedup


def test_a_verdict_computed_by_other_decision_code_is_computed_again_by_every_view(tmp_path, capsys):
    db, sid = imported_without_verdict(tmp_path)
    with Store.open(db) as store:
        store.db.execute("UPDATE sessions SET verdict_computed_by = 'specadvisor 0.0.1 decision 0123456789abcdef'")
    assert show_json(db, sid, capsys)["recommendation"] is None  # not shown as this code's answer
    with Store.open(db) as store:
        session = store.get_session(sid)
    assert build(session).verdict[0] == "verdict: speculate: ngram N=4"  # recomputed from the measurements
    assert main(["--db", str(db), "sessions", "show", sid, "--json", "--recompute"]) == 0
    assert json.loads(capsys.readouterr().out)["recommendation"]["verdict"] == "speculate: ngram N=4"


def test_show_lists_the_first_reasons_and_says_how_many_it_left_out(tmp_path, capsys):
    db, sid = imported_without_verdict(tmp_path)
    with Store.open(db) as store:
        session = store.get_session(sid)
        reasons = [f"reason {i}" for i in range(MAX_SHOWN_REASONS + 7)]
        store.set_recommendation(sid, session.recommendation.model_copy(update={"reasons": reasons}))
    capsys.readouterr()
    assert main(["--db", str(db), "sessions", "show", sid]) == 0
    text = capsys.readouterr().out
    assert f"- reason {MAX_SHOWN_REASONS - 1}\n" in text and f"- reason {MAX_SHOWN_REASONS}\n" not in text
    assert f"… 7 more reasons: `specadvisor sessions show {sid[:8]} --json` has them all" in text
    assert len(show_json(db, sid, capsys)["recommendation"]["reasons"]) == MAX_SHOWN_REASONS + 7


def test_json_of_a_dict_is_redacted_key_by_key_as_the_whole_would_be(capsys):
    document = {
        "notes": "call with Authorization: Bearer abcdefghijklmnop1234",
        "api_key": "plain-value-under-a-secret-key",
        "reasons": ["--api-key", "hidden-next", "256 output tokens"],
        "arms": [Recommendation(arm_id="a", reasons=["clean"])],
        "clean": {"output_throughput": 1.5},
    }
    print_json(document)
    expected = to_json(redact(to_jsonable(document)), indent=2, ensure_ascii=True, fallback=str).decode("ascii") + "\n"
    out = capsys.readouterr().out
    assert out == expected
    assert "abcdefghijklmnop1234" not in out and "plain-value-under-a-secret-key" not in out and "hidden-next" not in out
