"""measure_arm end to end over HTTP against the fake server: events, exclusions, warnings, trials."""

import pytest

from fakeserver import FakeConfig, FakeServer
from specadvisor.bench.loadgen import LoadResult, RequestRecord
from specadvisor.bench.measure import measure_arm, window_throughputs
from specadvisor.bench.prompts import Prompt, PromptSet
from specadvisor.domain import (
    Arm,
    ArmFinished,
    ArmStatus,
    MeasurementWarning,
    MetricsSampled,
    Progress,
    SweepSettings,
    WarmupStarted,
)


def prompts(n: int, text: str = "one two three") -> PromptSet:
    return PromptSet(source="t", prompts=[Prompt(text=f"{text} {i}", id=f"p{i}") for i in range(n)])


async def collect(server, *, arm=None, settings=None, ps=None, on_event=None, interval=0.05):
    events = []
    async for ev in measure_arm(
        base_url=server.base_url,
        model_name="m",
        arm=arm or Arm(id="a", label="a", concurrency=2),
        settings=settings or SweepSettings(output_len=12, warmup=2),
        prompts=ps or prompts(6),
        sample_interval_s=interval,
    ):
        events.append(ev)
        if on_event:
            on_event(ev)
    return events


@pytest.fixture
async def spec_server():
    srv = await FakeServer(FakeConfig(num_spec_tokens=4, chunk_delay_s=0.01)).start()
    yield srv
    await srv.stop()


async def test_event_order_and_one_final_result(spec_server):
    # 6 prompts at concurrency 2 would drain alone at the end (the load check warns): give it 12
    events = await collect(spec_server, ps=prompts(12))
    assert isinstance(events[0], WarmupStarted) and events[0].requests == 2
    assert isinstance(events[-1], ArmFinished)
    assert sum(isinstance(e, ArmFinished) for e in events) == 1
    assert any(isinstance(e, MetricsSampled) for e in events)
    progress = [e for e in events if isinstance(e, Progress)]
    assert progress[-1].completed == progress[-1].total == 12
    r = events[-1].result
    assert r.status == ArmStatus.ok and r.completed == 12 and r.failed == 0
    assert r.output_tokens == 144 and r.vllm_version == "0.32.0-fake"
    assert r.output_throughput > 0 and r.request_throughput > 0 and r.achieved_request_rate > 0
    for s in (r.ttft_ms, r.tpot_ms, r.itl_ms, r.e2el_ms):
        assert s.mean is not None and s.p99 is not None
    assert not r.warnings


async def test_spec_figures_exclude_warmups(spec_server):
    st = spec_server.state
    events = await collect(spec_server, settings=SweepSettings(output_len=12, warmup=3))
    r = events[-1].result
    assert st.success == 9  # 3 warmups + 6 measured reached the server
    assert r.num_drafts < st.drafts and r.num_accepted_tokens < st.accepted  # warmups not counted
    assert r.mean_acceptance_length == pytest.approx(1 + r.num_accepted_tokens / r.num_drafts)
    assert r.acceptance_rate == pytest.approx(r.num_accepted_tokens / r.num_draft_tokens)
    assert r.num_draft_tokens == 4 * r.num_drafts
    assert [p.position for p in r.per_position] == [0, 1, 2, 3]
    assert all(p.drafts == r.num_drafts and p.ci_low <= p.rate <= p.ci_high for p in r.per_position)
    samples = [e.sample for e in events if isinstance(e, MetricsSampled)]
    assert samples[-1].num_drafts == r.num_drafts  # live samples are deltas since the arm's start
    assert len(samples[-1].accepted_per_position) == 4


async def test_foreign_traffic_is_warned(spec_server):
    def inject(ev):
        if isinstance(ev, Progress) and not getattr(inject, "done", False):
            spec_server.add_foreign_requests(3)
            inject.done = True

    events = await collect(spec_server, ps=prompts(8), on_event=inject, interval=0.02)
    warnings = [e.message for e in events if isinstance(e, MeasurementWarning)]
    assert any("foreign traffic" in w and "11" in w for w in warnings)
    assert any("foreign traffic" in w for w in events[-1].result.warnings)


async def test_baseline_server_has_no_spec_figures():
    srv = await FakeServer(FakeConfig()).start()
    try:
        events = await collect(srv, arm=Arm(id="baseline", label="baseline"))
    finally:
        await srv.stop()
    r = events[-1].result
    assert r.status == ArmStatus.ok and r.num_drafts is None and r.mean_acceptance_length is None and r.per_position == []


async def test_trials_reset_prefix_cache_and_give_an_interval(spec_server):
    events = await collect(spec_server, settings=SweepSettings(output_len=12, warmup=1, trials=3))
    r = events[-1].result
    assert spec_server.state.resets == 3
    assert len(r.trials) == 3 and r.completed == 18
    lo, hi = r.output_throughput_ci
    assert lo <= sum(r.trials) / 3 <= hi


async def test_missing_reset_endpoint_is_warned():
    srv = await FakeServer(FakeConfig(reset_available=False)).start()
    try:
        events = await collect(srv, settings=SweepSettings(output_len=4, warmup=0, trials=2))
    finally:
        await srv.stop()
    assert any("VLLM_SERVER_DEV_MODE" in w for w in events[-1].result.warnings)


async def test_failed_clamped_and_synthetic_are_warned():
    srv = await FakeServer(FakeConfig(max_model_len=14)).start()
    ps = PromptSet(source="x", synthetic=True, prompts=[Prompt(text="FAIL500"), Prompt(text="a b c d"), Prompt(text="e f")])
    try:
        events = await collect(srv, ps=ps, settings=SweepSettings(output_len=12, warmup=0))
    finally:
        await srv.stop()
    w = " | ".join(events[-1].result.warnings)
    assert "synthetic" in w and "1 of 3 requests failed" in w and "output clamped" in w
    assert events[-1].result.failed == 1


async def test_all_failed_is_a_failed_result():
    srv = await FakeServer(FakeConfig()).start()
    try:
        events = await collect(srv, ps=PromptSet(source="x", prompts=[Prompt(text="FAIL500")]), settings=SweepSettings(warmup=1))
    finally:
        await srv.stop()
    r = events[-1].result
    assert isinstance(events[-1], ArmFinished) and r.status == ArmStatus.failed and "HTTP 500" in r.error


async def test_unreachable_server_still_ends_with_one_result():
    server = FakeServer()
    server.port = 9
    events = await collect(server, ps=prompts(2), settings=SweepSettings(warmup=0))
    assert isinstance(events[-1], ArmFinished) and events[-1].result.status == ArmStatus.failed
    assert any("/metrics" in e.message for e in events if isinstance(e, MeasurementWarning))


def test_window_throughputs_spread_tokens_over_time():
    recs = [RequestRecord(ok=True, completion_tokens=10, ttft_s=0.5, latency_s=9.5, itl_s=[1.0] * 9, start_s=100.0 + i) for i in range(2)]
    load = LoadResult(records=recs, duration_s=10.5, achieved_rate=1.0, start_s=100.0, end_s=110.5)
    windows = window_throughputs(load)
    assert len(windows) == 10
    assert sum(w * 1.05 for w in windows) == pytest.approx(20.0)


async def test_stopping_iteration_stops_the_load(spec_server):
    import asyncio

    gen = measure_arm(
        base_url=spec_server.base_url,
        model_name="m",
        arm=Arm(id="a", label="a", concurrency=2),
        settings=SweepSettings(output_len=12, warmup=0),
        prompts=prompts(20),
        sample_interval_s=0.05,
    )
    async for ev in gen:
        if isinstance(ev, Progress):
            break
    await gen.aclose()
    sent = len(spec_server.state.requests)
    await asyncio.sleep(0.5)
    assert len(spec_server.state.requests) == sent < 20


async def test_live_sampling_backs_off_when_scrapes_are_slow():
    srv = await FakeServer(FakeConfig(chunk_delay_s=0.01, metrics_delay_s=0.02)).start()
    try:
        events = await collect(srv, ps=prompts(12), settings=SweepSettings(output_len=20, warmup=0), interval=0.01)
    finally:
        await srv.stop()
    r = events[-1].result
    live = [e for e in events if isinstance(e, MetricsSampled)][:-1]  # the last one closes the trial
    # without the budget: one sample every ~0.03 s; with it: at most one per 100 x 0.02 s = 2 s
    assert r.duration_s > 1.0 and len(live) <= 1 + r.duration_s / 2.0


async def test_the_result_hands_over_one_record_per_measured_request_by_prompt_index(spec_server):
    """Per-request records (prompt index, TTFT, latency, tokens): warmups excluded, every prompt once."""
    events = await collect(spec_server, ps=prompts(8))
    (run,) = events[-1].result.runs
    assert sorted(r.index for r in run.requests) == list(range(8))
    assert {r.prompt_id for r in run.requests} == {f"p{i}" for i in range(8)}
    assert all(r.output_tokens == 12 and r.latency_ms > 0 and 0 < r.ttft_ms <= r.latency_ms for r in run.requests)
