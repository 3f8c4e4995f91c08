"""A start-up failure of the real CPU build, provoked deterministically and reported by its cause
and fix, not by the wrapper ("WorkerProc initialization failed").

The failure is one no machine can avoid: a KV cache of 1 PiB (VLLM_CPU_KVCACHE_SPACE is in GiB), so
the test fails the same way on a laptop and on a 1 TB server. (Issue 25: the earlier version relied
on --gpu-memory-utilization 0.92 not fitting the machine's free RAM, and on an idle machine it fit.
The real log of that failure is replayed in tests/cli, where it cannot depend on the machine.)"""

from __future__ import annotations

import json

import pytest

from specadvisor.cli.main import main

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.timeout(600)]

PIB_IN_GIB = str(1024 * 1024)


def test_an_impossible_kv_cache_is_reported_by_its_cause_and_fix(cpu_engine, tmp_path, capsys, monkeypatch):
    for key in cpu_engine.env:
        monkeypatch.delenv(key, raising=False)
    # set in the environment, so specadvisor's CPU default (2 GiB) leaves it as the user asked
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", PIB_IN_GIB)
    code = main(
        [
            "--db",
            str(tmp_path / "s.db"),
            "sweep",
            "--model",
            str(cpu_engine.model_dir),
            "--engine-cmd",
            " ".join(cpu_engine.engine_cmd),
            "--num-prompts",
            "2",
            "--output-len",
            "8",
            "--no-bracket",
            "--json",
        ]
    )
    captured = capsys.readouterr()
    assert code == 4, captured.err  # every arm failed: an engine error, with the first cause on stderr
    last = captured.err.strip().splitlines()[-1]
    assert last.startswith("specadvisor: error:") and "the KV cache asks for 1048576" in last, last
    [arm] = json.loads(captured.out)["arms"]
    assert arm["status"] == "failed"
    error = arm["error"]
    assert "KV cache asks for 1048576" in error and "GiB free" in error, error
    assert "lower VLLM_CPU_KVCACHE_SPACE" in error, error
    assert "WorkerProc initialization failed" not in error
