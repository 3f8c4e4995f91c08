"""The runner against a real SQLite store, with fakes only for the server process and the load."""

from __future__ import annotations

import asyncio
import contextlib
import threading

import pytest

from specadvisor.domain import Arm, ArmFailed, ArmFinished, ArmStatus, ServerLog, ServerStarting, SweepFinished, SweepSettings
from specadvisor.store import Store
from specadvisor.sweep.plan import plan_from_methods
from specadvisor.sweep.runner import SweepRunner
from sweep_fakes import FakeMeasure, FakeServer, no_prompts


def tput(arm):
    return {None: 100.0, 2: 150.0, 4: 140.0}[arm.n]


def make_plan(n_values=(2, 4), **settings):
    return plan_from_methods("m", [("ngram", {"prompt_lookup_min": 2})], list(n_values), SweepSettings(num_prompts=8, **settings))


def factory(fail=()):
    return lambda arm, session: FakeServer(arm, fail_start=arm.id in fail)


async def collect(runner):
    return [e async for e in runner.events()]


async def test_each_arm_is_persisted_and_recommended(store):
    plan = make_plan()
    runner = SweepRunner(plan, store, server_factory=factory(), measure=FakeMeasure(tput), prompt_loader=no_prompts)
    events = await collect(runner)
    finished = [e for e in events if isinstance(e, ArmFinished)]
    assert [e.result.arm_id for e in finished] == ["baseline", "ngram-n2", "ngram-n4", "baseline"]  # bracketed
    assert all(e.session_id == plan.session.id for e in events)
    stored = store.get_session(plan.session.id)
    assert stored.status == "finished"
    assert {r.arm_id for r in stored.results} == {"baseline", "ngram-n2", "ngram-n4"}
    assert stored.recommendation.arm_id == "ngram-n2"
    last = events[-1]
    assert isinstance(last, SweepFinished) and last.launches_used == 4 == last.launches_full_grid
    assert [run.role for run in stored.result_for("baseline").runs] == ["trial", "bracket"]
    assert stored.recommendation.drift is not None and stored.recommendation.drift.change == 0
    assert all(s.stopped for s in FakeServer.instances)
    assert any(isinstance(e, ServerLog) for e in events)
    starting = [e for e in events if isinstance(e, ServerStarting)]
    assert [e.command[-1] for e in starting] == ["baseline", "ngram-n2", "ngram-n4", "baseline"]


async def test_result_is_committed_before_the_next_arm_starts(store):
    plan = make_plan()
    seen_in_store = []

    def spying_factory(arm, session):
        seen_in_store.append(len(Store.open(store.path).get_session(session.id).results) if seen_in_store else 0)
        return FakeServer(arm)

    await collect(SweepRunner(plan, store, server_factory=spying_factory, measure=FakeMeasure(tput), prompt_loader=no_prompts))
    assert seen_in_store == [0, 1, 2, 3]  # the bracket starts after all three arms are stored


async def test_failed_start_is_recorded_and_the_sweep_goes_on(store):
    plan = make_plan()
    runner = SweepRunner(plan, store, server_factory=factory(fail={"ngram-n2"}), measure=FakeMeasure(tput), prompt_loader=no_prompts)
    events = await collect(runner)
    failed = [e for e in events if isinstance(e, ArmFailed)]
    assert [e.result.arm_id for e in failed] == ["ngram-n2"]
    assert "fake server exited during start-up" in failed[0].result.error
    assert "mid-arm" not in failed[0].result.error
    assert "ERROR fake cause" in failed[0].result.error_excerpt
    stored = store.get_session(plan.session.id)
    assert stored.result_for("ngram-n2").status == ArmStatus.failed
    assert stored.result_for("ngram-n4").status == ArmStatus.ok
    assert stored.recommendation.arm_id == "ngram-n4"


async def test_crash_mid_arm_costs_one_arm(store):
    plan = make_plan()
    measure = FakeMeasure(tput, crash={"ngram-n4"})
    events = await collect(SweepRunner(plan, store, server_factory=factory(), measure=measure, prompt_loader=no_prompts))
    failed = [e.result for e in events if isinstance(e, ArmFailed)]
    assert [r.arm_id for r in failed] == ["ngram-n4"] and "connection reset" in failed[0].error
    assert "exited mid-arm" in failed[0].error  # the fake server is no longer running after the crash
    assert isinstance(events[-1], SweepFinished)
    assert all(s.stopped for s in FakeServer.instances)


async def test_resume_skips_finished_arms(store):
    plan = make_plan()
    measure = FakeMeasure(tput, hang={"ngram-n4"})
    runner = SweepRunner(plan, store, server_factory=factory(), measure=measure, prompt_loader=no_prompts)
    async with contextlib.aclosing(runner.events()) as stream:
        async for event in stream:
            if isinstance(event, ArmFinished) and event.result.arm_id == "ngram-n2":
                break  # the consumer walks away (Ctrl-C in the CLI): the session must be resumable
    interrupted = store.get_session(plan.session.id)
    assert interrupted.status == "interrupted"
    assert {r.arm_id for r in interrupted.results} == {"baseline", "ngram-n2"}

    again = FakeMeasure(tput)
    events = await collect(SweepRunner(interrupted, store, server_factory=factory(), measure=again, prompt_loader=no_prompts))
    assert again.calls == ["ngram-n4", "baseline"]  # the unfinished arm, then the bracket
    assert store.get_session(plan.session.id).status == "finished"
    assert isinstance(events[-1], SweepFinished)


async def test_cancel_stops_the_running_server(store):
    plan = make_plan()
    runner = SweepRunner(plan, store, server_factory=factory(), measure=FakeMeasure(tput, hang={"baseline"}), prompt_loader=no_prompts)
    seen = []

    async def consume():
        async for event in runner.events():
            seen.append(event)

    task = asyncio.create_task(consume())
    while not FakeServer.instances or not FakeServer.instances[0].started:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)
    runner.cancel()
    await asyncio.wait_for(task, 5)
    assert FakeServer.instances[0].stopped
    assert len(FakeServer.instances) == 1
    assert store.get_session(plan.session.id).status == "interrupted"
    assert not any(isinstance(e, SweepFinished) for e in seen)


def test_a_front_end_drives_the_stream_to_its_end_on_its_own_thread(store):
    from specadvisor.app.running import drive

    plan = make_plan()
    events = []
    holder = {}

    def worker():
        holder["runner"] = SweepRunner(plan, Store.open(store.path), server_factory=factory(), measure=FakeMeasure(tput), prompt_loader=no_prompts)
        drive(holder["runner"], events.append)

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(10)
    assert not thread.is_alive()
    assert isinstance(events[-1], SweepFinished)
    assert holder["runner"].session.recommendation.arm_id == "ngram-n2"


async def test_adaptive_skips_hopeless_n_and_reports_launches(store):
    plan = make_plan(n_values=(1, 2, 3, 4, 5, 6))

    def curve(arm):  # AL(N) from RATES over a steep step cost: best at N=2..3
        if arm.n is None:
            return 100.0
        from sweep_fakes import RATES

        return 100.0 * (1 + sum(RATES[: arm.n])) / (1 + 0.25 * arm.n)

    measure = FakeMeasure(curve)
    events = await collect(SweepRunner(plan, store, server_factory=factory(), measure=measure, prompt_loader=no_prompts, adaptive=True))
    done = events[-1]
    assert isinstance(done, SweepFinished)
    assert done.launches_full_grid == 8  # 7 configurations + the bracket
    assert done.launches_used < done.launches_full_grid
    assert measure.calls[:2] == ["baseline", "ngram-n6"]
    stored_ = store.get_session(plan.session.id)
    measured = {a.n: curve(a) for a in stored_.arms if a.n and (r := stored_.result_for(a.id)) and r.output_throughput}
    best = max(measured.values())
    simplest_within_margin = min(n for n, v in measured.items() if v >= best / 1.03)  # ties go to the smaller N
    assert done.recommendation.arm_id == f"ngram-n{simplest_within_margin}"
    stored = store.get_session(plan.session.id)
    assert any(r.status == ArmStatus.skipped for r in stored.results)


async def test_bad_plan_input_is_one_line_error():
    from specadvisor.errors import InputError

    with pytest.raises(InputError, match="N must be >= 1"):
        make_plan(n_values=(0, 2))


def test_every_server_handle_has_what_the_runner_reads(tmp_path):
    """The protocol lists every attribute the runner uses; the real handles and the fakes carry them."""
    from specadvisor.engine import ServerSpec, VllmServer
    from specadvisor.sweep.runner import AttachedServer, RemoteServerHandle, ServerHandle

    vllm = VllmServer(ServerSpec(model="m", log_path=tmp_path / "server.log"))
    for handle in (vllm, AttachedServer("http://127.0.0.1:1"), FakeServer(Arm(id="a", label="a"))):
        assert isinstance(handle, ServerHandle)
        assert not isinstance(handle, RemoteServerHandle)
    assert vllm.log_path == tmp_path / "server.log" and vllm.diagnosis is None and not vllm.running
