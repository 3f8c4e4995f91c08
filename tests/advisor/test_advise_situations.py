"""Table-driven: the advice for many real situations, checked on what a user would act on."""

from __future__ import annotations

import pytest
from advisor_helpers import gpus, model, mtp_model

from specadvisor.advisor import advise, explain, validate_spec_config
from specadvisor.domain import DrafterProfile, Workload, WorkloadKind
from specadvisor.rulebase import load_rulebase


@pytest.fixture(scope="module")
def rb():
    return load_rulebase(include_user=False)


def wl(kind="chat", concurrency=1, **kw) -> Workload:
    return Workload(kind=WorkloadKind(kind), concurrency=concurrency, **kw)


SITUATIONS = [
    # id, hardware, model, workload, vllm version, expectations
    dict(
        id="deepseek-v3-mtp",
        hw=gpus("H200", 8), model=model("deepseek-ai/DeepSeek-V3"), workload=wl("chat", 4), version=None,
        top="mtp", top_config={"method": "mtp", "num_speculative_tokens": 1}, verdict="speculate", tp=8,
        fired=["native-mtp-first"],
    ),
    dict(
        id="llama-8b-published-drafters",
        hw=gpus("H100"), model=model("meta-llama/Llama-3.1-8B-Instruct"), workload=wl("chat", 1), version="0.32.0",
        has={"eagle3": "RedHatAI/Llama-3.1-8B-Instruct-speculator.eagle3", "dflash": "z-lab/LLaMA3.1-8B-Instruct-DFlash-UltraChat"},
        verdict="careful", tp=1, fired=["published-drafter", "small-target-careful"],
    ),
    dict(
        id="qwen3-8b-peagle",
        hw=gpus("H100"), model=model("Qwen/Qwen3-8B"), workload=wl("chat", 1), version="0.33.0",
        has={"peagle": "RedHatAI/Qwen3-8B-speculator.peagle", "dspark": "deepseek-ai/dspark_qwen3_8b_block7"},
        config_has={"peagle": {"method": "eagle3", "parallel_drafting": True}},
    ),
    dict(
        id="gpt-oss-20b-b200-peagle",
        hw=gpus("B200"), model=model("openai/gpt-oss-20b"), workload=wl("code", 1), version="0.33.0",
        top="peagle", verdict="speculate", warning="PR #36684", grid={"peagle": [3, 5, 7]},
    ),
    dict(
        id="private-finetune-rag",
        hw=gpus("L40S"), model=model("/models/acme-support-ft", params_b=13.0), workload=wl("rag", 4), version=None,
        only={"ngram", "suffix"}, top="suffix", suggest_training=True,
    ),
    dict(
        id="private-finetune-willing-to-train",
        hw=gpus("A100-80GB"), model=model("acme/ft-13b", params_b=13.0), workload=wl("chat", 2, willing_to_train=True), version=None,
        only={"ngram", "suffix"}, warning="Train an EAGLE-3 drafter",
    ),
    dict(
        id="smollm2-135m-concurrency-64",
        hw=gpus("L4"), model=model("HuggingFaceTB/SmolLM2-135M-Instruct"), workload=wl("chat", 64), version="0.32.0",
        verdict="unlikely", absent={"draft_model", "pard"},
    ),
    dict(
        id="qwen3-8b-concurrency-64",
        hw=gpus("H100"), model=model("Qwen/Qwen3-8B"), workload=wl("chat", 64), version=None,
        verdict="unlikely", warning="high concurrency", fired=["small-target-high-concurrency", "high-concurrency-shrink"],
    ),
    dict(
        id="gemma4-mi300x-dflash-triton",
        hw=gpus("MI300X", 2), model=model("google/gemma-4-26B-A4B-it"), workload=wl("math", 4), version="0.33.0",
        top="dflash", config_has={"dflash": {"attention_backend": "triton_attn"}}, grid={"dflash": [7, 11, 15]},
        expected={"dflash": (2.79, 2.87)},
    ),
    dict(
        id="gemma4-h100-no-triton",
        hw=gpus("H100", 1), model=model("google/gemma-4-26B-A4B-it"), workload=wl("math", 4), version="0.33.0",
        config_lacks={"dflash": "attention_backend"},
    ),
    dict(
        id="vllm-0.19-has-no-dflash",
        hw=gpus("H100"), model=model("meta-llama/Llama-3.1-8B-Instruct"), workload=wl("chat", 1), version="0.19.1",
        absent={"dflash"}, has={"eagle3": "RedHatAI/Llama-3.1-8B-Instruct-speculator.eagle3"}, warning="0.20",
    ),
    dict(
        id="vllm-0.15-has-no-peagle",
        hw=gpus("H100"), model=model("Qwen/Qwen3-8B"), workload=wl("chat", 1), version="0.15.0",
        absent={"peagle", "dflash", "dspark"}, has={"eagle3": "RedHatAI/Qwen3-8B-speculator.eagle3"},
    ),
    dict(
        id="high-concurrency-gpt-oss",
        hw=gpus("H100"), model=model("openai/gpt-oss-20b"), workload=wl("chat", 64), version=None,
        grid={"eagle3": [1, 2, 3]}, warning="high concurrency",
    ),
    dict(
        id="repetitive-rag-raises-lookup",
        hw=gpus("H100", 2), model=model("meta-llama/Llama-3.3-70B-Instruct"), workload=wl("rag", 4), version=None,
        top="suffix", grid={"ngram": [2, 4, 8]}, tp=2,
    ),
    dict(
        id="high-temperature-warns",
        hw=gpus("H100", 4), model=model("meta-llama/Llama-3.3-70B-Instruct"), workload=wl("chat", 1, temperature=1.0), version=None,
        warning="temperature", tp=4,
    ),
    dict(
        id="does-not-fit",
        hw=gpus("L4"), model=model("meta-llama/Llama-3.3-70B-Instruct"), workload=wl("chat", 1), version=None,
        warning="do not fit", tp=1,
    ),
    dict(
        id="qwen3-next-native-mtp",
        hw=gpus("H200", 1), model=model("Qwen/Qwen3-Next-80B-A3B-Instruct"), workload=wl("chat", 1), version=None,
        top="mtp",
    ),
    dict(
        id="pard-drafter",
        hw=gpus("RTX4090"), model=model("Qwen/Qwen3-1.7B"), workload=wl("chat", 1), version="0.32.0",
        has={"pard": "amd/PARD-Qwen3-0.6B"}, config_has={"pard": {"method": "draft_model", "parallel_drafting": True}},
    ),
]


@pytest.mark.parametrize("case", SITUATIONS, ids=[c["id"] for c in SITUATIONS])
def test_situation(case, rb):
    advice = advise(case["hw"], case["model"], case["workload"], vllm_version=case["version"], rulebase=rb)
    by_id = {c.id: c for c in advice.candidates}
    if "top" in case:
        assert advice.candidates[0].id == case["top"], [(c.id, c.score) for c in advice.candidates]
    if "top_config" in case:
        assert advice.candidates[0].speculative_config == case["top_config"]
    for method, drafter in case.get("has", {}).items():
        assert method in by_id and by_id[method].drafter == drafter
    for method in case.get("absent", set()):
        assert method not in by_id
    if "only" in case:
        assert set(by_id) == case["only"]
    for method, keys in case.get("config_has", {}).items():
        assert keys.items() <= by_id[method].speculative_config.items()
    for method, key in case.get("config_lacks", {}).items():
        assert key not in by_id[method].speculative_config
    for method, grid in case.get("grid", {}).items():
        assert by_id[method].n_grid == grid
    for method, speedup in case.get("expected", {}).items():
        assert by_id[method].expected_speedup == speedup
    if "verdict" in case:
        assert advice.verdict_level == case["verdict"], advice.trace
        assert advice.speculation_unlikely == (case["verdict"] == "unlikely")
    if "tp" in case:
        assert advice.tensor_parallel_size == case["tp"]
    if "warning" in case:
        assert any(case["warning"] in w for w in advice.warnings), advice.warnings
    for rule_id in case.get("fired", []):
        assert rule_id in advice.fired_rules
    if "suggest_training" in case:
        assert advice.suggest_training is case["suggest_training"]
    # Always: the baseline, a plain verdict, valid explicit configs, reasons and evidence to follow.
    assert advice.baseline["speculative_config"] is None and "vllm serve" in advice.baseline["serve_command"]
    assert advice.verdict
    for candidate in advice.candidates:
        assert candidate.speculative_config["method"] == candidate.method
        assert validate_spec_config(candidate.speculative_config, case["version"], rulebase=rb) == []
        assert candidate.reasons and candidate.evidence
    assert any(line.startswith("+ ") for line in explain(advice))


def test_scores_are_ranked_and_advice_is_deterministic(rb):
    args = (gpus("H100"), model("Qwen/Qwen3-8B"), wl("math", 2))
    first = advise(*args, rulebase=rb)
    second = advise(*args, rulebase=rb)
    assert first.model_dump() == second.model_dump()
    scores = [c.score for c in first.candidates]
    assert scores == sorted(scores, reverse=True)


def test_mtp_grid_respects_layer_multiples(rb):
    advice = advise(gpus("H200", 8), mtp_model("deepseek-ai/DeepSeek-V3", 2), wl(), rulebase=rb)
    mtp = next(c for c in advice.candidates if c.id == "mtp")
    assert mtp.n_grid == [1, 2]
    assert "model" not in mtp.speculative_config


def test_user_drafter_comes_first_and_its_block_limits_n(rb):
    drafter = DrafterProfile(id="me/qwen3-8b-dflash-b8", path="/drafters/b8", algorithm="dflash", method="dflash", parallel_drafting=True, block_size=8)
    advice = advise(gpus("H100"), model("Qwen/Qwen3-8B"), wl("math"), drafter=drafter, rulebase=rb)
    dflash = next(c for c in advice.candidates if c.id == "dflash")
    assert dflash.drafter == "/drafters/b8"
    assert max(dflash.n_grid) <= 7
    assert any("You supplied this drafter" in r for r in dflash.reasons)


@pytest.mark.parametrize("version,present", [("0.32.0", True), ("0.33.0", False)])
def test_medusa_drafter_only_where_vllm_still_has_medusa(rb, version, present):
    drafter = DrafterProfile(id="me/medusa-heads", method="medusa")
    advice = advise(gpus("A100-80GB"), model("acme/ft", params_b=13.0), wl(), drafter=drafter, vllm_version=version, rulebase=rb)
    assert ("medusa" in {c.id for c in advice.candidates}) is present
    if not present:
        assert any("removed in vLLM 0.33.0" in w for w in advice.warnings)


def test_incompatible_user_drafter_is_left_out_with_reason(rb):
    drafter = DrafterProfile(id="me/wrong", method="eagle3", compatible=False, warnings=["vocab 32000 != 151936"])
    advice = advise(gpus("H100"), model("Qwen/Qwen3-8B"), wl(), drafter=drafter, rulebase=rb)
    assert all(c.drafter != "me/wrong" for c in advice.candidates)
    assert any("vocab 32000" in w for w in advice.warnings)


def test_detected_engine_version_is_used_when_none_given(rb):
    advice = advise(gpus("H100", engine_version="0.19.0"), model("meta-llama/Llama-3.1-8B-Instruct"), wl(), rulebase=rb)
    assert advice.vllm_version == "0.19.0"
    assert "dflash" not in {c.id for c in advice.candidates}


def test_gemma_without_assistant_says_how_to_get_mtp(rb):
    advice = advise(gpus("H100"), model("google/gemma-4-31B-it"), wl(), rulebase=rb)
    assert "mtp" not in {c.id for c in advice.candidates}


def test_rule_exclusion_keeps_a_drafter_the_user_asked_for(rb):
    drafter = DrafterProfile(id="/tmp/smollm2-8-layers", path="/tmp/smollm2-8-layers", method="draft_model")
    advice = advise(gpus("L4"), model("HuggingFaceTB/SmolLM2-135M-Instruct"), wl(), drafter=drafter, rulebase=rb)
    assert "draft_model" in {c.id for c in advice.candidates}
    assert any("still measured because you asked" in w for w in advice.warnings)
    plain = advise(gpus("L4"), model("HuggingFaceTB/SmolLM2-135M-Instruct"), wl(), rulebase=rb)
    assert "draft_model" not in {c.id for c in plain.candidates}


def test_mtp_heads_missing_from_the_weights_are_not_offered(rb):
    from specadvisor.domain import MtpInfo

    stripped = model("someone/DeepSeek-V3-AWQ", source="hf-cache", params_b=671.0, quantization="awq",
                     mtp=MtpInfo(present=True, layers=1, confirmed_by_weights=False))
    advice = advise(gpus("H200", 8), stripped, wl(), rulebase=rb)
    assert "mtp" not in {c.id for c in advice.candidates}
    assert any("weight index has none" in w for w in advice.warnings)


def test_inspected_config_without_heads_beats_the_catalog(rb):
    inspected = model("deepseek-ai/DeepSeek-V3", source="hf-cache", params_b=671.0)
    assert "mtp" not in {c.id for c in advise(gpus("H200", 8), inspected, wl(), rulebase=rb).candidates}
    from_catalog = model("deepseek-ai/DeepSeek-V3", source="catalog")
    assert "mtp" in {c.id for c in advise(gpus("H200", 8), from_catalog, wl(), rulebase=rb).candidates}


def test_every_shipped_rule_fires_in_some_situation(rb):
    """No dead rules: each one changes the advice somewhere in the situations above."""
    fired = set()
    for case in SITUATIONS:
        fired |= set(advise(case["hw"], case["model"], case["workload"], vllm_version=case["version"], rulebase=rb).fired_rules)
    fired |= set(advise(gpus("H100"), model("Qwen/Qwen3-8B"), wl("chat", 1, output_len=4096), rulebase=rb).fired_rules)
    assert fired == {rule.id for rule in rb.rules}


def test_every_rule_condition_reads_a_fact_and_explains_itself(rb):
    from specadvisor.advisor.facts import gather, unmet_conditions
    from specadvisor.rulebase import RuleWhen

    facts = gather(gpus("H100"), model("Qwen/Qwen3-8B"), wl("chat", 4), None, [], None, "0.32.0")
    every = RuleWhen(**{name: ([] if "list" in str(f.annotation) else "9.9" if "version" in name else True if "bool" in str(f.annotation) else 10**6)
                        for name, f in RuleWhen.model_fields.items()})
    unmet = unmet_conditions(every, facts)
    assert unmet and all(", needs " in line for line in unmet)
    advice = advise(gpus("H100"), model("Qwen/Qwen3-8B"), wl("chat", 4), rulebase=rb)
    assert "- high-concurrency-shrink: does not apply (concurrency is 4, needs >= 32)" in advice.trace


def test_a_rule_about_some_methods_explains_only_those(rb):
    advice = advise(gpus("H100"), model("openai/gpt-oss-20b"), wl(), rulebase=rb)
    patch_reason = next(r.why for r in rb.rules if r.id == "gpt-oss-eagle-patch")
    for candidate in advice.candidates:
        assert (patch_reason in candidate.reasons) == (candidate.id in ("eagle3", "peagle")), candidate.id


def test_user_drafter_from_the_catalog_is_not_its_own_alternative(rb):
    drafter = DrafterProfile(id="RedHatAI/Qwen3-8B-speculator.peagle", algorithm="peagle", method="eagle3", parallel_drafting=True)
    advice = advise(gpus("H100"), model("Qwen/Qwen3-8B"), wl(), drafter=drafter, rulebase=rb)
    peagle = advice.candidates[0]
    assert peagle.id == "peagle" and peagle.drafter == drafter.id
    assert not any(drafter.id in w for w in peagle.warnings)
