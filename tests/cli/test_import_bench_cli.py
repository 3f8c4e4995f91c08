"""`import-bench` reads what `vllm bench serve --save-result` files record and invents nothing else
(issue 41): no made-up speculative config, the prompt count, output length and concurrency from the
files, a file of another model refused, unrecorded settings shown as "not recorded", and the same
files imported twice stored once. Real SQLite file, the CLI through main()."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specadvisor.cli.main import main
from specadvisor.store import Store

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "report"
BASE = str(FIXTURES / "bench_baseline.json")
NGRAM = str(FIXTURES / "bench_ngram_n4.json")
NGRAM4 = '{"method":"ngram","num_speculative_tokens":4}'
SMOL = "HuggingFaceTB/SmolLM2-135M-Instruct"


def run(db: Path, *argv: str) -> int:
    return main(["--db", str(db), *argv])


def _file(tmp_path: Path, name: str, source: str = BASE, **changes: object) -> str:
    data = json.loads(Path(source).read_text())
    data.update(changes)
    for key in [k for k, v in changes.items() if v is None]:
        del data[key]
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


def test_a_speculative_file_without_its_config_is_refused_and_nothing_is_written(tmp_path, capsys):
    db = tmp_path / "s.db"
    assert run(db, "import-bench", BASE, NGRAM) == 2
    err = capsys.readouterr().err
    assert "bench_ngram_n4.json was measured with speculation" in err and "--spec-config" in err
    assert not db.exists()


def test_the_session_holds_what_the_files_record_and_nothing_invented(tmp_path, capsys):
    db = tmp_path / "s.db"
    assert run(db, "import-bench", BASE, NGRAM, "--spec-config", NGRAM4) == 0
    sid = capsys.readouterr().out.strip()
    with Store.open(db) as store:
        session = store.get_session(sid)
    s = session.settings
    assert session.model == SMOL  # read from model_id: no --model needed
    assert (s.num_prompts, s.output_len, s.concurrency, s.request_format) == (8, 64, [1], "completions")  # 512 tokens / 8 requests
    assert {a.label for a in session.arms} == {"bench-baseline (imported, no speculation)", "bench-ngram-n4 (imported, ngram N=4)"}
    assert {"prompt_source", "temperature", "workload"} <= set(session.provenance.unrecorded)
    assert run(db, "sessions", "show", sid) == 0
    shown = capsys.readouterr().out
    assert "temperature not recorded" in shown and "prompts not recorded x8" in shown and "output 64 tokens" in shown
    assert "humaneval" not in shown and "unknown N=" not in shown
    assert "64 output tokens, temperature not recorded" in shown  # the verdict's own line
    assert run(db, "report", sid) == 0
    report = capsys.readouterr().out
    assert "temperature not recorded" in report and "humaneval" not in report
    assert run(db, "snippet", sid) == 0
    assert json.loads(capsys.readouterr().out) == {"method": "ngram", "num_speculative_tokens": 4}
    assert run(db, "sessions", "list") == 0
    listing = capsys.readouterr().out
    assert " format " in listing and "not recorded" in listing and "completions" in listing


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--model", "Qwen/Qwen3-8B"], "measured HuggingFaceTB/SmolLM2-135M-Instruct, but --model is Qwen/Qwen3-8B"),
        (
            ["--spec-config", '{"method":"ngram","num_speculative_tokens":3}'],
            "acceptance rates for 4 positions, but --spec-config says num_speculative_tokens 3",
        ),
        (["--spec-config", '{"method":"unknown","num_speculative_tokens":4}'], "names method 'unknown', which vLLM does not have"),
        (["--spec-config", NGRAM4, "--concurrency", "8"], "was measured at --max-concurrency 1, not 8"),
    ],
    ids=["other-model", "n-mismatch", "unknown-method", "concurrency-contradicted"],
)
def test_what_contradicts_the_files_is_refused(tmp_path, capsys, extra, message):
    db = tmp_path / "s.db"
    assert run(db, "import-bench", BASE, NGRAM, *extra) == 2
    assert message in capsys.readouterr().err
    assert not db.exists()


def test_a_local_folder_of_the_same_model_is_the_same_model(tmp_path, capsys):
    db = tmp_path / "s.db"
    assert run(db, "import-bench", BASE, "--model", "/models/SmolLM2-135M-Instruct") == 0
    with Store.open(db) as store:
        assert store.get_session(capsys.readouterr().out.strip()).model == "/models/SmolLM2-135M-Instruct"


def test_files_of_different_output_lengths_or_models_are_refused(tmp_path, capsys):
    db = tmp_path / "s.db"
    longer = _file(tmp_path, "long.json", total_output_tokens=1024)
    assert run(db, "import-bench", BASE, longer) == 2
    assert "different output lengths (64.0 and 128.0 tokens per request)" in capsys.readouterr().err
    other = _file(tmp_path, "other.json", model_id="Qwen/Qwen3-8B")
    assert run(db, "import-bench", BASE, other) == 2
    assert "the files measured different models" in capsys.readouterr().err
    assert not db.exists()


def test_a_file_without_its_concurrency_needs_the_flag(tmp_path, capsys):
    db = tmp_path / "s.db"
    bare = _file(tmp_path, "bare.json", max_concurrency=None, request_rate=4.0)
    assert run(db, "import-bench", bare) == 2
    assert "does not record a --max-concurrency (request rate 4.0)" in capsys.readouterr().err
    assert run(db, "import-bench", bare, "--concurrency", "4") == 0
    with Store.open(db) as store:
        assert store.get_session(capsys.readouterr().out.strip()).settings.concurrency == [4]


def test_the_same_files_imported_twice_are_one_session(tmp_path, capsys):
    db = tmp_path / "s.db"
    assert run(db, "import-bench", BASE, NGRAM, "--spec-config", NGRAM4) == 0
    first = capsys.readouterr().out.strip()
    assert run(db, "import-bench", NGRAM, BASE, "--spec-config", NGRAM4) == 0
    again = capsys.readouterr()
    assert again.out.strip() == first and "imported before" in again.err
    with Store.open(db) as store:
        assert len(store.list_sessions()) == 1


def test_adding_to_a_session_checks_its_model_and_leaves_out_what_it_holds(tmp_path, capsys):
    db = tmp_path / "s.db"
    assert run(db, "import-bench", BASE) == 0
    sid = capsys.readouterr().out.strip()
    other = _file(tmp_path, "other.json", model_id="Qwen/Qwen3-8B")
    assert run(db, "import-bench", other, "--session", sid) == 2
    assert f"session {sid[:8]} is for {SMOL}" in capsys.readouterr().err
    assert run(db, "import-bench", BASE, NGRAM, "--session", sid, "--spec-config", NGRAM4) == 0
    assert "already in session" in capsys.readouterr().err
    with Store.open(db) as store:
        assert [a.id for a in store.get_session(sid).arms] == ["bench-baseline", "bench-ngram-n4"]
