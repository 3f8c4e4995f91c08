"""`specadvisor demo`: input errors, the planned session (the app layer's `demo`), and --headless
running it with the sweep command's view."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from specadvisor.app import engine_env
from specadvisor.app.demo import demo
from specadvisor.cli.main import main
from specadvisor.engine.cpu import CpuEngine
from specadvisor.store import Store
from specadvisor.sweep import runner as runner_module

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sweep"))
from sweep_fakes import FakeMeasure, FakeServer


def fake_engine(tmp_path: Path) -> CpuEngine:
    python = tmp_path / "venv" / "bin" / "python"
    return CpuEngine(
        venv=tmp_path / "venv",
        python=python,
        engine_cmd=[str(python), "-m", "vllm.entrypoints.openai.api_server"],
        model_dir=tmp_path / "models" / "SmolLM2-135M-Instruct",
        env={"VLLM_CPU_KVCACHE_SPACE": "2"},
        server_args=["--dtype", "float32", "--enforce-eager"],
    )


def test_demo_session_is_baseline_plus_ngram_on_the_cpu_engine(tmp_path):
    engine = fake_engine(tmp_path)
    session = demo(engine, [2, 4], num_prompts=6, output_len=64).session
    assert [a.id for a in session.arms] == ["baseline", "ngram-n2", "ngram-n4"]
    assert session.arms[2].speculative_config == {"method": "ngram", "prompt_lookup_min": 2, "prompt_lookup_max": 4, "num_speculative_tokens": 4}
    assert session.model == str(engine.model_dir) and session.name == "demo" and session.workload.value == "code"
    assert session.settings.engine_cmd == engine.engine_cmd and session.settings.server_args == engine.server_args
    assert session.settings.prompt_source == "humaneval" and session.settings.num_prompts == 6


def test_headless_runs_the_same_session_through_the_sweep_view(tmp_path, monkeypatch, capsys):
    engine = fake_engine(tmp_path)
    launched_env = []
    monkeypatch.setattr(engine_env, "ensure_cpu", lambda progress: engine)
    monkeypatch.setattr(runner_module, "VllmServerFactory", lambda env=None: launched_env.append(dict(env or {})) or (lambda arm, session: FakeServer(arm)))
    monkeypatch.setattr(runner_module, "_default_measure", FakeMeasure(lambda arm: {None: 100.0, 2: 150.0}[arm.n]))
    monkeypatch.setattr(runner_module, "_default_prompt_loader", lambda session: None)
    db = tmp_path / "x.db"
    assert main(["--db", str(db), "demo", "--headless", "--n", "2", "--num-prompts", "3", "--output-len", "8"]) == 0
    with Store.open(db) as store:
        (summary,) = store.list_sessions()
        session = store.get_session(summary.id)
    assert [a.id for a in session.arms] == ["baseline", "ngram-n2"] and session.name == "demo" and session.workload.value == "code"
    assert (session.settings.num_prompts, session.settings.output_len) == (3, 8) and session.provenance.entry_point == "demo"
    assert launched_env == [engine.env]
    assert "plan: 2 arms" in capsys.readouterr().out


def test_bad_numbers_fail_with_one_line_and_exit_2(capsys, tmp_path):
    assert main(["--db", str(tmp_path / "x.db"), "demo", "--num-prompts", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--num-prompts must be a whole number from 1 to 1000000, got '0'" in err[0]
    assert main(["--db", str(tmp_path / "x.db"), "demo", "--n", "two"]) == 2
    assert "--n 'two' is not a comma-separated list of whole numbers" in capsys.readouterr().err
    assert not (tmp_path / "x.db").exists(), "nothing written on bad input"


@pytest.mark.parametrize("headless", [["--headless"], []])
def test_demo_n_has_the_sweeps_limit(capsys, tmp_path, monkeypatch, headless):
    """`demo --n 100000` was accepted and planned (a 100,000-token draft per step) where `sweep --n`
    stops at 64: one line, exit 2, before the engine is provisioned or the TUI opens."""
    from specadvisor.app import engine_env

    def provision(progress):
        raise AssertionError("the engine was provisioned for a bad --n")

    monkeypatch.setattr(engine_env, "ensure_cpu", provision)
    monkeypatch.setattr("specadvisor.engine.cpu.ensure_cpu_engine", provision)
    monkeypatch.setattr("specadvisor.tui.launch.run_guarded", provision)  # the TUI would provision it inside
    assert main(["--db", str(tmp_path / "x.db"), "demo", *headless, "--n", "2,100000"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["specadvisor: error: --n values must be from 1 to 64, got 100000 (e.g. --n 1,3,5)"]
    assert not (tmp_path / "x.db").exists()
