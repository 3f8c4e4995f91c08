"""The achieved-load self-check over real HTTP to the fake server: a trial must apply the load asked
(mean requests in flight in a closed loop, the send rate under Poisson arrivals) or say it did not."""

import pytest

from fakeserver import FakeConfig, FakeServer
from specadvisor.bench.loadcheck import achieved_load, shortfall_warning
from specadvisor.bench.loadgen import LoadResult, RequestRecord
from specadvisor.bench.measure import measure_arm
from specadvisor.bench.prompts import Prompt, PromptSet
from specadvisor.domain import Arm, ArmFinished, MeasurementWarning, Progress, SweepSettings


def prompts(n: int) -> PromptSet:
    return PromptSet(source="t", prompts=[Prompt(text=f"one two three {i}", id=f"p{i}") for i in range(n)])


async def run(concurrency: int, n_prompts: int, *, rate=None, delay=0.01, output_len=12):
    srv = await FakeServer(FakeConfig(chunk_delay_s=delay)).start()
    try:
        events = [
            ev
            async for ev in measure_arm(
                base_url=srv.base_url,
                model_name="m",
                arm=Arm(id="a", label="a", concurrency=concurrency),
                settings=SweepSettings(output_len=output_len, warmup=0, request_rate=rate),
                prompts=prompts(n_prompts),
                sample_interval_s=0.05,
            )
        ]
    finally:
        await srv.stop()
    assert isinstance(events[-1], ArmFinished)
    return events


async def test_closed_loop_at_concurrency_4_keeps_4_in_flight():
    events = await run(4, 16)
    load = events[-1].result.achieved_load
    assert load.mode == "closed" and load.asked == 4
    assert 3.4 <= load.achieved <= 4.0 + 1e-9, load
    assert not [e for e in events if isinstance(e, MeasurementWarning) and "achieved load" in e.message]
    live = [e for e in events if isinstance(e, Progress) and e.in_flight is not None]
    assert live and max(e.in_flight for e in live) <= 4 and all(e.concurrency == 4 for e in live)


async def test_too_few_prompts_for_the_concurrency_is_warned():
    # 5 prompts at concurrency 4: one wave of 4, then one request alone: about 2.5 in flight on average
    events = await run(4, 5)
    load = events[-1].result.achieved_load
    assert load.achieved < 3.6
    warnings = [e.message for e in events if isinstance(e, MeasurementWarning)]
    assert any("achieved load" in w and "concurrency 4 asked" in w and "at least 16" in w for w in warnings), warnings
    assert any("achieved load" in w for w in events[-1].result.warnings)


async def test_poisson_rate_held_back_by_the_concurrency_cap_is_warned():
    # 100 requests/s asked, but one at a time on a server that needs ~0.05 s per request
    events = await run(1, 8, rate=100.0, delay=0.01)
    load = events[-1].result.achieved_load
    assert load.mode == "poisson" and load.asked == 100.0 and load.achieved < 50
    assert any("achieved request rate" in e.message and "concurrency cap 1" in e.message for e in events if isinstance(e, MeasurementWarning))


def _record(start: float, end: float) -> RequestRecord:
    return RequestRecord(ok=True, completion_tokens=4, ttft_s=0.1, latency_s=end - start, start_s=start, end_s=end)


def test_mean_in_flight_is_request_time_over_duration():
    load = LoadResult(records=[_record(0, 10), _record(0, 10), _record(0, 5), _record(5, 10)], duration_s=10.0, achieved_rate=0.3, concurrency=4)
    assert load.mean_in_flight == pytest.approx(3.0)
    summary = achieved_load([load, load])
    assert summary.achieved == pytest.approx(3.0) and summary.per_trial == [3.0, 3.0] and summary.short() == "3.0/4 in flight"
    assert "25% below" in shortfall_warning(load, num_prompts=100)
    full = load.model_copy(update={"concurrency": 3})
    assert shortfall_warning(full, num_prompts=100) is None  # 3 of 3: nothing to say


def test_throughput_intervals_never_go_below_zero():
    from specadvisor import stats

    lo, hi = stats.throughput_ci([60.0, 140.0, 100.0])  # widely spread trials: wide, but positive
    assert 0 < lo < 60 and hi > 140
    assert stats.t_critical_975(2) * 40 / 3**0.5 > 60  # the plain t interval would have gone below zero
    # too few figures, or figures that disagree by 30x: no interval rather than an absurd one
    assert stats.throughput_ci([500.0]) is None and stats.throughput_ci([100.0, 3000.0]) is None
    assert stats.throughput_ci([100.0, 3000.0, 1500.0]) is None and stats.throughput_ci([0.0, 10.0, 20.0]) is None
    lo, hi = stats.throughput_ci([100.0, 102.0, 98.0, 101.0])
    assert 97 < lo < 100.25 < hi < 104


def _steady_load(duration: float, latency: float, streams: int, tokens: int = 16) -> LoadResult:
    """`streams` back-to-back request chains of `latency` seconds each, over `duration` seconds."""
    recs = []
    for s in range(streams):
        t = s * latency / streams
        while t + latency <= duration:
            gaps = [latency / tokens] * (tokens - 1)
            recs.append(RequestRecord(ok=True, completion_tokens=tokens, ttft_s=latency / tokens, latency_s=latency, itl_s=gaps, start_s=t, end_s=t + latency))
            t += latency
    return LoadResult(records=recs, duration_s=duration, achieved_rate=1.0, start_s=0.0, end_s=duration, concurrency=streams)


def test_a_short_single_run_says_one_trial_no_interval():
    from specadvisor.bench.measure import single_run_interval

    # the H200 baseline at c=8: about 2.7 s of requests, far too short for 10 independent windows
    ci, basis = single_run_interval(_steady_load(2.7, 0.3, 8))
    assert ci is None and basis.startswith("one trial: no interval")


def test_a_long_steady_run_gets_a_batch_means_interval():
    from specadvisor.bench.measure import single_run_interval

    load = _steady_load(30.0, 1.0, 4)
    ci, basis = single_run_interval(load)
    assert ci is not None and "batch means over" in basis
    assert 0 < ci[0] <= load.output_throughput <= ci[1] and ci[1] / ci[0] < 1.5
