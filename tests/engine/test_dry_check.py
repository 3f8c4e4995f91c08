"""The dry check asks the engine's own Python (vLLM's SpeculativeConfig) about every config before a
launch: with the real CPU engine (slow), and what happens when that Python cannot answer."""

from __future__ import annotations

import sys

import pytest

from specadvisor.engine.dry_check import dry_check, engine_python, preflight


def test_engine_python_behind_each_kind_of_engine_command(tmp_path):
    venv_bin = tmp_path / "bin"
    venv_bin.mkdir()
    (venv_bin / "python").write_text("")
    assert engine_python(["/opt/engine/bin/python3.12", "-m", "vllm.entrypoints.openai.api_server"]) == "/opt/engine/bin/python3.12"
    assert engine_python([str(venv_bin / "vllm"), "serve"]) == str(venv_bin / "python")
    assert engine_python(["vllm", "serve"]) is None  # on PATH: which Python it runs is not ours to guess
    assert engine_python(["docker", "run", "vllm/vllm-openai"]) is None
    assert engine_python([]) is None


def test_a_python_without_vllm_or_no_python_at_all_gives_no_answer(tmp_path):
    assert dry_check(sys.executable, [{"method": "ngram", "num_speculative_tokens": 2}]) is None  # specadvisor's venv has no vLLM
    assert dry_check(str(tmp_path / "missing-python"), [{"method": "ngram"}]) is None


@pytest.mark.slow
def test_the_real_cpu_engine_rejects_what_its_speculative_config_rejects(cpu_engine):
    answers = dry_check(
        str(cpu_engine.python),
        [
            {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_min": 2, "prompt_lookup_max": 4},
            {"method": "ngram", "num_speculative_tokens": 0},
            {"method": "eagle9", "num_speculative_tokens": 2},
            {"method": "ngram", "num_speculative_tokens": 2, "disable_by_batch_size": 4},
            {"method": "eagle3", "model": "x", "num_speculative_tokens": 3, "rejection_sample_method": "strict"},
        ],
    )
    assert answers is not None
    assert answers[0] == []
    assert answers[1] == ["'num_speculative_tokens'=0: Input should be greater than 0"]
    assert answers[2][0].startswith("'method'='eagle9': Input should be 'ngram'")
    assert answers[3] == ["vLLM's SpeculativeConfig has no field 'disable_by_batch_size'"]
    assert answers[4][0].startswith("'rejection_sample_method'='strict': Input should be 'standard'")


@pytest.mark.slow
def test_preflight_names_the_arm_before_any_launch(cpu_engine):
    """What the sweep runner asks before its first launch (sweep/runner.py _default_prefetch)."""
    good = {"method": "ngram", "num_speculative_tokens": 2, "prompt_lookup_min": 2, "prompt_lookup_max": 4}
    assert preflight(cpu_engine.engine_cmd, {"ngram-n2": good}) is None
    line = preflight(cpu_engine.engine_cmd, {"ngram-n2": good, "old-guide": {**good, "acceptance_method": "rejection_sampler"}})
    assert line == "vLLM's SpeculativeConfig rejects arm old-guide: vLLM's SpeculativeConfig has no field 'acceptance_method'"
    assert preflight(["docker", "run", "img"], {"a": good}) is None  # a container's Python is not asked
