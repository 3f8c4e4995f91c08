"""Predictor: AL(N) from per-position rates, step cost fitted by least squares, honest errors."""

from __future__ import annotations

import math

import pytest

from specadvisor.domain import SweepSettings
from specadvisor.sweep.plan import plan_from_methods
from specadvisor.sweep.predict import acceptance_length, fit_step_cost, mean_abs_error_pct, predict_throughput, prediction_errors
from sweep_fakes import RATES, spec_result


def true_curve(n, c0=1.0, c1=0.25, base=100.0):
    return base * (1 + sum(RATES[:n])) / (c0 + c1 * n)


def session_with(measured_n, curve=true_curve, baseline=True):
    plan = plan_from_methods("m", [("ngram", {})], [1, 2, 3, 4, 5, 6], SweepSettings(), baseline=baseline)
    s = plan.session
    if baseline:
        s.results.append(spec_result("baseline", None, curve(0)))
    for n in measured_n:
        s.results.append(spec_result(f"ngram-n{n}", n, curve(n)))
    return s


def test_acceptance_length_sums_unconditional_rates():
    assert acceptance_length([0.9, 0.7, 0.5], 2) == pytest.approx(2.6)
    assert acceptance_length([0.9, 0.7, 0.5], 0) == 1.0


def test_fit_recovers_a_linear_step_cost():
    points = [(n, 1 + sum(RATES[:n]), true_curve(n)) for n in (0, 3, 6)]
    c0, c1 = fit_step_cost(points)
    assert c0 == pytest.approx(0.01) and c1 == pytest.approx(0.0025)
    assert fit_step_cost([(4, 3.0, 10.0)]) is None


def test_largest_n_plus_baseline_predicts_every_smaller_n_exactly_on_a_model_curve():
    s = session_with([6])
    preds = predict_throughput(s)
    for n in range(1, 6):
        assert preds[f"ngram-n{n}"].predicted_throughput == pytest.approx(true_curve(n))
        assert preds[f"ngram-n{n}"].measured_throughput is None
    assert preds["ngram-n6"].reference


def test_prediction_error_is_out_of_sample_and_reported():
    def noisy(n):  # the real N=2 is 10% faster than the linear cost model says
        return true_curve(n) * (1.10 if n == 2 else 1.0)

    s = session_with([2, 6], curve=noisy)
    errors = prediction_errors(s)
    assert set(errors) == {"ngram-n2"}
    # predicted from baseline + N=6 only: the model value, measured 10% above it
    assert errors["ngram-n2"] == pytest.approx((1 / 1.10 - 1) * 100)
    assert math.isfinite(mean_abs_error_pct(s))


def test_flat_cost_parallel_drafter_predicts_rising_curve():
    s = session_with([6], curve=lambda n: true_curve(n, c1=0.0))
    preds = predict_throughput(s)
    values = [preds[f"ngram-n{n}"].predicted_throughput for n in range(1, 7)]
    assert values == sorted(values)


def test_no_reference_no_prediction_and_single_point_is_flagged():
    assert predict_throughput(session_with([])) == {}
    s = session_with([6], baseline=False)
    pred = predict_throughput(s)["ngram-n3"]
    assert "flat step cost assumed" in pred.basis


def test_fixed_speculation_overhead_is_absorbed_once_two_spec_arms_exist():
    def overhead_curve(n):  # turning speculation on costs 50% per step, then 10% per draft token
        return 100.0 * (1 + sum(RATES[:n])) / ((1.5 if n else 1.0) + 0.1 * n)

    s = session_with([2, 6], curve=overhead_curve)
    preds = predict_throughput(s)
    assert preds["ngram-n4"].predicted_throughput == pytest.approx(overhead_curve(4))
    assert "baseline" not in preds["ngram-n4"].basis


def test_a_noisy_arm_with_a_wide_interval_barely_moves_the_fit():
    s = session_with([1, 2, 3, 6])
    outlier = s.result_for("ngram-n6")  # a neighbour loaded the machine during this arm
    outlier.output_throughput = true_curve(6) * 0.3
    outlier.output_throughput_ci = (outlier.output_throughput * 0.2, outlier.output_throughput * 1.8)
    pred = predict_throughput(s)["ngram-n2"]  # fitted on N=1, N=3 (steady) and N=6 (noisy)
    assert abs(pred.error_pct) < 5
