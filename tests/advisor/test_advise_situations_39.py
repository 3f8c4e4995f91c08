"""Issue 39's situations (round three): configs that named the right method but would not start,
because the release could not load the target, the target could not host the method, or the
config had another release's shape; memory planned as vLLM lays it out (MLA and KV heads per rank,
a drafter charged only to its own arm); N and rank taken from measurements on the model itself.
Each row carries the answer and what it rests on: the vLLM file and release (rules/vllm_contract.json,
read from the release wheels) or the evidence id (rules/evidence.toml)."""

from __future__ import annotations

import re

import pytest

from advisor_helpers import gpus, model
from specadvisor.advisor import advise, validate_spec_config
from specadvisor.advisor.candidates import target_identity
from specadvisor.advisor.facts import gather
from specadvisor.domain import DrafterProfile, Workload, WorkloadKind
from specadvisor.rulebase import drafters_for, find_model_family, load_rulebase


@pytest.fixture(scope="module")
def rb():
    return load_rulebase(include_user=False)


def row(id, hw, model_id, version, kind, concurrency, why, *, drafter=None, **expect):
    return dict(
        id=id,
        hw=hw,
        model=model(model_id),
        version=version,
        workload=Workload(kind=WorkloadKind(kind), concurrency=concurrency),
        why=why,
        drafter=drafter,
        expect=expect,
    )


GEMMA3_HEAD = DrafterProfile(id="/models/gemma3-eagle3", path="/models/gemma3-eagle3", method="eagle3")
QWEN3_06B = DrafterProfile(id="Qwen/Qwen3-0.6B", method="draft_model")

ROWS = [
    # ------------------------------------------------ the target cannot host the method
    row(
        "qwen3-8b-0.9.2-no-eagle3",
        gpus("H100"),
        "Qwen/Qwen3-8B",
        "0.9.2",
        "chat",
        1,
        "0.9.2's runner calls get_eagle3_aux_hidden_state_layers, which only the Llama classes define, and its config allows eagle3 for 'llama' model types only (vllm/config.py)",
        absent={"eagle3"},
        warning="EAGLE-3 left out",
    ),
    row(
        "kimi-k2-0.16-no-eagle3",
        gpus("H200", 8),
        "moonshotai/Kimi-K2-Instruct",
        "0.16.0",
        "chat",
        4,
        "DeepseekV3ForCausalLM implements SupportsEagle3 from 0.18.0 (deepseek_v2.py); 0.16 raises 'Model does not support EAGLE3 interface'",
        absent={"eagle3"},
        warning="from vLLM 0.18.0",
    ),
    row(
        "kimi-k2-0.18-eagle3",
        gpus("H200", 8),
        "moonshotai/Kimi-K2-Instruct",
        "0.18.0",
        "chat",
        4,
        "from 0.18.0 the class implements SupportsEagle3 and kimi_k2 is on the aux-hidden-state allow-list",
        has={"eagle3": "AQ-MedAI/Kimi-K2-Instruct-eagle3"},
        flags=["--trust-remote-code"],
    ),
    row(
        "gemma3-27b-local-eagle3-0.20",
        gpus("H100"),
        "google/gemma-3-27b-it",
        "0.20.0",
        "chat",
        1,
        "0.20's aux_hidden_states_supported list has no gemma3 (vllm/config/speculative.py:921): your head is left out",
        drafter=GEMMA3_HEAD,
        absent={"eagle3"},
        warning="gemma3_text",
    ),
    row(
        "maverick-0.10.2-no-eagle3",
        gpus("H200", 8),
        "meta-llama/Llama-4-Maverick-17B-128E-Instruct",
        "0.10.2",
        "chat",
        1,
        "Llama4ForConditionalGeneration implements SupportsEagle3 from 0.11.1 (mllama4.py)",
        absent={"eagle3"},
    ),
    row(
        "maverick-0.11.1-eagle3",
        gpus("H200", 8),
        "meta-llama/Llama-4-Maverick-17B-128E-Instruct",
        "0.11.1",
        "chat",
        1,
        "from 0.11.1 Maverick hosts its published EAGLE-3 heads",
        has={"eagle3": None},
    ),
    row(
        "kimi-k25-0.17-no-eagle3",
        gpus("H200", 8),
        "moonshotai/Kimi-K2.5",
        "0.17.1",
        "chat",
        1,
        "KimiK25ForConditionalGeneration implements SupportsEagle3 from 0.18.0",
        absent={"eagle3"},
    ),
    row(
        "kimi-k25-0.18-lightseek-eagle3",
        gpus("H200", 8),
        "moonshotai/Kimi-K2.5",
        "0.18.0",
        "chat",
        1,
        "lightseekorg/kimi-k2.5-eagle3 is hosted from 0.18.0",
        has={"eagle3": None},
        flags=["--trust-remote-code"],
    ),
    # ------------------------------------------------ the release cannot load the target
    row(
        "mistral-large-3-0.11.1-does-not-load",
        gpus("H200", 8),
        "mistralai/Mistral-Large-3-675B-Instruct-2512",
        "0.11.1",
        "chat",
        4,
        "MistralLarge3ForCausalLM enters the model registry in 0.12.0 (registry.py)",
        check="does-not-load",
        headline="vLLM 0.11.1 cannot load",
        mentions="0.12.0",
    ),
    row(
        "qwen3.5-27b-0.16-does-not-load",
        gpus("H100"),
        "Qwen/Qwen3.5-27B",
        "0.16.0",
        "chat",
        1,
        "Qwen3_5ForConditionalGeneration enters the registry in 0.17.0",
        check="does-not-load",
        mentions="0.17.0",
    ),
    row(
        "qwen3-next-0.10.1-does-not-load",
        gpus("H200", 2),
        "Qwen/Qwen3-Next-80B-A3B-Instruct",
        "0.10.1",
        "chat",
        1,
        "Qwen3NextForCausalLM arrives in 0.10.2 (not 'MTP needs 0.11')",
        check="does-not-load",
        mentions="0.10.2",
    ),
    row(
        "qwen3-next-0.10.2-family-mtp",
        gpus("H200", 2),
        "Qwen/Qwen3-Next-80B-A3B-Instruct",
        "0.10.2",
        "chat",
        1,
        "0.10.2 loads it and serves its MTP as qwen3_next_mtp, filling the drafter in itself",
        config_has={"mtp": {"method": "qwen3_next_mtp"}},
        config_lacks={"mtp": "model"},
    ),
    row(
        "gemma4-assistant-mtp-0.20",
        gpus("H100"),
        "google/gemma-4-26B-A4B-it",
        "0.20.0",
        "chat",
        1,
        "hf_config_override maps gemma4_assistant from 0.21.0 (vllm/config/speculative.py:491)",
        absent={"mtp"},
    ),
    row(
        "gemma4-assistant-mtp-0.21",
        gpus("H100"),
        "google/gemma-4-26B-A4B-it",
        "0.21.0",
        "chat",
        1,
        "0.21.0 serves the assistant checkpoint as MTP",
        has={"mtp": "google/gemma-4-26B-A4B-it-assistant"},
    ),
    # ------------------------------------------------ config shapes per release
    row(
        "glm45-air-0.10.2-needs-model",
        gpus("H200", 2),
        "zai-org/GLM-4.5-Air",
        "0.10.2",
        "chat",
        1,
        "0.10.2 fills the drafter in only for deepseek_v3, mimo, ernie4_5_moe, qwen3_next: GLM needs 'model' (else 'provided without speculative model')",
        config_has={"mtp": {"method": "deepseek_mtp", "model": "zai-org/GLM-4.5-Air"}},
    ),
    row(
        "deepseek-v3-0.8.5-v0-shape",
        gpus("H200", 8),
        "deepseek-ai/DeepSeek-V3",
        "0.8.5",
        "chat",
        1,
        "0.8.5 serves DeepSeek MTP on V0 from {'num_speculative_tokens': 1}: V1's oracle hands it over, V0 fills the drafter in",
        top="mtp",
        config_is={"mtp": {"num_speculative_tokens": 1}},
        not_verdict="unlikely",
    ),
    row(
        "deepseek-v3-0.9-deepseek-mtp",
        gpus("H200", 8),
        "deepseek-ai/DeepSeek-V3",
        "0.9",
        "chat",
        1,
        "0.9.0's method list and V1 allow-list have deepseek_mtp",
        top="mtp",
        config_has={"mtp": {"method": "deepseek_mtp"}},
    ),
    row(
        "llama70b-qwen3-drafter-0.24-refused",
        gpus("H100", 4),
        "meta-llama/Llama-3.3-70B-Instruct",
        "0.24.0",
        "chat",
        1,
        "a 151936-token draft model for a 128256-token target: vLLM raises 'should have the same vocabulary size'",
        drafter=QWEN3_06B,
        absent={"draft_model"},
        warning="same vocabulary size",
    ),
    row(
        "llama70b-qwen3-drafter-0.26-heterogeneous",
        gpus("H100", 4),
        "meta-llama/Llama-3.3-70B-Instruct",
        "0.26.0",
        "chat",
        1,
        "from 0.25.0 use_heterogeneous_vocab maps the shared tokens",
        drafter=QWEN3_06B,
        config_has={"draft_model": {"use_heterogeneous_vocab": True}},
    ),
    row(
        "dspark-in-0.25.0",
        gpus("H100"),
        "Qwen/Qwen3-8B",
        "0.25.0",
        "math",
        1,
        "DSpark is in the 0.25.0 wheel's method list",
        has={"dspark": "deepseek-ai/dspark_qwen3_8b_block7"},
    ),
    row(
        "deepseek-awq-reupload-mtp-unconfirmed",
        gpus("H200", 8),
        "cognitivecomputations/DeepSeek-V3-0324-AWQ",
        "0.33.0",
        "chat",
        1,
        "third-party AWQ re-uploads of DeepSeek drop the MTP layer (vllm#13704): unconfirmed without the weight index",
        not_top="mtp",
        reason={"mtp": "unconfirmed"},
    ),
    # ------------------------------------------------ memory and grids
    row(
        "deepseek-r1-mla-kv-per-rank",
        gpus("H200", 8),
        "deepseek-ai/DeepSeek-R1",
        "0.33.0",
        "chat",
        64,
        "MLA keeps the whole compressed KV cache on every TP rank",
        trace="MLA",
    ),
    row(
        "kimi-k25-block-8-grid",
        gpus("H200", 8),
        "moonshotai/Kimi-K2.5",
        "0.33.0",
        "math",
        1,
        "a block-8 DFlash drafter sweeps 3, 5, 7 (seed 000's 3, 7, 11, 15 for block 16), never one value",
        grid={"dflash": [3, 5, 7]},
        n={"dflash": 7},
    ),
    # ------------------------------------------------ memory as vLLM lays it out (issue 39, round three)
    row(
        "deepseek-r1-agentic-64-mla-about-38",
        gpus("H200", 8),
        "deepseek-ai/DeepSeek-R1",
        "0.33.0",
        "agentic",
        64,
        "MLA decodes as one latent head: ModelConfig.get_num_kv_heads returns 1 (vllm/config/model.py, 0.32.0), so each of the "
        "8 ranks keeps every request's 69 KiB/token; 45 GiB of KV room holds about 38-41 requests of 16.9k tokens, not 'fits at 92.9 GiB'",
        held={"baseline": (36, 42), "mtp": (35, 41)},
        warning="holds only about",
        memory_has="MLA: each of the 8 ranks keeps the whole compressed KV cache",
    ),
    row(
        "kimi-k2-agentic-16-mla-about-5",
        gpus("H200", 8),
        "moonshotai/Kimi-K2-Instruct",
        "0.33.0",
        "agentic",
        16,
        "Kimi-K2 is MLA too (kv_lora_rank 512; get_num_kv_heads, vllm/config/model.py): about 6 GiB of KV room per rank holds about 5 requests, not 46",
        held={"baseline": (4, 7), "eagle3": (4, 6)},
        warning="holds only about",
    ),
    row(
        "qwen3-235b-tp8-kv-heads-replicated",
        gpus("H200", 8),
        "Qwen/Qwen3-235B-A22B",
        "0.33.0",
        "agentic",
        128,
        "4 KV heads at TP 8: get_num_kv_heads keeps max(1, 4 // 8) = 1 head per rank (vllm/config/model.py, 0.32.0), so each rank holds "
        "1/4 of the cache, not 1/8: 128 requests of 16.9k tokens need 97 GiB per GPU of KV, about 91 fit",
        held={"baseline": (85, 95)},
        warning="holds only about",
        memory_has="4 KV heads over TP 8: each rank keeps one whole head, so the cache is replicated 2x",
    ),
    row(
        "llama-70b-fp8-1xh100-baseline-and-ngram-planned",
        gpus("H100"),
        "RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic",
        "0.33.0",
        "chat",
        1,
        "a drafter's memory is charged only to the arms that load it: 65.8 GiB of FP8 weights start on one H100 (3 GiB of KV left), "
        "so the baseline and n-gram arms are served; the EAGLE-3 head's 3.9 GiB allowance does not fit and only that arm is left out",
        has={"ngram": None, "ngram_gpu": None},
        absent={"eagle3"},
        warning=("EAGLE-3 with drafter RedHatAI/Llama-3.3-70B-Instruct-speculator.eagle3", "leaving 3 GiB for the KV cache"),
        baseline_command=True,
        memory_has="charged per arm: the baseline and lookup arms load the target only; eagle3 +3.9 GiB",
    ),
    # ------------------------------------------------ N and rank from the evidence (issue 39, round three)
    row(
        "qwen3-8b-mi300x-eagle3-grid-at-its-peak",
        gpus("MI300X"),
        "Qwen/Qwen3-8B",
        "0.33.0",
        "code",
        1,
        "EAGLE-3 on Qwen3-8B on MI300X lost at N=1-2 and peaked at N=5 on GSM8K, HumanEval and MBPP (amd-qwen3-8b-eagle3, the AMD post's "
        "appendix): start at 5 and sweep around it, not [1, 2, 3, 4]",
        n={"eagle3": 5},
        grid={"eagle3": [3, 4, 5, 6]},
        reason={"eagle3": "amd-qwen3-8b-eagle3"},
    ),
    row(
        "qwen3-8b-mi300x-math-dspark-above-dflash",
        gpus("MI300X"),
        "Qwen/Qwen3-8B",
        "0.33.0",
        "math",
        1,
        "measured on this model and GPU on MATH500: DSpark 1.15x at N=7 (amd-qwen3-8b-dspark-math) beats DFlash 1.10x at N=15 "
        "(amd-qwen3-8b-dflash-math); a measurement outranks the block-drafter priors that scored DFlash higher",
        top="dspark",
        before=[("dspark", "dflash"), ("dflash", "peagle")],
        n={"dspark": 7},
        reason={"dspark": "amd-qwen3-8b-dspark-math"},
    ),
    row(
        "qwen3-8b-mi300x-math-eagle3-demoted",
        gpus("MI300X"),
        "Qwen/Qwen3-8B",
        "0.33.0",
        "math",
        1,
        "EAGLE-3 on Qwen3-8B was below no speculation at every N on MATH500 (0.44-0.88x, amd-qwen3-8b-eagle3-math): demoted below "
        "every candidate without a measured slowdown, and it says so",
        demoted="eagle3",
        reason={"eagle3": "Demoted: its published run on this model for the math workload was slower than no speculation"},
    ),
    row(
        "qwen3-8b-h100-math-eagle3-demoted-too",
        gpus("H100"),
        "Qwen/Qwen3-8B",
        "0.33.0",
        "math",
        1,
        "the cited MATH500 run is on another GPU, but it is this model and workload: still demoted, naming where it was measured",
        demoted="eagle3",
        reason={"eagle3": "MI300X"},
    ),
    row(
        "gpt-oss-20b-b200-math-peagle-first",
        gpus("B200"),
        "openai/gpt-oss-20b",
        "0.33.0",
        "math",
        1,
        "P-EAGLE has the only same-model, same-GPU measurement (peagle-gptoss20b-b200: 1.05-1.69x over EAGLE-3 on one B200); "
        "DFlash's long-reasoning prior scored it higher, but a prior does not outrank a measurement",
        top="peagle",
        reason={"peagle": "Ranked by its measurement on this model and this GPU"},
    ),
    row(
        "qwen3-8b-mi300x-math-your-eagle3-head-not-judged-by-anothers",
        gpus("MI300X"),
        "Qwen/Qwen3-8B",
        "0.33.0",
        "math",
        1,
        "the MATH500 slowdown was measured with RedHatAI's head (amd-qwen3-8b-eagle3-math): it neither demotes nor sets N for a head you trained",
        drafter=DrafterProfile(id="/models/qwen3-8b-eagle3", path="/models/qwen3-8b-eagle3", method="eagle3"),
        not_reason={"eagle3": "Demoted"},
        n={"eagle3": 3},
    ),
    # ------------------------------------------------ architecture unknown
    row(
        "private-model-unverified",
        gpus("L40S"),
        "acme/support-ft",
        "0.33.0",
        "rag",
        4,
        "no config.json and no catalog entry: the advice is unverified and prints no command",
        check="unverified",
        headline="Unverified",
    ),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c["id"]) for c in ROWS])
def test_situation(case, rb):
    hw, target, version = case["hw"], case["model"], case["version"]
    if target.id == "acme/support-ft":
        target = target.model_copy(update={"params_b": 13.0})
    advice = advise(hw, target, case["workload"], drafter=case["drafter"], vllm_version=version, rulebase=rb)
    expect = case["expect"]
    by_id = {c.id: c for c in advice.candidates}
    shown = [(c.id, c.drafter, c.speculative_config) for c in advice.candidates]
    assert advice.target_check == expect.get("check", "loads"), advice.verdict
    if "top" in expect:
        assert advice.candidates and advice.candidates[0].id == expect["top"], shown
    if "not_top" in expect:
        assert advice.candidates and advice.candidates[0].id != expect["not_top"], shown
    for method, drafter in expect.get("has", {}).items():
        assert method in by_id, (shown, advice.warnings)
        assert drafter is None or by_id[method].drafter == drafter, shown
    for method in expect.get("absent", set()):
        assert method not in by_id, shown
    for method, keys in expect.get("config_has", {}).items():
        assert keys.items() <= by_id[method].speculative_config.items(), by_id[method].speculative_config
    for method, key in expect.get("config_lacks", {}).items():
        assert key not in by_id[method].speculative_config
    for method, config in expect.get("config_is", {}).items():
        assert by_id[method].speculative_config == config
    for method, grid in expect.get("grid", {}).items():
        assert by_id[method].n_grid == grid and len(grid) >= 3
    for method, n in expect.get("n", {}).items():
        assert by_id[method].speculative_config["num_speculative_tokens"] == n
    for method, text in expect.get("reason", {}).items():
        assert any(text in r for r in by_id[method].reasons), by_id[method].reasons
    for method, text in expect.get("not_reason", {}).items():
        assert not any(text in r for r in by_id[method].reasons), by_id[method].reasons
    for text in [expect["warning"]] if isinstance(expect.get("warning"), str) else expect.get("warning", ()):
        assert any(text in w for w in advice.warnings), advice.warnings
    if "headline" in expect:
        assert advice.verdict.startswith(expect["headline"]), advice.verdict
    if "mentions" in expect:
        assert expect["mentions"] in advice.verdict and "registry.py" in advice.verdict, advice.verdict
    if "not_verdict" in expect:
        assert advice.verdict_level != expect["not_verdict"], advice.verdict
    if "trace" in expect:
        assert any(expect["trace"] in line for line in advice.trace)
    for first, second in expect.get("before", []):
        order = [c.id for c in advice.candidates]
        assert order.index(first) < order.index(second), shown
    if "demoted" in expect:
        method = expect["demoted"]
        order = [c.id for c in advice.candidates]
        assert order[-1] == method or all(c.reasons[0].startswith("Demoted") for c in advice.candidates[order.index(method) :]), shown
        assert by_id[method].score < min(c.score for c in advice.candidates if c.id != method), shown
    for arm, (low, high) in expect.get("held", {}).items():
        held = _held(advice, arm)
        assert held is not None and low <= held <= high, (arm, held, [line for line in advice.trace if line.startswith("memory: TP")])
    if "memory_has" in expect:
        assert expect["memory_has"] in " ".join(advice.memory), advice.memory
    if expect.get("baseline_command"):
        assert advice.fits is True and advice.baseline["serve_command"], advice.verdict
    if "flags" in expect:
        assert advice.serve_flags == expect["flags"] and all(f in (advice.baseline["serve_command"] or "") for f in expect["flags"])
    # Whatever the row: no command for a target this release cannot load or nobody could check, and
    # every config passes the release's own checks with the target's architecture and model type.
    if advice.target_check != "loads":
        assert advice.baseline["serve_command"] is None
    if advice.target_check == "does-not-load":
        assert not advice.candidates
    family = find_model_family(target.id, rb)
    facts = gather(hw, target, case["workload"], family, drafters_for(target.id, rb), case["drafter"], version)
    identity = target_identity(target, facts)
    for candidate in advice.candidates:
        config = candidate.speculative_config
        implied = None if "method" in config else candidate.method
        assert (
            validate_spec_config(
                config, version, rulebase=rb, target_architecture=identity.architecture, target_model_type=identity.text_model_type, implied_method=implied
            )
            == []
        )


def _held(advice, arm):
    """Requests the KV cache of one arm kind holds, from the plan's arithmetic in the trace."""
    name = "no-drafter arms" if arm == "baseline" else arm
    for line in advice.trace:
        found = re.match(r"memory: TP \d+, (.+?)(?: \(\+[^)]*\))?: .*about (\d+) of \d+ requests$", line)
        if found and found.group(1) == name:
            return int(found.group(2))
    return None


def test_every_catalog_model_has_an_architecture_or_says_why_not(rb):
    """The load and host gates need config.json's architecture: each catalog model carries it with its
    source, or says in `architecture_source` why it is not read (the advice is then unverified)."""
    for family in rb.models:
        assert family.architecture_source, family.id
        if family.architecture:
            # the checkpoint's own config: config.json, or Mistral's params.json that vLLM adapts (Mistral-Large-3)
            assert family.architecture_source.startswith("https://huggingface.co/") and family.architecture_source.endswith(("/config.json", "/params.json")), (
                family.id
            )
