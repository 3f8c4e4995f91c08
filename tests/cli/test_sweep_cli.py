"""The sweep/report/snippet/import-bench/export-plan commands through main(), on a real SQLite file.
The sweep command runs with the vLLM process and the load generator replaced at the boundary."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sweep"))
from specadvisor.cli.main import main
from specadvisor.sweep import runner as runner_module
from sweep_fakes import FakeMeasure, FakeServer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "report"


@pytest.fixture
def fake_engine(monkeypatch):
    measure = FakeMeasure(lambda arm: {None: 100.0, 2: 150.0, 4: 140.0}[arm.n])
    monkeypatch.setattr(runner_module, "VllmServerFactory", lambda env=None: lambda arm, session: FakeServer(arm))
    monkeypatch.setattr(runner_module, "_default_measure", measure)
    monkeypatch.setattr(runner_module, "_default_prompt_loader", lambda session: None)
    return measure


def sweep_json(db, capsys, *extra):
    code = main(
        [
            "--db",
            str(db),
            "sweep",
            "--model",
            "m",
            "--method",
            "ngram",
            "--n",
            "2,4",
            "--spec-extra",
            '{"prompt_lookup_min":2}',
            "--num-prompts",
            "4",
            "--json",
            *extra,
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


def test_sweep_json_reports_every_arm_and_the_recommendation(tmp_path, capsys, fake_engine):
    data = sweep_json(tmp_path / "s.db", capsys)
    arms = {a["arm_id"]: a for a in data["arms"]}
    assert set(arms) == {"baseline", "ngram-n2", "ngram-n4"}
    for key in ("output_throughput", "request_throughput", "mean_acceptance_length", "acceptance_rate", "per_position_acceptance", "ttft_ms", "tpot_ms"):
        assert key in arms["ngram-n2"]
    assert arms["ngram-n4"]["per_position_acceptance"] == [0.9, 0.7, 0.5, 0.3]
    assert data["recommendation"]["arm_id"] == "ngram-n2"
    assert data["launches_used"] == 4 == data["launches_full_grid"]  # 3 configurations + the baseline bracket
    # N=2 is predictable only through the baseline's regime: withheld, with the reason
    assert data["arms"][1]["prediction_error_pct"] is None and "mix regimes" in data["arms"][1]["prediction_withheld"]


def test_report_snippet_and_export_plan_from_the_stored_session(tmp_path, capsys, fake_engine):
    db = tmp_path / "s.db"
    sid = sweep_json(db, capsys)["session_id"]
    assert main(["--db", str(db), "snippet", sid[:8]]) == 0
    assert json.loads(capsys.readouterr().out) == {"method": "ngram", "prompt_lookup_min": 2, "num_speculative_tokens": 2}
    assert main(["--db", str(db), "snippet", sid, "--command"]) == 0
    assert "--speculative-config" in capsys.readouterr().out
    out_html = tmp_path / "r.html"
    assert main(["--db", str(db), "report", sid, "-o", str(out_html)]) == 0
    assert out_html.read_text().startswith("<!DOCTYPE html>")
    assert main(["--db", str(db), "report", sid, "--format", "md"]) == 0
    assert "## Recommendation" in capsys.readouterr().out
    params = tmp_path / "serve_params.json"
    assert main(["--db", str(db), "export-plan", sid, "--serve-params", str(params)]) == 0
    assert len(json.loads(params.read_text())) == 3


def test_import_bench_creates_a_session_with_imported_arms(tmp_path, capsys):
    db = tmp_path / "s.db"
    code = main(
        [
            "--db",
            str(db),
            "import-bench",
            str(FIXTURES / "bench_baseline.json"),
            str(FIXTURES / "bench_ngram_n4.json"),
            "--model",
            "HuggingFaceTB/SmolLM2-135M-Instruct",
            "--spec-config",
            '{"method":"ngram","num_speculative_tokens":4}',
        ]
    )
    assert code == 0
    sid = capsys.readouterr().out.strip()
    assert main(["--db", str(db), "snippet", sid]) == 0
    assert json.loads(capsys.readouterr().out) == {"method": "ngram", "num_speculative_tokens": 4}


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--model", "m", "--method", "ngram", "--n", "0"], "--n values must be from 1 to 64"),
        (["--model", "m", "--method", "ngram"], "--method given without --n"),
        (["--model", "m", "--method", "eagle3", "--n", "2"], "method eagle3 needs a drafter model"),
        (["--model", "m", "--method", "ngram", "--n", "2", "--spec-extra", "{bad"], "is not valid JSON"),
        (["--method", "ngram", "--n", "2"], "no model given"),
        (["--model", "m", "--method", "ngram", "--n", "2", "--output-len", "lots"], "--output-len: 'lots' is not a whole number"),
        (["--model", "m", "--method", "ngram", "--n", "2", "--confidence", "100"], "--confidence must be a finite number from 50 to below 100"),
        (["--model", "m", "--method", "ngram", "--n", "2", "--budget", "-5"], "--budget must be a finite number from 0 to 10080"),
    ],
)
def test_bad_sweep_input_is_one_line_and_writes_nothing(tmp_path, capsys, argv, message):
    db = tmp_path / "s.db"
    assert main(["--db", str(db), "sweep", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not db.exists()


def test_report_of_unknown_session_fails_cleanly(tmp_path, capsys):
    code = main(["--db", str(tmp_path / "s.db"), "report", "nope"])
    assert code != 0
    assert "specadvisor: error:" in capsys.readouterr().err


def test_resume_measures_only_the_unfinished_arms(tmp_path, capsys, fake_engine):
    from specadvisor.domain import SweepSettings
    from specadvisor.store import Store
    from specadvisor.sweep.plan import plan_from_methods
    from sweep_fakes import spec_result

    db = tmp_path / "s.db"
    plan = plan_from_methods("m", [("ngram", {})], [2, 4], SweepSettings(num_prompts=4))
    plan.session.status = "interrupted"
    plan.session.results = [spec_result("baseline", None, 100.0), spec_result("ngram-n2", 2, 150.0)]
    with Store.open(db) as store:
        store.save_session(plan.session)
    assert main(["--db", str(db), "sweep", "--resume", plan.session.id[:8], "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert fake_engine.calls == ["ngram-n4", "baseline"]  # the unfinished arm, then the bracket
    assert data["status"] == "finished" and data["recommendation"]["arm_id"] == "ngram-n2"
    arms = {a["arm_id"]: a for a in data["arms"]}
    n2 = arms["ngram-n2"]  # the speedup every view shows (specadvisor.figures), in --json too
    assert n2["speedup"] == pytest.approx(n2["output_throughput"] / arms["baseline"]["output_throughput"])
    assert arms["baseline"]["speedup"] == 1.0


def test_resume_takes_a_new_time_limit_and_refuses_to_change_what_was_measured(tmp_path, capsys, fake_engine):
    """`sweep --resume ID --time-limit 10 --num-prompts 64` checked both flags, then dropped them: the
    resumed session ran with no time limit and 32 prompts. A setting declared resumable (the time
    limit is this run's) is taken; one the finished arms were measured with is refused, in one line,
    before anything runs."""
    from specadvisor.domain import SweepSettings
    from specadvisor.store import Store
    from specadvisor.sweep.plan import plan_from_methods
    from sweep_fakes import spec_result

    db = tmp_path / "s.db"
    plan = plan_from_methods("m", [("ngram", {})], [2, 4], SweepSettings())
    plan.session.status = "interrupted"
    plan.session.results = [spec_result("baseline", None, 100.0), spec_result("ngram-n2", 2, 150.0)]
    with Store.open(db) as store:
        store.save_session(plan.session)
    resume = ["--db", str(db), "sweep", "--resume", plan.session.id[:8], "--time-limit", "10", "--json"]
    assert main([*resume, "--num-prompts", "64"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (
        f"specadvisor: error: --num-prompts cannot change when resuming session {plan.session.id[:8]}: its finished arms were measured with "
        "--num-prompts 32 (resume without --num-prompts, or start a new sweep with it)"
    )
    assert fake_engine.calls == []
    assert main(resume) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["settings"]["time_limit_s"] == 600 and data["settings"]["num_prompts"] == 32
    with Store.open(db) as store:
        assert store.get_session(plan.session.id).settings.time_limit_s == 600


class _AttachableFake:
    """The bench tests' OpenAI-compatible fake, plus /health, /v1/models and /server_info, served
    from its own thread so that the CLI's own event loops can talk to it over real HTTP."""

    def __init__(self):
        import asyncio
        import threading

        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
        from fakeserver import FakeConfig
        from fakeserver import FakeServer as HttpFake

        class Attachable(HttpFake):
            async def _route(self, method, path, body, writer):
                extra = {
                    "/health": b"",
                    "/v1/models": json.dumps({"data": [{"id": "served-fake", "max_model_len": 2048}]}).encode(),
                    "/server_info": json.dumps({"vllm_config": {"speculative_config": {"method": "ngram", "num_speculative_tokens": 3}}}).encode(),
                }
                if method == "GET" and path in extra:
                    self._send(writer, 200, extra[path])
                    await writer.drain()
                    return
                await super()._route(method, path, body, writer)

        self.loop = asyncio.new_event_loop()
        self.fake = Attachable(FakeConfig(num_spec_tokens=3, chunk_delay_s=0.002))
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.fake.start(), self.loop).result(5)

    def close(self):
        import asyncio

        asyncio.run_coroutine_threadsafe(self.fake.stop(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


def test_endpoint_mode_measures_the_running_server_as_one_arm(tmp_path, capsys):
    server = _AttachableFake()
    try:
        code = main(
            [
                "--db",
                str(tmp_path / "s.db"),
                "sweep",
                "--endpoint",
                server.fake.base_url + "/v1",
                "--num-prompts",
                "3",
                "--output-len",
                "8",
                "--warmup",
                "0",
                "--json",
            ]
        )
    finally:
        server.close()
    out = capsys.readouterr().out
    assert code == 0, out
    data = json.loads(out)
    [arm] = data["arms"]
    assert arm["arm_id"] == "endpoint" and arm["status"] == "ok", arm
    assert arm["speculative_config"] == {"method": "ngram", "num_speculative_tokens": 3}
    assert len(arm["per_position_acceptance"]) == 3
    assert data["launches_used"] == 1
    assert server.fake.state.requests and all(r.get("model") == "served-fake" for r in server.fake.state.requests)


def test_endpoint_mode_measures_every_requested_concurrency(tmp_path, capsys):
    """`--endpoint URL --concurrency 1,4` measured everything at concurrency 1 before; the achieved load
    (mean requests in flight) proves each arm ran at its own level."""
    server = _AttachableFake()
    try:
        code = main(
            [
                "--db",
                str(tmp_path / "s.db"),
                "sweep",
                "--endpoint",
                server.fake.base_url,
                "--concurrency",
                "1,4",
                "--num-prompts",
                "16",
                "--output-len",
                "24",
                "--warmup",
                "0",
                "--json",
            ]
        )
    finally:
        server.close()
    out = capsys.readouterr().out
    assert code == 0, out
    data = json.loads(out)
    arms = {a["arm_id"]: a for a in data["arms"]}
    assert set(arms) == {"endpoint-c1", "endpoint-c4"}
    assert data["settings"]["concurrency"] == [1, 4]
    c1, c4 = arms["endpoint-c1"], arms["endpoint-c4"]
    assert c1["concurrency"] == 1 and c4["concurrency"] == 4
    assert c1["achieved_load"]["asked"] == 1 and c1["achieved_load"]["achieved"] <= 1.0 + 1e-9
    assert c4["achieved_load"]["asked"] == 4 and c4["achieved_load"]["achieved"] > 3.0, c4["achieved_load"]
    assert data["launches_used"] == 1  # one running server, nothing launched


def test_endpoint_mode_at_concurrency_4_runs_4_in_flight(tmp_path, capsys):
    server = _AttachableFake()
    try:
        code = main(
            [
                "--db",
                str(tmp_path / "s.db"),
                "sweep",
                "--endpoint",
                server.fake.base_url,
                "--concurrency",
                "4",
                "--num-prompts",
                "16",
                "--output-len",
                "24",
                "--warmup",
                "0",
                "--json",
            ]
        )
    finally:
        server.close()
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    [arm] = data["arms"]
    assert arm["arm_id"] == "endpoint" and arm["concurrency"] == 4
    assert arm["achieved_load"]["achieved"] > 3.0, arm["achieved_load"]
    assert main(["--db", str(tmp_path / "s.db"), "report", data["session_id"], "--format", "md"]) == 0
    report = capsys.readouterr().out
    assert "load achieved/asked" in report and f"{arm['achieved_load']['achieved']:.1f}/4 in flight" in report


def test_goodput_without_a_latency_target_is_bad_input(tmp_path, capsys):
    db = tmp_path / "s.db"
    assert main(["--db", str(db), "sweep", "--model", "m", "--goodput"]) == 2
    err = capsys.readouterr().err
    assert "--goodput needs a latency target" in err and err.count("\n") == 1
    assert not db.exists()


@pytest.mark.parametrize("platform", ["cpu", "cuda"])
def test_a_cpu_build_behind_engine_cmd_gets_the_cpu_defaults(tmp_path, capsys, monkeypatch, fake_engine, platform):
    from specadvisor.domain import EngineInfo
    from specadvisor.hardware import engine_probe
    from specadvisor.store import Store

    seen_env: list[dict] = []
    monkeypatch.setattr(runner_module, "VllmServerFactory", lambda env=None: seen_env.append(dict(env or {})) or (lambda arm, session: FakeServer(arm)))
    monkeypatch.setattr(engine_probe, "probe_engine", lambda cmd, **kw: EngineInfo(found=True, platform=platform, command=cmd))
    monkeypatch.delenv("VLLM_CPU_KVCACHE_SPACE", raising=False)
    db = tmp_path / "s.db"
    data = sweep_json(db, capsys, "--engine-cmd", "/opt/vllm-cpu/bin/python -m vllm.entrypoints.openai.api_server", "--server-arg=--dtype=bfloat16")
    with Store.open(db) as store:
        args = store.get_session(data["session_id"]).settings.server_args
    err = capsys.readouterr().err
    if platform == "cpu":
        assert "--enforce-eager" in args and "float32" not in args and "--dtype=bfloat16" in args  # the user's dtype stays
        assert seen_env and seen_env[-1].get("VLLM_CPU_KVCACHE_SPACE") == "2"
    else:
        assert args == ["--dtype=bfloat16"] and not (seen_env and seen_env[-1])
        assert "CPU build" not in err


def test_the_plan_line_says_which_cpu_defaults_were_added(tmp_path, monkeypatch, fake_engine, capsys):
    from specadvisor.domain import EngineInfo
    from specadvisor.hardware import engine_probe

    monkeypatch.setattr(engine_probe, "probe_engine", lambda cmd, **kw: EngineInfo(found=True, platform="cpu", command=cmd))
    monkeypatch.delenv("VLLM_CPU_KVCACHE_SPACE", raising=False)
    code = main(["--db", str(tmp_path / "s.db"), "sweep", "--model", "m", "--engine-cmd", "/opt/py -m vllm", "--num-prompts", "4", "--json"])
    assert code == 0
    err = capsys.readouterr().err
    assert "CPU build" in err and "--dtype float32" in err and "--enforce-eager" in err and "VLLM_CPU_KVCACHE_SPACE=2" in err


def test_a_failed_launch_reports_the_real_cause_and_fix(tmp_path, capsys):
    """Issue 11's failure, replayed at the process boundary: a stand-in engine prints the real log the
    CPU build wrote (vLLM's CPU memory check) and exits 1. The arm and the exit line name the cause
    and its fix, not vLLM's wrapper ("WorkerProc initialization failed")."""
    fake = Path(__file__).resolve().parents[1] / "engine" / "fake_vllm.py"
    log = Path(__file__).resolve().parents[1] / "fixtures" / "engine" / "cpu_memory.log"
    code = main(
        [
            "--db",
            str(tmp_path / "s.db"),
            "sweep",
            "--model",
            "m",
            "--no-bracket",
            "--num-prompts",
            "2",
            "--engine-cmd",
            f"{sys.executable} {fake} --mode exit --rc 1 --fail-log {log}",
            "--json",
        ]
    )
    captured = capsys.readouterr()
    assert code == 4
    [arm] = json.loads(captured.out)["arms"]
    assert arm["status"] == "failed" and "CPU backend wants 0.92 of node 0's memory" in arm["error"]
    assert "VLLM_CPU_KVCACHE_SPACE" in arm["error"] and "WorkerProc" not in arm["error"]
    assert "CPU backend wants 0.92" in captured.err.strip().splitlines()[-1]


def test_the_edit_prompts_are_measured_at_their_own_output_length_unless_told(tmp_path, capsys, fake_engine):
    from specadvisor.store import Store

    db = tmp_path / "s.db"
    own = sweep_json(db, capsys, "--prompts", "edit")["session_id"]
    told = sweep_json(db, capsys, "--prompts", "edit", "--output-len", "64")["session_id"]
    usual = sweep_json(db, capsys)["session_id"]
    store = Store.open(db)
    settings = [store.get_session(sid).settings for sid in (own, told, usual)]
    assert [(s.prompt_source, s.output_len) for s in settings] == [("edit", 128), ("edit", 64), ("humaneval", 256)]


def test_export_plan_reproduces_the_measurement_in_vllm_bench(tmp_path, capsys):
    """Issue 41: export-plan's --bench-cmd lacked the output length, --ignore-eos, the dataset and the
    temperature, and kept only the first level of "1,8": it did not reproduce the measurement."""
    import shlex

    from specadvisor.domain import SweepSettings
    from specadvisor.store import Store
    from specadvisor.sweep.plan import plan_from_methods

    db = tmp_path / "s.db"
    settings = SweepSettings(prompt_source="humaneval", request_format="chat", num_prompts=6, output_len=96, temperature=0.3, seed=7, concurrency=[1, 8])
    plan = plan_from_methods("Qwen/Qwen3-8B", [("ngram", {})], [4], settings)
    with Store.open(db) as store:
        store.save_session(plan.session)
    target = tmp_path / "out" / "plan.json"
    target.parent.mkdir()
    assert main(["--db", str(db), "export-plan", plan.session.id[:8], "--serve-params", str(target)]) == 0
    command = capsys.readouterr().out
    words = shlex.split(command.replace("\\\n", " "))
    bench = shlex.split(words[words.index("--bench-cmd") + 1])
    flag = lambda name: bench[bench.index(name) + 1]  # noqa: E731
    assert (flag("--dataset-name"), flag("--custom-output-len"), flag("--temperature"), flag("--seed"), flag("--num-prompts")) == (
        "custom",
        "96",
        "0.3",
        "7",
        "6",
    )
    assert "--ignore-eos" in bench and "--skip-chat-template" not in bench and "--max-concurrency" not in bench
    prompts = (tmp_path / "out" / "plan.prompts.jsonl").read_text().splitlines()
    assert flag("--dataset-path") == str(tmp_path / "out" / "plan.prompts.jsonl") and len(prompts) == 6
    assert all(json.loads(row)["prompt"].strip() for row in prompts)
    levels = json.loads((tmp_path / "out" / "plan.bench-params.json").read_text())
    assert [entry["max_concurrency"] for entry in levels] == [1, 8] and words[words.index("--bench-params") + 1].endswith("plan.bench-params.json")
    # again: the companions obey the -o rule (replaced only with --force)
    assert main(["--db", str(db), "export-plan", plan.session.id[:8], "--serve-params", str(target)]) == 2
    assert main(["--db", str(db), "export-plan", plan.session.id[:8], "--serve-params", str(target), "--force"]) == 0


def _is_server(process) -> bool:
    import psutil

    try:
        argv = process.cmdline()
    except psutil.Error:  # gone between the listing and the look (the engine probe ends quickly)
        return False
    return "--port" in argv and "fake_vllm.py" in " ".join(argv)


def test_ctrl_c_mid_sweep_exits_130_stores_the_session_interrupted_and_leaves_no_server(tmp_path):
    """Issue 41 (quitting mid-sweep exited 0): SIGINT while a server starts is exit 130, as other
    tools' Ctrl-C, with the resume command; the session is stored interrupted and the server is gone."""
    import os
    import signal
    import subprocess
    import time

    import psutil

    from specadvisor.store import Store

    fake = Path(__file__).resolve().parents[1] / "engine" / "fake_vllm.py"
    db = tmp_path / "s.db"
    argv = [sys.executable, "-m", "specadvisor", "--db", str(db), "sweep", "--model", "m", "--num-prompts", "2"]
    env = {**os.environ, "SPECADVISOR_HOME": str(tmp_path / "home"), "HF_HUB_OFFLINE": "1"}
    sweep = subprocess.Popen(
        [*argv, "--engine-cmd", f"{sys.executable} {fake} --mode hang"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    servers: list[psutil.Process] = []
    deadline = time.monotonic() + 60
    while not servers and time.monotonic() < deadline and sweep.poll() is None:
        time.sleep(0.2)
        # the launched server (its --port), not the engine probe that runs the same command before the sweep
        servers = [c for c in psutil.Process(sweep.pid).children(recursive=True) if _is_server(c)]
    assert servers, "the stand-in server never started"
    sweep.send_signal(signal.SIGINT)
    _, err = sweep.communicate(timeout=60)
    assert sweep.returncode == 130, err
    assert "sweep interrupted; resume with: specadvisor sweep --resume " in err
    with Store.open(db) as store:
        (summary,) = store.list_sessions()
        assert store.get_session(summary.id).status == "interrupted"
    assert not any(s.is_running() and s.status() != psutil.STATUS_ZOMBIE for s in servers)
