"""Plans: arms from methods x N or from advice, edits keep ids stable, the time estimate adds up."""

from __future__ import annotations

import json
from datetime import UTC

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
    plan = plan_from_methods("m", [("ngram", {})], [2], SweepSettings(concurrency=[1, 8]))
    plan.add_arm("ngram", 4)
    assert plan.add_arm("ngram", 4) == []  # already planned
    plan.remove_arm("ngram-n2-c1")
    plan.remove_arm("ngram-n2-c8")
    assert [a.id for a in plan.arms] == ["baseline-c1", "baseline-c8", "ngram-n4-c1", "ngram-n4-c8"]
    assert plan.configurations() == 2 and plan.launches() == 3  # + the baseline's end-of-sweep bracket
    three = plan_from_methods("m", [("ngram", {})], [4], SweepSettings(concurrency=[1, 8], trials=3))
    assert three.launches() == 7  # a trial is a fresh server
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
    plan = plan_from_methods("m", [("ngram", {})], [2], s.replace(bracket=False))
    plan.startup_estimate_s, plan.tokens_per_s_estimate = 60, 50
    assert plan.estimate_seconds() == pytest.approx(2 * 60 + 2 * 10 * 100 / 50)
    assert estimate_seconds(plan.session) > 0


def test_plan_from_advice_keeps_the_start_n_then_the_ends_of_the_grid():
    advice = Advice(
        candidates=[
            Candidate(
                id="eagle3",
                method="eagle3",
                drafter="d",
                speculative_config={"method": "eagle3", "model": "d", "num_speculative_tokens": 1},
                n_grid=[1, 3, 5],
                score=0.9,
            ),
            Candidate(id="ngram", method="ngram", speculative_config={"method": "ngram", "num_speculative_tokens": 2}, n_grid=[2, 4], score=0.5),
        ],
        vllm_version="0.33.0",
    )
    plan = plan_from_advice(advice, model="m", settings=SweepSettings(), max_arms=4)
    # chosen round-robin by score (each candidate's advised start N first, then its largest N),
    # listed grouped by candidate in run order, largest N first
    assert [a.id for a in plan.arms] == ["baseline", "eagle3-d-n5", "eagle3-d-n1", "ngram-n2"]
    assert sorted(plan.left_out) == ["EAGLE-3 N=3 · d", "n-gram N=4"]
    assert plan.session.advice == advice and plan.session.drafter == "d"
    assert len(plan_from_advice(advice, model="m", settings=SweepSettings()).arms) == 6


def _qwen_like_advice() -> Advice:
    """The issue's case: EAGLE-3 and P-EAGLE share a drafter family and N values; two candidates repeat a config."""
    eagle = {"method": "eagle3", "model": "RedHatAI/Qwen3-8B-speculator.eagle3", "num_speculative_tokens": 3}
    peagle = {"method": "eagle3", "model": "RedHatAI/Qwen3-8B-speculator.peagle", "parallel_drafting": True, "num_speculative_tokens": 3}
    return Advice(
        candidates=[
            Candidate(id="peagle", method="eagle3", parallel_drafting=True, speculative_config=peagle, n_grid=[3, 5, 7], score=0.9),
            Candidate(id="eagle3", method="eagle3", speculative_config=eagle, n_grid=[3, 4, 7], score=0.8),
            Candidate(id="eagle3-again", method="eagle3", speculative_config=eagle, n_grid=[3, 5], score=0.7),
            Candidate(id="ngram", method="ngram", speculative_config={"method": "ngram", "num_speculative_tokens": 2}, n_grid=[2, 4], score=0.3),
        ],
    )


def test_no_duplicate_arms_and_one_readable_label_each():
    from specadvisor.analysis.arms import arm_label

    plan = plan_from_advice(_qwen_like_advice(), model="Qwen/Qwen3-8B", settings=SweepSettings())
    configs = [json.dumps(a.speculative_config, sort_keys=True) for a in plan.arms]
    assert len(configs) == len(set(configs)), "a configuration two candidates share is planned once"
    labels = [arm_label(a, "Qwen/Qwen3-8B") for a in plan.arms]
    assert len(labels) == len(set(labels))
    assert labels[:4] == ["baseline", "P-EAGLE N=7 · speculator.peagle", "P-EAGLE N=5 · speculator.peagle", "P-EAGLE N=3 · speculator.peagle"]
    # two candidates with one configuration family form one group, its N merged
    assert labels[4:8] == [
        "EAGLE-3 N=7 · speculator.eagle3",
        "EAGLE-3 N=5 · speculator.eagle3",
        "EAGLE-3 N=4 · speculator.eagle3",
        "EAGLE-3 N=3 · speculator.eagle3",
    ]
    assert labels[8:] == ["n-gram N=4", "n-gram N=2"]


def test_a_time_budget_sizes_the_default_plan():
    from specadvisor.analysis.costs import Costs

    costs = Costs(startup_s=60, tokens_per_s=50, source="measured: test")
    settings = SweepSettings(num_prompts=10, output_len=100, warmup=0)  # 20 s of requests + 60 s start-up per arm
    full = plan_from_advice(_qwen_like_advice(), model="m", settings=settings, costs=costs)
    small = plan_from_advice(_qwen_like_advice(), model="m", settings=settings, costs=costs, budget_s=8 * 60)
    assert len(small.arms) < len(full.arms)
    assert small.estimate_seconds() <= 8 * 60 and small.estimate_source == "measured: test"
    assert len(small.arms) - 1 + len(small.left_out) == len(full.arms) - 1, "what the budget leaves out is listed"
    # every candidate keeps its advised start N even under a tiny budget (and the plan says it is over)
    tiny = plan_from_advice(_qwen_like_advice(), model="m", settings=settings, costs=costs, budget_s=60)
    assert {a.id.split("-n")[0] for a in tiny.arms if not a.is_baseline} == {"p-eagle-qwen3-8b-speculator-peagle", "eagle3-qwen3-8b-speculator-eagle3", "ngram"}
    assert {a.n for a in tiny.arms if not a.is_baseline} == {3, 2}, "the N each advised config emits"
    assert tiny.over_budget_s() == pytest.approx(tiny.estimate_seconds() - 60)
    assert small.over_budget_s() is None and full.over_budget_s() is None


def test_a_cpu_only_host_plans_what_it_can_measure():
    from specadvisor.app.hostfit import fit_to_host
    from specadvisor.domain import CpuInfo, GpuInfo, HardwareProfile, ModelProfile

    advice = _qwen_like_advice()
    cpu = HardwareProfile(cpu=CpuInfo(model="x"))
    fit = fit_to_host(advice, cpu, ModelProfile(id="Qwen/Qwen3-8B", params_b=8.0))
    assert fit.cpu_only and [c.id for c in fit.measurable] == ["ngram"]
    assert "EAGLE-3" in fit.note() and "P-EAGLE" in fit.note() and "cannot be measured here" in fit.note()
    plan = plan_from_advice(advice, model="Qwen/Qwen3-8B", settings=SweepSettings(), candidates=fit.measurable)
    assert [a.id for a in plan.arms] == ["baseline", "ngram-n4", "ngram-n2"]
    # nothing model-free advised: n-gram is offered; a draft model stays on a small target only
    draft = Candidate(
        id="draft_model", method="draft_model", speculative_config={"method": "draft_model", "model": "d", "num_speculative_tokens": 2}, n_grid=[2], score=0.5
    )
    only_draft = Advice(candidates=[draft])
    big = fit_to_host(only_draft, cpu, ModelProfile(id="big", params_b=8.0))
    assert [c.id for c in big.measurable] == ["ngram"] and big.added_fallback and "impractical" in big.left_out[0][1]
    small = fit_to_host(only_draft, cpu, ModelProfile(id="small", params_b=0.135))
    assert [c.id for c in small.measurable] == ["draft_model", "ngram"]
    gpu = HardwareProfile(gpus=[GpuInfo(index=0, vendor="nvidia", name="H100")])
    assert not fit_to_host(advice, gpu, None).cpu_only and fit_to_host(advice, gpu, None).note() == ""


def test_costs_come_from_measured_sessions_when_present():
    from datetime import datetime, timedelta

    from specadvisor.analysis.costs import default_costs, measured_costs
    from specadvisor.domain import ArmResult

    assert measured_costs([], cpu_only=True) == default_costs(True)
    plan = plan_from_methods("m", [("ngram", {})], [2], SweepSettings(num_prompts=4, output_len=50))
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    session = plan.session
    session.results = [
        ArmResult(arm_id="baseline", started_at=t0, finished_at=t0 + timedelta(seconds=20), duration_s=20, output_tokens=200, completed=4),
        ArmResult(
            arm_id="ngram-n2", started_at=t0 + timedelta(seconds=65), finished_at=t0 + timedelta(seconds=80), duration_s=15, output_tokens=200, completed=4
        ),
    ]
    costs = measured_costs([session], cpu_only=True)
    assert costs.startup_s == 45 and costs.tokens_per_s == 10 and costs.measured and "1 sweep" in costs.source
