"""specadvisor.figures: the one acceptance and the one speedup every view shows."""

from __future__ import annotations

import math

import pytest

from specadvisor.domain import Arm, ArmResult, ArmStatus, Session
from specadvisor.figures import (
    acceptance,
    all_speedups,
    arm_speedup,
    baseline_result,
    speedup_text,
)
from specadvisor.stats import t_quantile


def test_acceptance_uses_vllm_formulas_with_wilson_intervals():
    acc = acceptance(40, 160, 78, [28, 19, 17, 14])
    assert acc.mean_length == pytest.approx(1 + 78 / 40)
    assert acc.rate == pytest.approx(78 / 160)
    assert acc.rates == pytest.approx([0.7, 0.475, 0.425, 0.35])
    assert all(p.ci_low < p.rate < p.ci_high and p.drafts == 40 for p in acc.per_position)


def test_acceptance_with_nothing_drafted_is_unknown_not_zero():
    acc = acceptance(0, 0, 0, [0, 0])
    assert acc.mean_length is None and acc.rate is None and acc.rates == []


def test_a_count_above_the_drafts_is_capped_not_shown_above_100_percent():
    """Counters scraped a moment apart can show accepted[i] > drafts; a rate above 1 is impossible."""
    acc = acceptance(10, 40, 30, [11, 9])
    assert acc.rates == [1.0, 0.9]
    assert acc.per_position[0].ci_high == 1.0


def test_apply_to_writes_every_field():
    result = acceptance(10, 40, 26, [9, 8, 6, 3]).apply_to(ArmResult(arm_id="a"))
    assert (result.num_drafts, result.num_draft_tokens, result.num_accepted_tokens) == (10, 40, 26)
    assert result.mean_acceptance_length == pytest.approx(3.6) and result.acceptance_rate == pytest.approx(0.65)
    assert result.per_position_acceptance == [0.9, 0.8, 0.6, 0.3]


def _session(base_ci=(95.0, 105.0), spec_ci=(140.0, 160.0), base_status=ArmStatus.ok) -> Session:
    arms = [
        Arm(id="baseline", label="baseline"),
        Arm(id="baseline-c8", label="baseline c8", concurrency=8),
        Arm(id="ngram-n4", label="ngram N=4", method="ngram", n=4, speculative_config={"method": "ngram"}),
    ]
    results = [
        ArmResult(arm_id="baseline", status=base_status, output_throughput=100.0, output_throughput_ci=base_ci),
        ArmResult(arm_id="baseline-c8", output_throughput=400.0),
        ArmResult(arm_id="ngram-n4", output_throughput=150.0, output_throughput_ci=spec_ci),
    ]
    return Session(arms=arms, results=results)


def test_arm_speedup_is_the_decisions_estimate_against_the_baseline_at_the_same_concurrency():
    session = _session()
    figure = arm_speedup(session, session.arms[2])
    assert figure.value == pytest.approx(1.5) and figure.baseline_throughput == 100.0
    # one launch each, no per-request records: the launch-to-launch prior (7%, worth 4 launches) on both
    # sides, Student t on 4 df at 95% for the one speculative arm; the run's own CIs play no part
    half = t_quantile(0.975, 4) * math.sqrt(2 * 0.07**2)
    assert figure.ci == pytest.approx((1.5 * math.exp(-half), 1.5 * math.exp(half)))
    assert arm_speedup(session, session.arms[0]).text() == "1.00x (baseline)"
    assert baseline_result(session, 8).output_throughput == 400.0
    assert baseline_result(session, 4) is None


def test_speedup_without_a_usable_baseline_is_none():
    assert arm_speedup(_session(base_status=ArmStatus.failed), _session().arms[2]) is None
    alone = Session(
        arms=[Arm(id="ngram-n4", label="ngram N=4", method="ngram", n=4, speculative_config={"method": "ngram"})],
        results=[ArmResult(arm_id="ngram-n4", output_throughput=150.0)],
    )
    assert all_speedups(alone) == {"ngram-n4": None}
    assert speedup_text(1.5, None) == "1.50x (no interval)"


def test_speedup_text_is_one_format():
    assert speedup_text(1.4249, (1.3, 1.551)) == "1.42x [1.30-1.55]"
    assert speedup_text(0.8, None) == "0.80x (no interval)"
