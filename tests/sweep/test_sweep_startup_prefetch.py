"""The runner fetches checkpoints before the first launch and records cold/warm start-ups; real
runner and SQLite store, fakes only at the process boundary."""

from __future__ import annotations

import asyncio

import pytest

from specadvisor.domain import DownloadProgress, ServerStarting, SweepSettings
from specadvisor.errors import InputError
from specadvisor.sweep.plan import plan_from_methods
from specadvisor.sweep.runner import SweepRunner
from sweep_fakes import FakeMeasure, FakeServer, no_prompts


def make_plan(**settings):
    return plan_from_methods("org/target", [("ngram", {})], [2], SweepSettings(num_prompts=8, **settings))


async def test_downloads_finish_before_the_first_server_starts(store):
    async def prefetch(session, emit):
        emit(DownloadProgress(repo_id=session.model, done_bytes=0, total_bytes=10))
        emit(DownloadProgress(repo_id=session.model, status="done", done_bytes=10, total_bytes=10))

    runner = SweepRunner(
        make_plan(), store, server_factory=lambda a, s: FakeServer(a), measure=FakeMeasure(lambda a: 100.0), prompt_loader=no_prompts, prefetch=prefetch
    )
    events = [e async for e in runner.events()]
    kinds = [e.kind for e in events if isinstance(e, (DownloadProgress, ServerStarting))]
    assert kinds[:2] == ["download", "download"] and "server_starting" in kinds[2:]


async def test_a_full_disk_stops_the_sweep_before_any_launch(store):
    async def prefetch(session, emit):
        raise InputError("not enough disk space to download org/target: 9 GB needed, 1 GB free in /x", hint="free some space")

    runner = SweepRunner(
        make_plan(), store, server_factory=lambda a, s: FakeServer(a), measure=FakeMeasure(lambda a: 100.0), prompt_loader=no_prompts, prefetch=prefetch
    )
    with pytest.raises(InputError, match="not enough disk space"):
        [e async for e in runner.events()]
    assert FakeServer.instances == []


async def test_quitting_during_the_checks_before_the_first_launch_keeps_the_plan(store):
    """Quit (cancel) while the pre-launch checks run: nothing was measured, but the plan is stored as
    interrupted, resumable from Sessions, instead of being lost with the window."""
    checking = asyncio.Event()

    async def prefetch(session, emit):
        checking.set()
        await asyncio.sleep(3600)

    plan = make_plan()
    runner = SweepRunner(
        plan, store, server_factory=lambda a, s: FakeServer(a), measure=FakeMeasure(lambda a: 100.0), prompt_loader=no_prompts, prefetch=prefetch
    )

    async def consume():
        return [e async for e in runner.events()]

    task = asyncio.create_task(consume())
    await asyncio.wait_for(checking.wait(), 10)
    runner.cancel()
    await asyncio.wait_for(task, 10)
    stored = store.get_session(plan.session.id)
    assert stored.status == "interrupted" and not stored.results
    assert [a.id for a in stored.arms] == [a.id for a in plan.session.arms]
    assert FakeServer.instances == []


async def test_a_failed_check_before_the_first_launch_stores_nothing(store):
    async def prefetch(session, emit):
        raise InputError("arm ngram-n2: bad config", hint="fix it")

    plan = make_plan()
    runner = SweepRunner(
        plan, store, server_factory=lambda a, s: FakeServer(a), measure=FakeMeasure(lambda a: 100.0), prompt_loader=no_prompts, prefetch=prefetch
    )
    with pytest.raises(InputError):
        [e async for e in runner.events()]
    assert not store.has_session(plan.session.id)


async def test_first_launch_of_a_configuration_is_cold_later_ones_warm(store):
    plan = make_plan(trials=2)
    runner = SweepRunner(plan, store, server_factory=lambda a, s: FakeServer(a), measure=FakeMeasure(lambda a: 100.0), prompt_loader=no_prompts)
    [e async for e in runner.events()]
    base = store.get_session(plan.session.id).result_for("baseline")
    assert [r.startup_cache for r in base.runs] == ["cold", "warm", "warm"]  # trial 1, trial 2, bracket
    assert base.startup_cold_s == 1.5 and base.startup_warm_s == 1.5


async def test_the_vllm_log_decides_cold_or_warm_when_it_says(store):
    class WarmLog(FakeServer):
        def tail(self, n=40):
            return ["INFO Directly load the compiled graph(s) for dynamic shape from the cache, took 2.0 s"]

    plan = make_plan()
    runner = SweepRunner(plan, store, server_factory=lambda a, s: WarmLog(a), measure=FakeMeasure(lambda a: 100.0), prompt_loader=no_prompts)
    [e async for e in runner.events()]
    n2 = store.get_session(plan.session.id).result_for("ngram-n2")
    assert n2.runs[0].startup_cache == "warm" and n2.startup_warm_s == 1.5 and n2.startup_cold_s is None


async def test_cold_and_warm_start_up_reach_json_and_the_report(store):
    from specadvisor.analysis.summary import session_summary
    from specadvisor.report.content import schedule_facts

    plan = make_plan(trials=2)
    runner = SweepRunner(plan, store, server_factory=lambda a, s: FakeServer(a), measure=FakeMeasure(lambda a: 100.0), prompt_loader=no_prompts)
    [e async for e in runner.events()]
    session = store.get_session(plan.session.id)
    rows = {a["arm_id"]: a for a in session_summary(session)["arms"]}
    assert rows["ngram-n2"]["startup_cold_s"] == 1.5 and rows["ngram-n2"]["startup_warm_s"] == 1.5
    assert [r["startup_cache"] for r in rows["ngram-n2"]["runs"]] == ["cold", "warm"]
    facts = dict(schedule_facts(session, session.recommendation))
    assert "ngram-n2 2 s cold / 2 s warm" in facts["server start-up"]


def test_the_live_model_shows_downloads_while_they_run():
    from specadvisor.app.live import SweepState

    state = SweepState()
    assert state.apply(DownloadProgress(repo_id="org/t", done_bytes=0, total_bytes=2_000_000_000)) == {"log", "progress"}
    assert state.apply(DownloadProgress(repo_id="org/t", done_bytes=500_000_000, total_bytes=2_000_000_000)) == {"progress"}
    assert state.download_text() == "downloading org/t 500 MB/2.00 GB"
    state.apply(DownloadProgress(repo_id="org/t", status="done", done_bytes=2_000_000_000, total_bytes=2_000_000_000))
    state.apply(DownloadProgress(repo_id="org/d", status="failed", message="ConnectionError: reset"))
    assert state.download_text() == ""
    assert [line for _, line in state.log] == ["org/t: downloading 2.00 GB", "org/t: downloaded", "org/d: download failed (ConnectionError: reset)"]
    assert list(state.warnings) == ["download of org/d failed: ConnectionError: reset"]
