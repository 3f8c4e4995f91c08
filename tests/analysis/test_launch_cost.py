"""One estimate of what another launch costs, shared by the decision's next step and the runner's
budget check: per arm its own mean start-up and pass time, launched `slots` at a time."""

from __future__ import annotations

import pytest

from specadvisor.analysis.costs import UNMEASURED_S, launch_cost, round_seconds
from specadvisor.domain import ArmResult, ArmStatus, RunRecord


def _result(arm_id: str, *launches: tuple[float, list[float]]) -> ArmResult:
    """One launch per (start-up s, [duration of each pass] s), each on its own trial."""
    runs = [
        RunRecord(trial=t, wave=t, status="ok", startup_s=startup, duration_s=d, output_throughput=100.0, completed=10, repeat=k)
        for t, (startup, passes) in enumerate(launches, start=1)
        for k, d in enumerate(passes, start=1)
    ]
    return ArmResult(arm_id=arm_id, status=ArmStatus.ok, output_throughput=100.0, runs=runs)


def test_a_launch_costs_its_mean_start_up_and_pass_a_launch_of_many_passes_counting_once():
    cost = launch_cost(_result("a", (10.0, [4.0, 6.0]), (30.0, [8.0])))
    assert cost.startup_s == pytest.approx(20.0), "start-ups averaged per launch, not per pass"
    assert cost.pass_s == pytest.approx((5.0 + 8.0) / 2)
    assert cost.seconds(passes=3) == pytest.approx(20.0 + 3 * 6.5)


def test_an_arm_never_measured_costs_the_default():
    assert launch_cost(None).seconds() == 2 * UNMEASURED_S


def test_a_round_launches_slots_at_a_time_each_wave_as_long_as_its_slowest():
    results = {"a": _result("a", (10.0, [10.0])), "b": _result("b", (30.0, [10.0])), "c": _result("c", (5.0, [5.0]))}
    ids = ["a", "b", "c"]
    assert round_seconds(results.get, ids) == pytest.approx(20 + 40 + 10), "one slot: one after another"
    assert round_seconds(results.get, ids, slots=2) == pytest.approx(40 + 10), "waves (a, b) then (c)"
    assert round_seconds(results.get, ids, passes=2, slots=3) == pytest.approx(30 + 2 * 10)
