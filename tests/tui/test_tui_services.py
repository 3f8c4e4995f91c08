"""The real service wiring: plans use the detected engine (the CPU build needs its own flags and env)."""

from __future__ import annotations

from dataclasses import replace

from specadvisor.domain import EngineInfo
from specadvisor.engine import cpu as cpu_module
from specadvisor.engine.cpu import CpuEngine
from specadvisor.store import Store
from specadvisor.tui.services import default_services
from tui_fakes import ADVICE, HARDWARE, MODEL, WORKLOAD


def cpu_engine(tmp_path) -> CpuEngine:
    python = tmp_path / "venv" / "bin" / "python"
    return CpuEngine(
        venv=tmp_path / "venv",
        python=python,
        engine_cmd=[str(python), "-m", "vllm.entrypoints.openai.api_server"],
        model_dir=tmp_path / "model",
        env={"VLLM_CPU_KVCACHE_SPACE": "2"},
        server_args=["--dtype", "float32", "--enforce-eager"],
    )


def test_plan_on_the_cpu_build_uses_its_command_args_and_env(tmp_path, monkeypatch):
    engine = cpu_engine(tmp_path)
    monkeypatch.setattr(cpu_module, "find_cpu_engine", lambda: engine)
    hardware = replace(HARDWARE, engine=EngineInfo(found=True, version="0.32.0", distribution="vllm-cpu", platform="cpu"))
    services = default_services(tmp_path / "db.sqlite")
    plan = services.plan(ADVICE, MODEL, hardware, WORKLOAD)
    settings = plan.session.settings
    assert settings.engine_cmd == engine.engine_cmd and settings.server_args == engine.server_args
    assert settings.num_prompts == WORKLOAD.num_prompts and settings.output_len == WORKLOAD.output_len
    assert plan.session.hardware == hardware and plan.session.model_profile == MODEL
    with Store.open(tmp_path / "db.sqlite") as store:
        runner = services.make_runner(plan.session, store)
        assert runner._server_factory.env == engine.env


def test_plan_with_a_regular_vllm_uses_the_detected_command(tmp_path):
    hardware = replace(HARDWARE, engine=EngineInfo(found=True, version="0.33.0", distribution="vllm", platform="cuda", command=["vllm", "serve"]))
    plan = default_services(tmp_path / "db.sqlite").plan(ADVICE, MODEL, hardware, WORKLOAD)
    assert plan.session.settings.engine_cmd == ["vllm", "serve"] and plan.session.settings.server_args == []
    assert next(a.id for a in plan.arms) == "baseline"


def test_advice_reads_local_sessions_for_this_model_and_hardware(tmp_path, monkeypatch):
    from specadvisor import advisor
    from tui_fakes import finished_session

    seen = {}

    def fake_advise(hardware, model, workload, **kwargs):
        seen.update(kwargs)
        return ADVICE.model_copy(deep=True)  # app.advice.advise sets its header on the advice: never on the shared one

    monkeypatch.setattr(advisor, "advise", fake_advise)
    db = tmp_path / "db.sqlite"
    with Store.open(db) as store:
        session = finished_session(store)
        store.save_session(session.model_copy(update={"hardware_fingerprint": HARDWARE.fingerprint()}))
    default_services(db).advise(HARDWARE, MODEL, WORKLOAD)
    assert [s.id for s in seen["local_sessions"]] == [session.id]
    assert seen["vllm_version"] == "0.32.0"


def test_every_concurrency_level_typed_in_setup_is_planned(tmp_path):
    from specadvisor.tui.setup_form import parse_form

    form, errors = parse_form("code", "humaneval", {"concurrency": "8, 1", "output_len": "64", "num_prompts": "16"})
    assert not errors
    workload = form.workload
    assert workload.concurrency_levels == [1, 8]
    hardware = replace(HARDWARE, engine=EngineInfo(found=True, version="0.33.0", distribution="vllm", platform="cuda", command=["vllm", "serve"]))
    plan = default_services(tmp_path / "db.sqlite").plan(ADVICE, MODEL, hardware, workload)
    assert plan.session.settings.concurrency == [1, 8]
    baselines = sorted(a.concurrency for a in plan.arms if a.is_baseline)
    assert baselines == [1, 8]
