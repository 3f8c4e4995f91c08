"""The application layer decides once what both front ends ask: the session a request plans, the CPU
engine's environment, and which runner a session gets."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from specadvisor.app import engine_env, running
from specadvisor.app.demo import demo
from specadvisor.app.sweeps import Prepared, SweepRequest, plan_sweep
from specadvisor.domain import EngineInfo, HardwareProfile, Session, SweepSettings
from specadvisor.engine.cpu import CpuEngine
from specadvisor.errors import InputError
from specadvisor.store import Store


def _engine(tmp_path: Path) -> CpuEngine:
    python = tmp_path / "venv" / "bin" / "python"
    return CpuEngine(
        venv=tmp_path / "venv", python=python, engine_cmd=[str(python), "-m", "vllm.entrypoints.openai.api_server"],
        model_dir=tmp_path / "SmolLM2", env={"VLLM_CPU_KVCACHE_SPACE": "2"}, server_args=["--dtype", "float32"],
    )  # fmt: skip


def test_a_request_becomes_the_session_it_asks_for(tmp_path):
    asked = SweepSettings.of(adaptive=True, num_prompts=8, concurrency=[1, 8], temperature=0.5, drift_threshold=0.07)
    request = SweepRequest(model="m", methods=(("ngram", {"prompt_lookup_max": 4}),), n_values=(2, 4), name="x", settings=asked)
    prepared = plan_sweep(request, None)
    s = prepared.session.settings
    assert [a.id for a in prepared.session.arms if a.concurrency == 1] == ["baseline-c1", "ngram-n2-c1", "ngram-n4-c1"]
    assert (s.num_prompts, s.concurrency, s.temperature, s.drift_threshold, s.adaptive) == (8, [1, 8], 0.5, 0.07, True)
    assert s.ci_target == pytest.approx(0.03), "--adaptive stops an arm at +/-3 % unless told otherwise"
    assert s.output_len == 256 and prepared.session.name == "x" and prepared.server_env == {}, "computed: nothing to add"
    assert prepared.session.provenance.entry_point == "sweep", "the use case names itself; the runner records the rest"
    assert not prepared.session.provenance.specadvisor_version, "nothing is probed before the session runs"


def test_a_request_without_a_model_or_n_is_refused():
    with pytest.raises(InputError, match="no model given"):
        plan_sweep(SweepRequest(), None)
    with pytest.raises(InputError, match="--method given without --n"):
        plan_sweep(SweepRequest(model="m", methods=(("ngram", {}),)), None)


def test_the_cpu_engine_gives_its_command_args_env_and_model(tmp_path):
    cpu = _engine(tmp_path)
    prepared = plan_sweep(SweepRequest(cpu=True, settings=SweepSettings.of(server_args=["--x"])), cpu)
    s = prepared.session.settings
    assert prepared.session.model == str(cpu.model_dir) and s.engine_cmd == cpu.engine_cmd
    assert s.server_args == ["--dtype", "float32", "--x"] and prepared.server_env == cpu.env and prepared.cpu


def test_the_demo_is_a_caller_like_any_other(tmp_path):
    cpu = _engine(tmp_path)
    prepared = demo(cpu, [2, 4], 6, 64)
    session = prepared.session
    assert [a.id for a in session.arms] == ["baseline", "ngram-n2", "ngram-n4"] and session.workload.value == "code"
    assert (session.settings.num_prompts, session.settings.output_len, session.name) == (6, 64, "demo")
    assert session.provenance.entry_point == "demo" and prepared.server_env == cpu.env


def test_the_cpu_environment_is_given_only_to_the_cpu_engines_command(tmp_path, monkeypatch):
    cpu = _engine(tmp_path)
    for key in cpu.env:
        monkeypatch.delenv(key, raising=False)
    on_cpu = Session(settings=SweepSettings(engine_cmd=list(cpu.engine_cmd)))
    elsewhere = Session(settings=SweepSettings(engine_cmd=["vllm", "serve"]))
    assert engine_env.cpu_env(on_cpu, cpu) == cpu.env
    assert engine_env.cpu_env(elsewhere, cpu) == {} and engine_env.cpu_env(on_cpu, None) == {}


def test_the_cpu_engines_defaults_never_override_what_the_user_exported(tmp_path, monkeypatch):
    """A KV cache size the user exported stays theirs: the runner's CPU environment (what it falls back
    to when the plan brought none) leaves out every key the user's environment sets."""
    cpu = _engine(tmp_path)
    assert cpu.env, "the fake engine must carry a default to leave out"
    on_cpu = Session(settings=SweepSettings(engine_cmd=list(cpu.engine_cmd)))
    for key in cpu.env:
        monkeypatch.setenv(key, "7")
    assert engine_env.cpu_env(on_cpu, cpu) == {}


def _observed() -> HardwareProfile:
    from specadvisor.domain import CpuInfo

    return HardwareProfile(cpu=CpuInfo(model="Test CPU"), os="Linux", engine=EngineInfo())


@pytest.mark.parametrize("goodput, kind", [(True, "CapacityRunner"), (False, "SweepRunner")])
@pytest.mark.parametrize("entry_point", ["tui", "sweep"])
def test_one_place_chooses_the_runner_and_records_where_it_runs(tmp_path, goodput, kind, entry_point):
    session = Session(model="m", settings=SweepSettings(goodput=goodput, slo_tpot_ms=30.0), hardware=_observed())
    options = running.RunOptions(entry_point=entry_point, detected=session.hardware)
    with Store.open(tmp_path / "s.db") as store:
        runner = running.runner_for(Prepared(session), store, options)
        assert type(runner).__name__ == kind
    prov = session.provenance
    assert (prov.entry_point, prov.measured_on, session.hardware.cpu.model) == (entry_point, "this machine", "Test CPU")
    assert prov.specadvisor_version and session.hardware_fingerprint == _observed().fingerprint()


def test_a_capacity_run_without_a_latency_target_is_refused_before_anything_is_probed(tmp_path):
    session = Session(model="m", settings=SweepSettings(), hardware=_observed())
    with Store.open(tmp_path / "s.db") as store, pytest.raises(InputError, match="latency target"):
        running.runner_for(Prepared(session), store, running.RunOptions(goodput=True))
    assert not session.provenance.specadvisor_version


def test_the_cli_places_arms_as_asked_and_the_tui_as_planned(tmp_path, monkeypatch):
    import os

    from specadvisor.domain import GpuInfo

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.setattr("specadvisor.hardware.detect_gpus", lambda **probe_options: ([], []))
    planned = replace(_observed(), gpus=[GpuInfo(index=i, vendor="other", name="X") for i in range(2)])
    with Store.open(tmp_path / "s.db") as store:
        cli = running.runner_for(Prepared(Session(model="m", hardware=planned)), store, running.RunOptions(parallel="2", detected=planned))
        tui = running.runner_for(Prepared(Session(model="m", hardware=planned)), store, running.RunOptions(entry_point="tui", detected=planned))
    assert [s.label for s in cli.slots] == ["cores 0-1", "cores 2-3"], "--parallel: on the GPUs detected now (none here)"
    assert [s.gpu_ids for s in tui.slots] == ["0", "1"], "the plan's choice (auto) on the GPUs it was planned on"


def test_an_environment_computed_empty_is_not_one_left_to_the_runner(tmp_path, monkeypatch):
    """`Prepared.server_env`: {} is what a use case computed (nothing to add: kept), None is "not
    computed" (the TUI's plan: the runner derives the CPU engine's). Read as one, a sweep whose use
    case added nothing was given the detected CPU engine's environment behind its back."""
    cpu = _engine(tmp_path)
    for key in cpu.env:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setattr(engine_env, "find_cpu", lambda: cpu)
    on_cpu_build = replace(_observed(), engine=EngineInfo(distribution="vllm-cpu"))

    def env_of(server_env: dict[str, str] | None) -> dict[str, str]:
        session = Session(model="m", settings=SweepSettings(engine_cmd=list(cpu.engine_cmd)), hardware=on_cpu_build)
        with Store.open(tmp_path / "s.db") as store:
            runner = running.runner_for(Prepared(session, server_env=server_env), store, running.RunOptions(detected=on_cpu_build))
        return dict(runner._server_factory.env)

    assert env_of({}) == {}, "computed, and nothing to add: nothing added"
    assert env_of(None) == cpu.env, "not computed: the detected CPU engine's environment"
    assert env_of({"X": "1"}) == {"X": "1"}
