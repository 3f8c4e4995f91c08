"""Launches with more than one pass over the prompts (more requests on a held server, sweep/held.py):
the launch-to-launch spread is estimated from launch values whose own within-run noise shrinks with
their passes. Taking one pass's within-run share from every launch, as before, understated the spread
once a launch had many passes (the end-of-sweep bracket's confirmation wave, held for the look, is
such a launch: tests/sweep/test_sweep_requests_on_running.py)."""

from __future__ import annotations

import math
import random
import statistics

from specadvisor.domain import ArmResult, ArmStatus, RequestRecord, RunRecord, SweepSettings
from specadvisor.figures import LAUNCH_SPREAD_PRIOR, LAUNCH_SPREAD_PRIOR_DF, estimate_noise, launches
from specadvisor.sweep.plan import plan_from_methods

PROMPTS = 32
REQUEST_SD = math.sqrt(0.1)  # within-run noise of one request (log latency)
LAUNCH_SD = math.sqrt(0.002)  # the true launch-to-launch spread
PASSES = (1, 14)  # an arm's first launch, then a held launch with 13 more passes


def simulated_session(rng: random.Random):
    """Four arms, each launched twice: one pass, then 14 passes on the second launch. A pass's log
    throughput is its launch's level less the mean of its requests' noise, as a real pass's would be.
    No wave order: a drift trend, fitted only when it shows (and so now and then on pure noise, which
    lowers the spread left), is not what is checked here."""
    session = plan_from_methods("m", [("ngram", {})], [2, 4, 8], SweepSettings(num_prompts=PROMPTS, bracket=False)).session
    prompt = [rng.gauss(0, 0.5) for _ in range(PROMPTS)]
    results = []
    for arm in session.arms:
        runs = []
        for trial, passes in enumerate(PASSES, start=1):
            level = math.log(100.0) + rng.gauss(0, LAUNCH_SD)
            for repeat in range(1, passes + 1):
                noise = [rng.gauss(0, REQUEST_SD) for _ in range(PROMPTS)]
                records = [RequestRecord(index=j, latency_ms=400.0 * math.exp(prompt[j] + noise[j])) for j in range(PROMPTS)]
                tput = math.exp(level - statistics.fmean(noise))
                runs.append(RunRecord(trial=trial, completed=PROMPTS, duration_s=10.0, output_throughput=tput, requests=records, repeat=repeat))
        results.append(ArmResult(arm_id=arm.id, status=ArmStatus.ok, output_throughput=100.0, completed=PROMPTS, runs=runs))
    session.results = results
    return session


def test_the_launch_spread_is_not_understated_by_launches_with_many_passes():
    rng = random.Random(22)
    sessions = [simulated_session(rng) for _ in range(200)]
    assert [x.passes for x in launches(sessions[0].results[0])] == list(PASSES)
    noises = [estimate_noise(s) for s in sessions]
    # the repeats' own launch component: unbiased for the true spread (taking a whole pass's share from
    # the 14-pass launches put it near 0.002 - 0.46 * 0.1 / 32 = 0.0006)
    observed = statistics.fmean(n.observed_launch_var for n in noises)
    assert abs(observed - LAUNCH_SD**2) < 0.0003, observed
    # and the moderated component the comparisons use: the prior (one-pass launches) less one pass's
    # share, the repeats less their own
    r = REQUEST_SD**2
    expected = (LAUNCH_SPREAD_PRIOR_DF * (LAUNCH_SPREAD_PRIOR**2 - r / PROMPTS) + 4 * LAUNCH_SD**2) / (LAUNCH_SPREAD_PRIOR_DF + 4)
    moderated = statistics.fmean(n.launch_var for n in noises)
    assert abs(moderated - expected) < 0.0002, (moderated, expected)


def test_one_pass_launches_are_estimated_as_before():
    """With one pass per launch the within-run share taken out is one pass's for the prior and the
    repeats alike: the formula of the one-pass design (the golden verdicts hold to the last digit or two)."""
    session = simulated_session(random.Random(7))
    for result in session.results:
        result.runs = [run for run in result.runs if run.repeat <= 2]
        for run in result.runs:  # two passes of one launch become two launches of one pass
            run.trial = run.trial * 2 + run.repeat - 1
            run.repeat = 1
    noise = estimate_noise(session)
    values = [[x.log_throughput for x in launches(r)] for r in session.results]
    squares = sum(sum((v - statistics.fmean(vs)) ** 2 for v in vs) for vs in values)
    df = sum(len(vs) - 1 for vs in values)
    assert noise.trend == 0.0 and noise.request_var is not None
    old = (LAUNCH_SPREAD_PRIOR_DF * LAUNCH_SPREAD_PRIOR**2 + squares) / (LAUNCH_SPREAD_PRIOR_DF + df) - noise.request_var / PROMPTS
    assert math.isclose(noise.launch_var, max(old, 0.0), rel_tol=1e-9, abs_tol=1e-12)


def passes_session(baseline: list[list[float]], ngram: list[list[float]]):
    """Throughput per pass, grouped by launch (launch k in wave k)."""
    session = plan_from_methods("m", [("ngram", {})], [4], SweepSettings(num_prompts=PROMPTS, bracket=False)).session
    results = []
    for arm, launched in zip(session.arms, (baseline, ngram), strict=True):
        runs = [
            RunRecord(trial=1, role="trial" if wave == 1 else "confirm", wave=wave, completed=PROMPTS, duration_s=10.0, output_throughput=tput, repeat=repeat)
            for wave, passes in enumerate(launched, start=1)
            for repeat, tput in enumerate(passes, start=1)
        ]
        results.append(
            ArmResult(arm_id=arm.id, status=ArmStatus.ok, output_throughput=statistics.fmean(x for p in launched for x in p), completed=PROMPTS, runs=runs)
        )
    session.results = results
    return session


def drift_lines(session) -> list[str]:
    from specadvisor.analysis.recommend import recommend

    return [r for pick in recommend(session).per_concurrency for r in pick.reasons if "the baseline moved" in r]


def test_the_drift_is_read_between_launches_not_between_passes_of_one_launch():
    # two launches of the baseline: 100, then a held launch of two passes (110, 121: 115.4 as one launch)
    (line,) = drift_lines(passes_session([[100.0], [110.0, 121.0]], [[130.0], [130.0, 130.0]]))
    assert "(100.0 -> 115.4 tok/s)" in line and "moved +15.4%" in line, line
    # one launch, its passes apart: no move of the machine between launches to speak of
    assert drift_lines(passes_session([[100.0, 121.0]], [[130.0, 130.0]])) == []


def test_the_drift_report_agrees_with_the_drift_line():
    """`recommendation.drift` (the --json field and the report's drift line) reads the same launches as
    the verdict's reason: first launch against last, a held launch's passes as one figure."""
    from specadvisor.analysis.recommend import recommend

    drift = recommend(passes_session([[100.0], [110.0, 121.0]], [[130.0], [130.0, 130.0]])).drift
    assert drift is not None and drift.measurements == 2
    assert drift.first == 100.0 and math.isclose(drift.last, math.sqrt(110.0 * 121.0)) and math.isclose(drift.change, math.sqrt(1.331) - 1)
    assert recommend(passes_session([[100.0, 121.0]], [[130.0, 130.0]])).drift is None  # one launch: nothing moved between launches
