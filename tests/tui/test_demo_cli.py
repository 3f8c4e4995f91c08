"""`specadvisor demo`: input errors, the planned session, and --headless delegating to `sweep`."""

from __future__ import annotations

import argparse
from pathlib import Path

from specadvisor.cli.demo import _sweep_argv, demo_session
from specadvisor.cli.main import build_parser, main
from specadvisor.engine.cpu import CpuEngine


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
    session = demo_session(engine, [2, 4], num_prompts=6, output_len=64)
    assert [a.id for a in session.arms] == ["baseline", "ngram-n2", "ngram-n4"]
    assert session.arms[2].speculative_config == {"method": "ngram", "prompt_lookup_min": 2, "prompt_lookup_max": 4, "num_speculative_tokens": 4}
    assert session.model == str(engine.model_dir) and session.name == "demo" and session.workload.value == "code"
    assert session.settings.engine_cmd == engine.engine_cmd and session.settings.server_args == engine.server_args
    assert session.settings.prompt_source == "humaneval" and session.settings.num_prompts == 6


def test_headless_builds_a_valid_sweep_command(tmp_path):
    args = argparse.Namespace(db=tmp_path / "x.db", n="2,4", num_prompts=6, output_len=64)
    parsed = build_parser().parse_args(_sweep_argv(args))
    assert parsed.command == "sweep" and parsed.cpu and parsed.db == tmp_path / "x.db"
    assert parsed.method == ["ngram"] and parsed.n == "2,4" and parsed.prompts == "humaneval"
    assert parsed.num_prompts == "6" and parsed.output_len == "64"  # read by the shared count parser in sweep
    assert parsed.spec_extra == ['ngram:{"prompt_lookup_min": 2, "prompt_lookup_max": 4}']


def test_bad_numbers_fail_with_one_line_and_exit_2(capsys, tmp_path):
    assert main(["--db", str(tmp_path / "x.db"), "demo", "--num-prompts", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--num-prompts and --output-len must be at least 1" in err[0]
    assert main(["--db", str(tmp_path / "x.db"), "demo", "--n", "two"]) == 2
    assert "--n must be comma-separated integers" in capsys.readouterr().err
    assert not (tmp_path / "x.db").exists(), "nothing written on bad input"
