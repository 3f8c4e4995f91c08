"""The goodput search: geometric growth to the break, then bisection of the edge (no server needed:
`measure` is a latency model; the real one runs in tests/e2e)."""

from __future__ import annotations

import asyncio

import pytest

from specadvisor.bench.goodput import Slo, rate_point, search_goodput
from specadvisor.bench.loadgen import LoadResult, RequestRecord
from specadvisor.domain import RatePoint


def queue_model(capacity: float, slo: Slo):
    """p99 TPOT grows like 1/(1 - utilization): 20 ms idle, unbounded at `capacity` req/s."""
    asked: list[float] = []

    async def measure(rate: float) -> RatePoint:
        asked.append(rate)
        util = min(0.999, rate / capacity)
        tpot = 20.0 / (1 - util)
        return RatePoint(rate=rate, achieved_rate=rate, completed=16, tpot_p99_ms=tpot, ttft_p99_ms=100.0, meets_slo=slo.met_by(tpot, 100.0, 0))

    return measure, asked


def test_finds_the_edge_within_precision_and_reports_a_measured_rate():
    slo = Slo(tpot_ms=40)  # met while rate <= capacity / 2
    measure, asked = queue_model(capacity=20.0, slo=slo)
    found = asyncio.run(search_goodput(measure, slo, start_rate=1.0, max_rate=100, precision=0.05, max_points=20))
    assert found.goodput_rps in asked and found.goodput_rps <= 10.0
    assert found.goodput_rps >= 10.0 * 0.95
    met, broke = found.bracket
    assert met == found.goodput_rps and broke > 10.0 and (broke - met) / broke <= 0.05
    assert asked[:5] == [1.0, 2.0, 4.0, 8.0, 16.0]  # doubling until the target breaks


def test_goes_down_when_the_first_rate_already_breaks():
    slo = Slo(tpot_ms=25)  # met below capacity / 5 = 0.4 req/s
    measure, asked = queue_model(capacity=2.0, slo=slo)
    found = asyncio.run(search_goodput(measure, slo, start_rate=1.0, max_rate=8, max_points=12))
    assert asked[:3] == [1.0, 0.5, 0.25] and 0.25 <= found.goodput_rps <= 0.4


def test_none_when_no_rate_meets_and_points_are_capped():
    slo = Slo(tpot_ms=5)
    measure, asked = queue_model(capacity=2.0, slo=slo)
    found = asyncio.run(search_goodput(measure, slo, start_rate=1.0, max_rate=8, max_points=10))
    assert found.goodput_rps is None and found.bracket is None and asked == [1.0, 0.5, 0.25, 0.125]  # three steps down at most


def test_max_rate_caps_the_growth():
    slo = Slo(tpot_ms=1000)
    measure, asked = queue_model(capacity=1000.0, slo=slo)
    found = asyncio.run(search_goodput(measure, slo, start_rate=1.0, max_rate=5))
    assert asked == [1.0, 2.0, 4.0, 5.0] and found.goodput_rps == 5.0


def test_slo_needs_a_target_and_failures_break_it():
    with pytest.raises(ValueError):
        Slo()
    slo = Slo(tpot_ms=50, ttft_ms=500)
    assert slo.met_by(40, 400, 0) and not slo.met_by(40, 600, 0) and not slo.met_by(40, 400, 1) and not slo.met_by(None, 400, 0)
    assert slo.describe() == "p99 TPOT <= 50 ms and p99 TTFT <= 500 ms"


def test_rate_point_reads_p99_from_the_records():
    records = [RequestRecord(ok=True, completion_tokens=11, ttft_s=0.1 + i / 1000, latency_s=0.1 + i / 1000 + 10 * 0.02 * (1 + i / 100)) for i in range(100)]
    load = LoadResult(records=records, duration_s=10.0, achieved_rate=9.5)
    point = rate_point(10.0, load, Slo(tpot_ms=40))
    assert point.completed == 100 and point.achieved_rate == 9.5
    assert point.tpot_p99_ms == pytest.approx(20 * (1 + 98.01 / 100), rel=1e-3) and point.meets_slo
    assert not rate_point(10.0, load, Slo(tpot_ms=39)).meets_slo
    assert point.ttft_p99_ms == pytest.approx(100 + 98.01, rel=1e-3)


def test_a_rate_is_held_for_a_window_not_a_burst():
    from specadvisor.bench.goodput import cycled
    from specadvisor.bench.prompts import Prompt, PromptSet

    prompts = PromptSet(prompts=[Prompt(id=str(i), text=f"p{i}") for i in range(3)], source="t")
    assert [p.id for p in cycled(prompts, 7).prompts] == ["0", "1", "2", "0", "1", "2", "0"]
    assert len(cycled(prompts, 2).prompts) == 2 and len(cycled(prompts, 3).prompts) == 3
