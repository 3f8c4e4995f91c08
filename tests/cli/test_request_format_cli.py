"""The request format and the workload label are part of what a sweep measures (issue 38): chosen as
`vllm bench serve` would send the same prompts unless asked, recorded on the session, sent that way,
and shown by every view; the workload label follows `--prompts`.

Through main() on a real SQLite file; the vLLM process and the load generator are replaced at the
boundary, the prompts are loaded for real and what reaches the load generator is checked."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sweep"))
from specadvisor.cli.main import main
from specadvisor.sweep import runner as runner_module
from sweep_fakes import FakeMeasure, FakeServer


class RecordingMeasure(FakeMeasure):
    """FakeMeasure that keeps the prompt set each arm was measured with."""

    def __init__(self):
        super().__init__(lambda arm: {None: 100.0, 4: 150.0}[arm.n])
        self.prompt_sets: list = []

    def __call__(self, **kwargs):
        self.prompt_sets.append(kwargs["prompts"])
        return super().__call__(**kwargs)


@pytest.fixture
def engine(monkeypatch):
    measure = RecordingMeasure()
    monkeypatch.setattr(runner_module, "VllmServerFactory", lambda env=None: lambda arm, session: FakeServer(arm))
    monkeypatch.setattr(runner_module, "_default_measure", measure)
    return measure


def editing_file(tmp_path: Path) -> Path:
    """The issue's kind of file: every row has both `prompt` and `messages` (the same text)."""
    path = tmp_path / "edits.jsonl"
    rows = [{"id": f"e{i}", "prompt": f"Rewrite exactly, renaming x to y:\ndef f{i}(x):\n    return x + {i}\n"} for i in range(6)]
    path.write_text("".join(json.dumps({**row, "messages": [{"role": "user", "content": row["prompt"]}]}) + "\n" for row in rows))
    return path


def sweep(db, capsys, *extra) -> dict:
    argv = ["--db", str(db), "sweep", "--model", "m", "--method", "ngram", "--n", "4", "--num-prompts", "4", "--no-bracket", "--json", *extra]
    code = main(argv)
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


def test_a_file_with_messages_and_prompt_is_sent_through_the_chat_template_and_says_so(tmp_path, capsys, engine):
    data = sweep(tmp_path / "s.db", capsys, "--prompts", str(editing_file(tmp_path)))
    assert data["settings"]["request_format"] == "chat"  # recorded resolved, not "auto"
    assert data["workload"] == {
        "kind": "chat",
        "prompts": str(tmp_path / "edits.jsonl"),
        "request_format": "chat",
        "request_format_text": "chat: /v1/chat/completions, through the model's chat template",
    }
    # what reached the load generator: every prompt as chat messages, none as raw text
    assert engine.prompt_sets and all(ps.request_format == "chat" for ps in engine.prompt_sets)
    assert all(p.messages and p.text is None for ps in engine.prompt_sets for p in ps.prompts)


def test_raw_text_when_asked_is_recorded_and_the_difference_from_vllm_bench_serve_is_kept(tmp_path, capsys, engine):
    db = tmp_path / "s.db"
    data = sweep(db, capsys, "--prompts", str(editing_file(tmp_path)), "--request-format", "completions", "--workload", "edit")
    assert data["settings"]["request_format"] == "completions" and data["workload"]["kind"] == "edit"
    assert all(p.text and p.messages is None for ps in engine.prompt_sets for p in ps.prompts)
    assert main(["--db", str(db), "sessions", "show", data["session_id"][:8]]) == 0
    shown = capsys.readouterr().out
    assert "request format completions: /v1/completions, raw text (no chat template)" in shown
    assert "--dataset-name custom` sends each row's `prompt` through the chat template" in shown  # the note, kept with the session


def test_chat_only_rows_are_refused_as_raw_text_before_anything_is_written(tmp_path, capsys, engine):
    path = tmp_path / "chat.jsonl"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}) + "\n")
    db = tmp_path / "s.db"
    code = main(["--db", str(db), "sweep", "--model", "m", "--prompts", str(path), "--request-format", "completions", "--json"])
    err = capsys.readouterr().err
    assert code == 2 and "has only `messages`" in err and err.count("\n") == 1
    assert not db.exists() and engine.calls == []


@pytest.mark.parametrize(
    ("prompts", "workload", "sent"), [("rename", "edit", "chat"), ("edit", "edit", "chat"), ("humaneval", "code", "chat"), ("math", "math", "chat")]
)
def test_the_workload_label_follows_the_builtin_set(tmp_path, capsys, engine, prompts, workload, sent):
    data = sweep(tmp_path / "s.db", capsys, "--prompts", prompts)
    assert data["workload"]["kind"] == workload and data["workload"]["request_format"] == sent


def test_every_view_shows_the_format_and_compare_flags_a_difference(tmp_path, capsys, engine):
    db = tmp_path / "s.db"
    chat = sweep(db, capsys, "--prompts", "humaneval")["session_id"]
    raw = sweep(db, capsys, "--prompts", "humaneval", "--request-format", "completions")["session_id"]
    assert main(["--db", str(db), "report", chat[:8], "--format", "md"]) == 0
    assert "request format" in (report := capsys.readouterr().out) and "through the model's chat template" in report
    assert main(["--db", str(db), "sessions", "show", raw[:8], "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["request_format"].startswith("completions: /v1/completions")
    assert main(["--db", str(db), "sessions", "compare", chat[:8], raw[:8]]) == 0
    shown = capsys.readouterr().out
    assert "request format (chat template or raw text) differs: chat" in shown and "completions" in shown
    bundle = tmp_path / "b.json"
    assert main(["--db", str(db), "sessions", "export", raw[:8], "-o", str(bundle)]) == 0
    assert json.loads(bundle.read_text())["session"]["settings"]["request_format"] == "completions"
