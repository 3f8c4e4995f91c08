"""Recommendation rules: throughput, near-ties to smaller N, baseline wins, SLO filter, schedule."""

from __future__ import annotations

import pytest

from specadvisor.domain import LatencyStats, SweepSettings
from specadvisor.sweep.plan import plan_from_methods
from specadvisor.sweep.recommend import recommend
from sweep_fakes import spec_result


def session(throughputs: dict, concurrency=(1,), **settings):
    plan = plan_from_methods("m", [("ngram", {})], [2, 4, 6], SweepSettings(concurrency=list(concurrency), **settings))
    s = plan.session
    for arm in s.arms:
        if arm.id in throughputs:
            s.results.append(spec_result(arm.id, arm.n, throughputs[arm.id]))
    return s


def test_highest_throughput_wins_with_speedup_and_command():
    rec = recommend(session({"baseline": 100, "ngram-n2": 130, "ngram-n4": 160, "ngram-n6": 140}))
    assert rec.arm_id == "ngram-n4" and not rec.do_not_speculate
    assert rec.speedup == 1.6
    assert rec.speculative_config == {"method": "ngram", "num_speculative_tokens": 4}
    assert "--speculative-config" in rec.serve_command and "vllm" in rec.serve_command


def test_near_tie_goes_to_smaller_n():
    rec = recommend(session({"baseline": 100, "ngram-n2": 150, "ngram-n4": 152, "ngram-n6": 140}))
    assert rec.arm_id == "ngram-n2"
    assert any("smaller N wins the tie" in r for r in rec.reasons)


def test_baseline_wins_says_do_not_speculate_and_why():
    rec = recommend(session({"baseline": 100, "ngram-n2": 90, "ngram-n4": 80}))
    assert rec.do_not_speculate and rec.arm_id is None and rec.speculative_config is None
    assert rec.reasons[0].startswith("do not speculate here")
    assert "ngram N=2" in rec.reasons[0] and "-10.0%" in rec.reasons[0]


def test_tie_with_baseline_also_means_do_not_speculate():
    rec = recommend(session({"baseline": 100, "ngram-n2": 101}))
    assert rec.do_not_speculate


def test_slo_filters_on_p99_tpot():
    s = session({"baseline": 100, "ngram-n2": 130, "ngram-n4": 160}, slo_tpot_ms=20)
    for r in s.results:
        r.tpot_ms = LatencyStats(p99={"baseline": 10, "ngram-n2": 15, "ngram-n4": 25}[r.arm_id])
    rec = recommend(s)
    assert rec.arm_id == "ngram-n2"
    assert any("latency target" in r for r in rec.reasons)


def test_batch_size_schedule_from_several_concurrency_levels():
    s = session(
        {
            "baseline-c1": 100,
            "ngram-n2-c1": 150,
            "ngram-n4-c1": 180,
            "ngram-n6-c1": 160,
            "baseline-c8": 600,
            "ngram-n2-c8": 700,
            "ngram-n4-c8": 650,
            "ngram-n6-c8": 500,
            "baseline-c32": 1500,
            "ngram-n2-c32": 1200,
            "ngram-n4-c32": 1000,
        },
        concurrency=(1, 8, 32),
    )
    rec = recommend(s)
    assert rec.arm_id == "ngram-n4-c1"
    assert rec.batch_size_schedule == [[1, 2, 4], [3, 16, 2], [17, 1024, 0]]


def test_nothing_measured_recommends_nothing():
    rec = recommend(session({}))
    assert rec.arm_id is None and not rec.do_not_speculate


def test_failed_baseline_leaves_the_pick_unconfirmed_and_says_how_to_fix_it():
    s = session({"ngram-n2": 130, "ngram-n4": 160})  # the planned baseline has no result
    rec = recommend(s)
    assert rec.arm_id == "ngram-n4" and rec.speedup is None
    assert rec.reasons[0].startswith("UNCONFIRMED: the no-speculation baseline failed")
    assert f"--resume {s.id[:8]}" in rec.reasons[0]


def test_sweep_without_a_baseline_arm_says_none_was_measured():
    plan = plan_from_methods("m", [("ngram", {})], [2], SweepSettings(), baseline=False)
    plan.session.results.append(spec_result("ngram-n2", 2, 120))
    rec = recommend(plan.session)
    assert "no no-speculation baseline was measured" in rec.reasons[0] and "--baseline" in rec.reasons[0]


def test_clear_gain_with_overlapping_intervals_is_not_a_tie():
    """Real demo figures: 43.6 +- 7.9 vs 34.0 +- 3.0 tok/s overlap, yet the gain is well outside noise."""
    s = session({"baseline": 34.0, "ngram-n2": 43.2, "ngram-n4": 43.6})
    half = {"baseline": 3.0, "ngram-n2": 6.1, "ngram-n4": 7.9}
    for r in s.results:
        r.output_throughput_ci = (r.output_throughput - half[r.arm_id], r.output_throughput + half[r.arm_id])
    rec = recommend(s)
    assert not rec.do_not_speculate
    assert rec.arm_id == "ngram-n2"  # N=2 and N=4 are within noise of each other: the smaller N wins


def test_difference_inside_its_interval_is_a_tie():
    s = session({"baseline": 34.0, "ngram-n2": 38.0})
    for r in s.results:
        r.output_throughput_ci = (r.output_throughput - 4.0, r.output_throughput + 4.0)
    assert recommend(s).do_not_speculate  # 4.0 < hypot(4, 4) = 5.7


def test_every_measured_concurrency_gets_its_own_answer():
    """Two levels measured: the recommendation speaks of each (it used to speak of concurrency 1 only)."""
    from specadvisor.domain import SweepSettings
    from specadvisor.sweep.plan import plan_from_methods
    from specadvisor.sweep.recommend import recommend
    from sweep_fakes import spec_result

    s = plan_from_methods("m", [("ngram", {})], [2, 4], SweepSettings(concurrency=[1, 8])).session
    figures = {"baseline-c1": 100.0, "ngram-n2-c1": 150.0, "ngram-n4-c1": 140.0, "baseline-c8": 600.0, "ngram-n2-c8": 420.0, "ngram-n4-c8": 400.0}
    for arm_id, tps in figures.items():
        n = None if arm_id.startswith("baseline") else int(arm_id.split("-n")[1].split("-")[0])
        s.results.append(spec_result(arm_id, n, tps))
    rec = recommend(s)
    picks = {p.concurrency: p for p in rec.per_concurrency}
    assert set(picks) == {1, 8}
    assert picks[1].arm_id == "ngram-n2-c1" and picks[1].speedup == pytest.approx(1.5)
    assert picks[8].do_not_speculate and picks[8].arm_id is None and "do not speculate" in picks[8].summary
    assert any(r.startswith("at concurrency 8: do not speculate") for r in rec.reasons)
    assert any(r.startswith("at concurrency 1: ngram N=2") for r in rec.reasons)
