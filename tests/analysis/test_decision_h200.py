"""Regression: the two real H200 sessions, imported with their stored verdicts removed, then recomputed.

The second one is where the old rules gave three answers ("VERDICT WITHHELD", "do not speculate" with
speedup 1.0, "the smaller N wins the tie") for a +34% gain over two baseline launches 6% apart.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specadvisor.analysis.decision import estimate_noise
from specadvisor.analysis.recommend import recommend
from specadvisor.figures import launches
from specadvisor.store.bundle import read_bundle

FIXTURES = Path(__file__).parents[1] / "fixtures" / "h200"
CONTRADICTIONS = ("WITHHELD", "wins the tie", "not clearly better")


def stripped(name: str):
    session = read_bundle(FIXTURES / name)
    session.recommendation = None
    return session


def test_humaneval_do_not_speculate_at_c1_and_c8():
    rec = recommend(stripped("humaneval-ngram-c1-c8.bundle.json"))
    picks = {p.concurrency: p for p in rec.per_concurrency}
    assert picks[1].verdict == "do not speculate" and picks[8].verdict == "do not speculate"
    assert picks[1].speedup == pytest.approx(0.63, abs=0.01) and picks[8].speedup == pytest.approx(0.45, abs=0.01)
    assert picks[1].speedup_ci[1] < 1 and picks[8].speedup_ci[1] < 1  # slower, not a tie
    assert rec.decision == "do not speculate" and rec.do_not_speculate and rec.arm_id is None
    assert rec.verdict.startswith("do not speculate")
    assert picks[1].comparison == "unpaired"  # schema 1.1: no per-request records
    assert not any(word in reason for reason in rec.reasons for word in CONTRADICTIONS)


def test_edit_rename_speculate_ngram_n4_with_the_drift_arithmetic():
    rec = recommend(stripped("edit-rename-ngram-c1.bundle.json"))
    (pick,) = rec.per_concurrency
    assert pick.verdict == "speculate: ngram N=4" and pick.decision == "speculate"
    assert rec.verdict == "speculate: ngram N=4" and rec.arm_id == "ngram-n4" and not rec.do_not_speculate and not rec.withheld
    assert rec.speedup == pytest.approx(781.8 / (566.6 * 600.9) ** 0.5, rel=1e-3)
    assert rec.speedup_ci[0] > 1.03
    assert rec.speculative_config["num_speculative_tokens"] == 4
    drift = next(r for r in rec.reasons if "baseline moved" in r)
    assert "+6.1%" in drift and "+33.9%" not in drift and "drift cannot explain it" in drift
    assert not any(word in reason for reason in rec.reasons for word in CONTRADICTIONS)
    assert not any(r.startswith("do not speculate") for r in rec.reasons)


def test_noise_components_come_from_the_sessions_own_repeats():
    noise = estimate_noise(stripped("humaneval-ngram-c1-c8.bundle.json"))
    assert noise.observed_df == 6  # baseline 3 launches at each level, n-gram 2 at each
    assert noise.trend == 0  # the c=8 baseline fell 2957 -> 2670 -> 2405 tok/s, but n-gram rose: no common drift shown
    assert noise.request_var is None  # no per-request records: within-run is not separable
    assert 0.05 < noise.observed_sd < 0.15


# The live sweeps of 2026-12-01, measured with the decision rule itself (schema 1.2: per-request records).


def test_live_builtin_edit_set_is_a_paired_loss():
    rec = recommend(stripped("live-edit-c1.bundle.json"))
    (pick,) = rec.per_concurrency
    assert pick.verdict == "do not speculate" and pick.comparison == "paired"
    assert pick.speedup_ci[1] < 1  # slower with its whole interval, not a tie
    assert not any(word in reason for reason in rec.reasons for word in CONTRADICTIONS)


def test_live_humaneval_c8_is_a_loss():
    rec = recommend(stripped("live-humaneval-c8.bundle.json"))
    (pick,) = rec.per_concurrency
    assert pick.concurrency == 8 and pick.verdict == "do not speculate" and pick.speedup_ci[1] < 1


def test_live_rename_is_undecided_by_launch_noise_and_says_what_would_decide_it():
    """A 31% gain over a baseline whose own launches spread 535-385 tok/s: neither answer can be given
    at 95% after 5 launches, and the tool says so, names the limit and the next step, and never
    contradicts itself by also saying 'do not speculate'."""
    rec = recommend(stripped("live-rename-c1.bundle.json"))
    (pick,) = rec.per_concurrency
    assert pick.decision == "undecided" and pick.limited_by == "launch-to-launch"
    assert pick.speedup == pytest.approx(1.31, abs=0.01) and pick.speedup_ci[0] < 1.03 < pick.speedup_ci[1]
    assert "more would likely decide it" in rec.verdict and rec.arm_id is None and not rec.do_not_speculate
    assert not any(r.startswith("do not speculate") for r in rec.reasons)


def test_live_rename_with_six_launches_per_arm_decides_speculate():
    """The same rename workload measured again on 2026-12-02 with `--trials 6` (13 launches, 18.8 min), the
    design the decision benchmark named for a 31% gain at 16% launch spread: decided, one answer, and the
    baseline's +27% drift over the sweep is named and shown not to explain the +49% gap."""
    rec = recommend(stripped("live-rename-c1-t6.bundle.json"))
    (pick,) = rec.per_concurrency
    assert pick.verdict == rec.verdict == "speculate: ngram N=4" and pick.comparison == "paired"
    assert rec.arm_id == "ngram-n4" and not rec.do_not_speculate and not rec.withheld
    assert rec.speedup == pytest.approx(1.49, abs=0.01) and rec.speedup_ci[0] > 1.03
    drift = next(r for r in rec.reasons if "baseline moved" in r)
    assert "+27.3%" in drift and "drift cannot explain it" in drift
    assert not any(word in reason for reason in rec.reasons for word in CONTRADICTIONS)
    assert not any(r.startswith("do not speculate") for r in rec.reasons)


# The live sweeps of 2026-12-02, measured until decided by `sweep --budget 8` (the sequential looks, more
# requests on running servers): each was decided at its first look, after 3 launches.


@pytest.mark.parametrize(
    ("name", "concurrency", "upper"),
    [
        ("live-1202-humaneval-c8.bundle.json", 8, 0.8),  # 0.52x, AL 2.96, faster on 9 of 64 prompts
        ("live-1202-edit-c1.bundle.json", 1, 0.9),  # the built-in edit set x 256 tokens: 0.67x, AL 2.80
        ("live-1202-edit-c1-default-lookup.bundle.json", 1, 0.5),  # vLLM's default n-gram lookup: 0.31x at AL 3.68
    ],
)
def test_live_losses_measured_until_decided_are_do_not_speculate(name, concurrency, upper):
    rec = recommend(stripped(name))
    (pick,) = rec.per_concurrency
    assert pick.concurrency == concurrency and pick.comparison == "paired"
    assert pick.verdict == rec.verdict == "do not speculate" and rec.do_not_speculate and rec.arm_id is None
    assert pick.speedup_ci[1] < upper  # slower with its whole interval: a loss, not a tie
    assert rec.serve_command is None and rec.speculative_config is None
    assert not any(word in reason for reason in rec.reasons for word in CONTRADICTIONS)
    assert not any(r.startswith("speculate") for r in rec.reasons)


def test_live_rename_measured_until_decided_speculates_after_one_launch_per_arm():
    """The rename case again (2026-12-02), now with `--budget 8`: one launch per arm plus the bracket (256 s
    from start to answer, against 1125 s for `--trials 6`) decides it, as the issue asks of a 1.3x win at AL 4."""
    rec = recommend(stripped("live-1202-rename-c1.bundle.json"))
    (pick,) = rec.per_concurrency
    assert pick.verdict == rec.verdict == "speculate: ngram N=4" and pick.comparison == "paired"
    assert rec.arm_id == "ngram-n4" and not rec.do_not_speculate and rec.speedup_ci[0] > 1.03
    assert rec.speculative_config == {"method": "ngram", "prompt_lookup_min": 2, "prompt_lookup_max": 4, "num_speculative_tokens": 4}
    session = stripped("live-1202-rename-c1.bundle.json")
    assert sorted(len(launches(r)) for r in session.results) == [1, 2]  # n-gram once, the baseline and its bracket
    assert "look 1 of sequential measuring" in " ".join(rec.reasons)
    assert not any(word in reason for reason in rec.reasons for word in CONTRADICTIONS)
