"""Plans: arms from methods x N or from advice, edits keep ids stable, the time estimate adds up."""

from __future__ import annotations

import pytest

from specadvisor.domain import Advice, Candidate, SweepSettings
from specadvisor.errors import InputError
from specadvisor.sweep.plan import estimate_seconds, plan_from_advice, plan_from_methods


def test_methods_grid_with_aliases_and_parallel_flag():
    plan = plan_from_methods("m", [("peagle", {"model": "org/drafter"})], [2, 6], SweepSettings())
    assert [a.id for a in plan.arms] == ["baseline", "p-eagle-drafter-n2", "p-eagle-drafter-n6"]
    arm = plan.arms[2]
    assert arm.speculative_config == {"method": "eagle3", "parallel_drafting": True, "model": "org/drafter", "num_speculative_tokens": 6}
    assert arm.parallel_drafting


def test_edit_arms_and_concurrency():
    plan = plan_from_methods("m", [("ngram", {})], [2], SweepSettings())
    plan.add_arm("ngram", 4)
    assert plan.add_arm("ngram", 4) == []  # already planned
    plan.remove_arm("ngram-n2")
    plan.set_concurrency([1, 8])
    assert [a.id for a in plan.arms] == ["baseline-c1", "baseline-c8", "ngram-n4-c1", "ngram-n4-c8"]
    assert plan.configurations() == 2 and plan.launches() == 3  # + the baseline's end-of-sweep bracket
    plan.update_settings(trials=3, output_len=64)
    assert plan.settings.trials == 3 and plan.launches() == 7  # a trial is a fresh server
    with pytest.raises(InputError, match="no arm 'nope'"):
        plan.remove_arm("nope")


def test_same_method_with_other_keys_gets_a_distinct_id():
    plan = plan_from_methods("m", [("ngram", {"prompt_lookup_min": 2}), ("ngram", {"prompt_lookup_min": 4})], [3], SweepSettings())
    assert len({a.id for a in plan.arms}) == 3


def test_estimate_counts_startup_per_launch_and_tokens():
    s = SweepSettings(num_prompts=10, output_len=100, warmup=0, trials=1)
    plan = plan_from_methods("m", [("ngram", {})], [2], s)
    plan.startup_estimate_s, plan.tokens_per_s_estimate = 60, 50
    assert plan.estimate_seconds() == pytest.approx(3 * 60 + 3 * 10 * 100 / 50)  # 2 arms + the baseline bracket
    plan.update_settings(bracket=False)
    assert plan.estimate_seconds() == pytest.approx(2 * 60 + 2 * 10 * 100 / 50)
    assert estimate_seconds(plan.session) > 0


def test_plan_from_advice_keeps_largest_n_first_under_a_budget():
    advice = Advice(
        candidates=[
            Candidate(id="eagle3", method="eagle3", drafter="d", speculative_config={"method": "eagle3", "model": "d", "num_speculative_tokens": 1}, n_grid=[1, 3, 5], score=0.9),
            Candidate(id="ngram", method="ngram", speculative_config={"method": "ngram", "num_speculative_tokens": 2}, n_grid=[2, 4], score=0.5),
        ],
        vllm_version="0.33.0",
    )
    plan = plan_from_advice(advice, model="m", settings=SweepSettings(), max_arms=4)
    assert [a.id for a in plan.arms] == ["baseline", "eagle3-d-n5", "ngram-n4", "eagle3-d-n3"]
    assert plan.session.advice == advice and plan.session.drafter == "d"
    assert len(plan_from_advice(advice, model="m", settings=SweepSettings()).arms) == 6
