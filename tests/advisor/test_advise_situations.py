"""Table-driven: the advice for many real situations, checked on what a user would act on."""

from __future__ import annotations

import pytest

from advisor_helpers import gpus, model, mtp_model
from specadvisor.advisor import advise, explain, validate_spec_config
from specadvisor.domain import DrafterProfile, HardwareProfile, Workload, WorkloadKind
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
        hw=gpus("H200", 8),
        model=model("deepseek-ai/DeepSeek-V3"),
        workload=wl("chat", 4),
        version=None,
        top="mtp",
        top_config={"method": "mtp", "num_speculative_tokens": 1},
        verdict="speculate",
        tp=8,
        fired=["native-mtp-first"],
    ),
    dict(
        id="llama-8b-published-drafters",
        hw=gpus("H100"),
        model=model("meta-llama/Llama-3.1-8B-Instruct"),
        workload=wl("chat", 1),
        version="0.32.0",
        has={"eagle3": "RedHatAI/Llama-3.1-8B-Instruct-speculator.eagle3", "dflash": "z-lab/LLaMA3.1-8B-Instruct-DFlash-UltraChat"},
        verdict="careful",
        tp=1,
        fired=["published-drafter", "small-target-careful"],
    ),
    dict(
        id="qwen3-8b-peagle",
        hw=gpus("H100"),
        model=model("Qwen/Qwen3-8B"),
        workload=wl("chat", 1),
        version="0.33.0",
        has={"peagle": "RedHatAI/Qwen3-8B-speculator.peagle", "dspark": "deepseek-ai/dspark_qwen3_8b_block7"},
        config_has={"peagle": {"method": "eagle3", "parallel_drafting": True}},
    ),
    dict(
        id="gpt-oss-20b-b200-peagle",
        hw=gpus("B200"),
        model=model("openai/gpt-oss-20b"),
        workload=wl("code", 1),
        version="0.33.0",
        top="peagle",
        verdict="speculate",
        warning="PR #36684",
        grid={"peagle": [3, 5, 7]},
    ),
    dict(
        id="private-finetune-rag",
        hw=gpus("L40S"),
        model=model("/models/acme-support-ft", params_b=13.0),
        workload=wl("rag", 4),
        version=None,
        only={"ngram", "ngram_gpu", "suffix"},  # ngram_gpu: CUDA, vLLM 0.18+
        top="suffix",
        suggest_training=True,
    ),
    dict(
        id="private-finetune-willing-to-train",
        hw=gpus("A100-80GB"),
        model=model("acme/ft-13b", params_b=13.0),
        workload=wl("chat", 2, willing_to_train=True),
        version=None,
        only={"ngram", "ngram_gpu", "suffix"},  # ngram_gpu: CUDA, vLLM 0.18+
        warning="Train an EAGLE-3 drafter",
    ),
    dict(
        id="smollm2-135m-concurrency-64",
        hw=gpus("L4"),
        model=model("HuggingFaceTB/SmolLM2-135M-Instruct"),
        workload=wl("chat", 64),
        version="0.32.0",
        verdict="unlikely",
        absent={"draft_model", "pard"},
    ),
    dict(
        id="qwen3-8b-concurrency-64",
        hw=gpus("H100"),
        model=model("Qwen/Qwen3-8B"),
        workload=wl("chat", 64),
        version=None,
        verdict="unlikely",
        warning="high concurrency",
        fired=["small-target-high-concurrency", "high-concurrency-shrink"],
    ),
    dict(
        id="gemma4-mi300x-dflash-triton",
        hw=gpus("MI300X", 2),
        model=model("google/gemma-4-26B-A4B-it"),
        workload=wl("math", 4),
        version="0.33.0",
        top="dflash",
        config_has={"dflash": {"attention_backend": "triton_attn"}},
        grid={"dflash": [7, 11, 15]},
        expected={"dflash": (2.79, 2.87)},
    ),
    dict(
        id="gemma4-h100-no-triton",
        hw=gpus("H100", 1),
        model=model("google/gemma-4-26B-A4B-it"),
        workload=wl("math", 4),
        version="0.33.0",
        config_lacks={"dflash": "attention_backend"},
    ),
    dict(
        id="vllm-0.19-has-no-dflash",
        hw=gpus("H100"),
        model=model("meta-llama/Llama-3.1-8B-Instruct"),
        workload=wl("chat", 1),
        version="0.19.1",
        absent={"dflash"},
        has={"eagle3": "RedHatAI/Llama-3.1-8B-Instruct-speculator.eagle3"},
        warning="0.20",
    ),
    dict(
        id="vllm-0.15-has-no-peagle",
        hw=gpus("H100"),
        model=model("Qwen/Qwen3-8B"),
        workload=wl("chat", 1),
        version="0.15.0",
        absent={"peagle", "dflash", "dspark"},
        has={"eagle3": "RedHatAI/Qwen3-8B-speculator.eagle3"},
    ),
    dict(
        id="high-concurrency-gpt-oss",
        hw=gpus("H100"),
        model=model("openai/gpt-oss-20b"),
        workload=wl("chat", 64),
        version=None,
        grid={"eagle3": [1, 2, 3]},
        warning="high concurrency",
    ),
    dict(
        id="repetitive-rag-raises-lookup",
        hw=gpus("H100", 2),
        model=model("meta-llama/Llama-3.3-70B-Instruct"),
        workload=wl("rag", 4),
        version=None,
        top="suffix",
        grid={"ngram": [2, 4, 8]},
        tp=2,
    ),
    dict(
        id="high-temperature-warns",
        hw=gpus("H100", 4),
        model=model("meta-llama/Llama-3.3-70B-Instruct"),
        workload=wl("chat", 1, temperature=1.0),
        version=None,
        warning="temperature",
        tp=4,
    ),
    dict(
        id="does-not-fit",
        hw=gpus("L4"),
        model=model("meta-llama/Llama-3.3-70B-Instruct"),
        workload=wl("chat", 1),
        version=None,
        warning="do not fit",
        tp=1,
    ),
    dict(
        id="qwen3-next-native-mtp",
        hw=gpus("H200", 1),
        model=model("Qwen/Qwen3-Next-80B-A3B-Instruct"),
        workload=wl("chat", 1),
        version=None,
        top="mtp",
    ),
    dict(
        id="pard-drafter",
        hw=gpus("RTX4090"),
        model=model("Qwen/Qwen3-1.7B"),
        workload=wl("chat", 1),
        version="0.32.0",
        has={"pard": "amd/PARD-Qwen3-0.6B"},
        config_has={"pard": {"method": "draft_model", "parallel_drafting": True}},
    ),
    # ---- issue 13, section 1: the emitted config is the one the stated vLLM version accepts
    dict(
        id="deepseek-v3-vllm-0.9-deepseek_mtp",  # "mtp" only from 0.11 (vllm#25232); 0.8.5's V1 engine took no MTP
        hw=gpus("H200", 8),
        model=model("deepseek-ai/DeepSeek-V3"),
        workload=wl("chat", 1),
        version="0.9.2",
        top="mtp",
        top_config={"method": "deepseek_mtp", "num_speculative_tokens": 1},
        tp=8,
    ),
    dict(
        id="qwen3-next-vllm-0.10-family-name",
        hw=gpus("H200", 1),
        model=model("Qwen/Qwen3-Next-80B-A3B-Instruct"),
        workload=wl("chat", 1),
        version="0.10.2",
        top="mtp",
        config_has={"mtp": {"method": "qwen3_next_mtp"}},
    ),
    dict(
        id="glm-4.5-vllm-0.10-mtp-as-deepseek_mtp",  # hf_config_override maps Glm4MoeForCausalLM from 0.10.0
        hw=gpus("H200", 8),
        model=model("zai-org/GLM-4.5"),
        workload=wl("chat", 1),
        version="0.10.2",
        config_has={"mtp": {"method": "deepseek_mtp"}},
    ),
    dict(
        id="suffix-not-in-0.11.0",  # vllm#25784: the method list has it from 0.11.1
        hw=gpus("L40S"),
        model=model("acme/support-ft", params_b=13.0),
        workload=wl("rag", 4),
        version="0.11.0",
        only={"ngram"},
    ),
    dict(
        id="suffix-from-0.11.1",
        hw=gpus("L40S"),
        model=model("acme/support-ft", params_b=13.0),
        workload=wl("rag", 4),
        version="0.11.1",
        only={"ngram", "suffix"},
        top="suffix",
    ),
    dict(
        id="pard-needs-0.16",
        hw=gpus("RTX4090"),
        model=model("Qwen/Qwen3-1.7B"),
        workload=wl("chat", 1),
        version="0.15.1",
        absent={"pard"},
        warning="needs vLLM >= 0.16.0",
    ),
    dict(
        id="dspark-not-in-0.24",
        hw=gpus("H100"),
        model=model("Qwen/Qwen3-8B"),
        workload=wl("chat", 1),
        version="0.24.0",
        absent={"dspark"},
        has={"peagle": "RedHatAI/Qwen3-8B-speculator.peagle"},
        warning="needs vLLM >= 0.25.0",
    ),
    dict(
        id="dspark-in-0.26-grid-within-block-7",
        hw=gpus("H100"),
        model=model("Qwen/Qwen3-8B"),
        workload=wl("chat", 1),
        version="0.26.0",
        has={"dspark": "deepseek-ai/dspark_qwen3_8b_block7"},
        grid={"dspark": [3, 5, 7]},
        config_lacks={"dspark": "enable_adaptive_verification"},
    ),
    dict(
        id="dspark-adaptive-verification-0.33-high-concurrency",
        hw=gpus("H200", 4),
        model=model("Qwen/Qwen3-32B"),
        workload=wl("chat", 64),
        version="0.33.0",
        fired=["dspark-adaptive-verification", "high-concurrency-shrink"],
        warning="high concurrency",
        verdict="careful",
    ),
    dict(
        id="no-adaptive-verification-bonus-before-0.32",
        hw=gpus("H100"),
        model=model("Qwen/Qwen3-8B"),
        workload=wl("chat", 64),
        version="0.30.0",
        not_fired=["dspark-adaptive-verification"],
        config_lacks={"dspark": "enable_adaptive_verification"},
        verdict="unlikely",
    ),
    dict(
        id="eagle3-emitted-n-is-where-it-peaks",  # issue 23: EAGLE-3 peaks near N=3 (vLLM P-EAGLE post), not the grid's floor
        hw=gpus("H100"),
        model=model("meta-llama/Llama-3.1-8B-Instruct"),
        workload=wl("chat", 1),
        version=None,
        config_has={"eagle3": {"num_speculative_tokens": 3}},
        grid={"eagle3": [1, 2, 3, 4]},
        evidence={"eagle3": "eagle3-peaks-k3"},
    ),
    dict(
        id="dense-70b-concurrency-256-unlikely",  # issue 23: the high-concurrency verdict is not only for <=10B active
        hw=gpus("H100", 4),
        model=model("meta-llama/Llama-3.3-70B-Instruct"),
        workload=wl("chat", 256),
        version=None,
        verdict="unlikely",
        fired=["dense-large-batch"],
    ),
    # ---- section 2: unknown and large models, memory, MoE, verdicts that agree with warnings
    dict(
        id="unknown-model-8-gpus-says-so",
        hw=gpus("H100", 8),
        model=model("acme/private-1t"),
        workload=wl("chat", 1),
        version=None,
        tp_known=False,
        verdict="careful",
        warning="pass --tensor-parallel-size N or --params-b B",
        only={"ngram", "ngram_gpu", "suffix"},  # ngram_gpu: CUDA, vLLM 0.18+
    ),
    dict(
        id="unknown-model-with-tensor-parallel-flag",
        hw=gpus("H100", 8),
        model=model("acme/private-1t"),
        workload=wl("chat", 1),
        version=None,
        kwargs={"tensor_parallel_size": 8},
        tp=8,
        tp_known=True,
    ),
    dict(
        id="unknown-model-1t-params-does-not-fit-8xh100",
        hw=gpus("H100", 8),
        model=model("acme/private-1t"),
        workload=wl("chat", 1),
        version=None,
        kwargs={"params_b": 1000.0},
        tp=8,
        warning="do not fit",
        verdict="careful",
    ),
    dict(
        id="kimi-k2.5-8xh200-dflash-block-8",
        hw=gpus("H200", 8),
        model=model("moonshotai/Kimi-K2.5"),
        workload=wl("math", 1),
        version=None,
        tp=8,
        has={"dflash": "z-lab/Kimi-K2.5-DFlash"},
        grid={"dflash": [3, 5, 7]},
    ),
    dict(
        id="llama-70b-2xh200-tp2",
        hw=gpus("H200", 2),
        model=model("meta-llama/Llama-3.3-70B-Instruct"),
        workload=wl("chat", 1),
        version=None,
        tp=2,
    ),
    dict(
        id="llama-4-scout-4xh100",
        hw=gpus("H100", 4),
        model=model("meta-llama/Llama-4-Scout-17B-16E-Instruct"),
        workload=wl("chat", 4),
        version=None,
        tp=4,
        warning="MoE target",
    ),
    dict(
        id="gpt-oss-120b-moe-high-concurrency-unlikely",  # 5.1B active: compute-bound like a small dense model
        hw=gpus("H100", 1),
        model=model("openai/gpt-oss-120b"),
        workload=wl("chat", 64),
        version=None,
        verdict="unlikely",
        fired=["small-target-high-concurrency", "moe-verification-touches-experts"],
        warning="MoE target",
    ),
    dict(
        id="qwen3-30b-a3b-moe-high-concurrency-unlikely",
        hw=gpus("H100", 1),
        model=model("Qwen/Qwen3-30B-A3B"),
        workload=wl("code", 128),
        version=None,
        verdict="unlikely",
        grid={"dflash": [3, 5, 7]},
        fired=["moe-shorter-n-under-load"],
    ),
    dict(
        id="qwen3-30b-a3b-low-concurrency-not-unlikely",
        hw=gpus("H100", 1),
        model=model("Qwen/Qwen3-30B-A3B"),
        workload=wl("code", 1),
        version=None,
        has={"dflash": "RedHatAI/Qwen3-30B-A3B-speculator.dflash"},
        not_fired=["small-target-high-concurrency"],
        warning="MoE target",
    ),
    dict(
        id="deepseek-high-concurrency-verdict-agrees-with-warning",
        hw=gpus("H200", 8),
        model=model("deepseek-ai/DeepSeek-R1"),
        workload=wl("chat", 64),
        version=None,
        top="mtp",
        warning="high concurrency",
        verdict="careful",
        grid={"mtp": [1, 2]},
    ),
    # ---- section 3: facts corrected against their sources
    dict(
        id="gpt-oss-120b-rag-long-context-eagle3",
        hw=gpus("H100", 2),
        model=model("openai/gpt-oss-120b"),
        workload=wl("rag", 2),
        version=None,
        has={"eagle3": "nvidia/gpt-oss-120b-Eagle3-long-context"},
        warning="Long prompts",
        fired=["long-context-drafters"],
    ),
    dict(
        id="gpt-oss-120b-throughput-head-drafts-one-token",
        hw=gpus("H100", 2),
        model=model("openai/gpt-oss-120b"),
        workload=wl("chat", 64),
        version=None,
        has={"eagle3": "nvidia/gpt-oss-120b-Eagle3-throughput"},
        grid={"eagle3": [1]},
    ),
    dict(
        id="llama-70b-pard-family-drafter",  # vllm#32887: amd/PARD-Llama-3.2-1B on Llama-3.3-70B, 3.10x at batch 1
        hw=gpus("H100", 4),
        model=model("meta-llama/Llama-3.3-70B-Instruct"),
        workload=wl("chat", 1),
        version=None,
        has={"pard": "amd/PARD-Llama-3.2-1B"},
        config_has={"pard": {"method": "draft_model", "parallel_drafting": True}},
        evidence={"pard": "pard-llama33-70b"},
        tp=4,
    ),
    dict(
        id="gpt-oss-20b-canonical-peagle-id-batch-8",
        hw=gpus("B200"),
        model=model("openai/gpt-oss-20b"),
        workload=wl("code", 8),
        version=None,
        has={"peagle": "amazon/gpt-oss-20b-p-eagle"},
        fired=["peagle-moderate-concurrency"],
        not_fired=["peagle-low-concurrency"],
    ),
    dict(
        id="glm-4.6-its-own-entry",
        hw=gpus("H200", 8),
        model=model("zai-org/GLM-4.6"),
        workload=wl("agentic", 4),
        version=None,
        top_method="mtp",
        trace="model family glm-4.6",
    ),
    dict(
        id="llama-3.1-8b-base-gets-no-instruct-drafters",
        hw=gpus("H100"),
        model=model("meta-llama/Llama-3.1-8B"),
        workload=wl("chat", 1),
        version=None,
        only={"ngram", "ngram_gpu", "suffix"},  # ngram_gpu: CUDA, vLLM 0.18+
        trace="model family llama-3.1-8b-base",
    ),
    dict(
        id="qwen3-30b-a3b-thinking-2507-not-the-generic-entry",
        hw=gpus("H100"),
        model=model("Qwen/Qwen3-30B-A3B-Thinking-2507"),
        workload=wl("math", 1),
        version=None,
        only={"ngram", "ngram_gpu", "suffix"},  # ngram_gpu: CUDA, vLLM 0.18+
        trace="model family qwen3-30b-a3b-thinking-2507",
    ),
    dict(
        id="deepseek-mtp-cites-deepseek-evidence",
        hw=gpus("MI355X", 8),
        model=model("deepseek-ai/DeepSeek-R1"),
        workload=wl("chat", 1),
        version=None,
        top="mtp",
        evidence={"mtp": "deepseek-r1-mtp-k1"},
        absent={"dflash"},
    ),
    # ---- section 4: missing knowledge
    dict(
        id="deepseek-v4-pro-native-dspark",
        hw=gpus("B200", 16),
        model=model("deepseek-ai/DeepSeek-V4-Pro"),
        workload=wl("chat", 8),
        version="0.33.0",
        top="dspark",
        top_config={"method": "dspark", "num_speculative_tokens": 7},
        tp=16,
    ),
    dict(
        id="gemma4-assistant-mtp-deeper-grid",
        hw=gpus("H100", 1),
        model=model("google/gemma-4-26B-A4B-it"),
        workload=wl("chat", 1),
        version=None,
        has={"mtp": "google/gemma-4-26B-A4B-it-assistant"},
        grid={"mtp": [3, 5, 6, 7]},
    ),
    dict(
        id="gemma4-assistant-not-before-0.21",  # issue 39: hf_config_override maps gemma4_assistant from 0.21.0
        hw=gpus("H100", 1),
        model=model("google/gemma-4-26B-A4B-it"),
        workload=wl("code", 1),
        version="0.20.1",
        absent={"dspark", "peagle", "mtp"},
        warning="no MTP path for an assistant checkpoint",
    ),
    dict(
        id="cpu-only-machine-serves-what-vllm-cpu-serves",  # platforms_since in rules/methods.toml, from the CPU runner
        hw=HardwareProfile(),
        model=model("Qwen/Qwen3-8B"),
        workload=wl("code", 1),
        version="0.32.0",
        only={"ngram", "suffix", "eagle3", "dflash"},
        warning="does not serve P-EAGLE on cpu",
    ),
    dict(
        id="cpu-vllm-0.14-runs-no-speculation",  # its CPU runner asserts no speculative config (until 0.20.0)
        hw=HardwareProfile(),
        model=model("Qwen/Qwen3-8B"),
        workload=wl("code", 1),
        version="0.14.1",
        only=set(),
        verdict="unlikely",
        warning="on cpu from 0.20.0",
    ),
    dict(
        id="qwen3-4b-dspark-drafter",
        hw=gpus("L40S"),
        model=model("Qwen/Qwen3-4B"),
        workload=wl("chat", 1),
        version=None,
        has={"dspark": "deepseek-ai/dspark_qwen3_4b_block7"},
        verdict="careful",
    ),
    dict(
        id="qwen3-14b-dspark-drafter",
        hw=gpus("H100"),
        model=model("Qwen/Qwen3-14B"),
        workload=wl("math", 1),
        version=None,
        has={"dspark": "deepseek-ai/dspark_qwen3_14b_block7", "eagle3": "RedHatAI/Qwen3-14B-speculator.eagle3"},
    ),
    dict(
        id="qwen3-8b-math-keeps-n3-thinking-warning",
        hw=gpus("H100"),
        model=model("Qwen/Qwen3-8B"),
        workload=wl("math", 1, output_len=2048),
        version=None,
        grid={"dflash": [3, 7, 11, 15]},
        warning="trained with thinking off",
        fired=["small-target-math-keeps-short-n"],
    ),
    dict(
        id="h200-smollm2-ngram-loses-async-scheduling",  # measured here: vLLM 0.26.0, every ngram arm lost
        hw=gpus("H200"),
        model=model("HuggingFaceTB/SmolLM2-135M-Instruct"),
        workload=wl("code", 1),
        version="0.26.0",
        fired=["lookup-loses-async-scheduling"],
        warning="disable async scheduling",
        verdict="careful",
    ),
    dict(
        id="async-warning-scoped-to-versions-where-it-holds",
        hw=gpus("H200"),
        model=model("HuggingFaceTB/SmolLM2-135M-Instruct"),
        workload=wl("code", 1),
        version="0.20.0",
        not_fired=["lookup-loses-async-scheduling"],
    ),
    dict(
        id="rtx4090-qwen3-8b-fits-one-gpu",
        hw=gpus("RTX4090"),
        model=model("Qwen/Qwen3-8B"),
        workload=wl("chat", 1),
        version=None,
        tp=1,
        no_warning="do not fit",
    ),
    dict(
        id="l40s-agentic-suffix-first",
        hw=gpus("L40S", 2),
        model=model("Qwen/Qwen3-14B"),
        workload=wl("agentic", 4),
        version=None,
        top="suffix",
        tp=1,
    ),
    dict(
        id="a100-qwen3-32b-code-moderate-concurrency",
        hw=gpus("A100-80GB", 2),
        model=model("Qwen/Qwen3-32B"),
        workload=wl("code", 16),
        version=None,
        tp=2,
        has={"eagle3": "RedHatAI/Qwen3-32B-speculator.eagle3"},
        not_fired=["high-concurrency-shrink"],  # 61 GiB bf16 + KV for 16 x 1.8k tokens > 72 GiB usable
    ),
    dict(
        id="h200-smollm2-edit-lookup-first",
        hw=gpus("H200"),
        model=model("HuggingFaceTB/SmolLM2-135M-Instruct", params_b=0.135),
        workload=wl("edit", 1),
        version="0.26.0",
        top="ngram_gpu",  # the same lookup, with async scheduling kept (plain ngram turns it off in 0.26)
        fired=["editing-lookup-first", "lookup-loses-async-scheduling", "ngram-gpu-keeps-async-scheduling"],
        grid={"ngram": [2, 4, 8]},
        expected={"ngram": (1.3, 1.38)},
        evidence={"ngram": "h200-ngram-edit-smollm2"},
    ),
]


def test_the_table_covers_at_least_40_situations():
    assert len(SITUATIONS) >= 40 and len({c["id"] for c in SITUATIONS}) == len(SITUATIONS)


@pytest.mark.parametrize("case", SITUATIONS, ids=[c["id"] for c in SITUATIONS])
def test_situation(case, rb):
    advice = advise(case["hw"], case["model"], case["workload"], vllm_version=case["version"], rulebase=rb, **case.get("kwargs", {}))
    by_id = {c.id: c for c in advice.candidates}
    if "top_method" in case:
        assert advice.candidates[0].id == case["top_method"], [(c.id, c.score) for c in advice.candidates]
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
    for rule_id in case.get("not_fired", []):
        assert rule_id not in advice.fired_rules
    if "no_warning" in case:
        assert not any(case["no_warning"] in w for w in advice.warnings), advice.warnings
    for method, evidence_id in case.get("evidence", {}).items():
        assert evidence_id in {ref.id for ref in by_id[method].evidence}
    if "trace" in case:
        assert any(case["trace"] in line for line in advice.trace), advice.trace[:3]
    if "suggest_training" in case:
        assert advice.suggest_training is case["suggest_training"]
    # A verdict agrees with the warnings beside it: never "likely to pay" above a high-concurrency or memory warning.
    if any("high concurrency" in w or "do not fit" in w or "is unknown" in w for w in advice.warnings):
        assert advice.verdict_level != "speculate", (advice.verdict, advice.warnings)
    # Always: the baseline, a plain verdict, valid explicit configs, reasons and evidence to follow;
    # no serve command built on a guessed tensor-parallel size.
    assert advice.tensor_parallel_known is case.get("tp_known", True)
    if advice.fits is False:  # a plan that cannot start says so first and prints no command
        assert advice.baseline["serve_command"] is None and advice.verdict.startswith("Does not fit on")
    elif advice.target_check != "loads":  # an architecture nobody read, or one this release cannot load: no command
        assert advice.baseline["serve_command"] is None and advice.verdict.startswith(("Unverified", "vLLM"))
    elif advice.tensor_parallel_known:
        assert advice.baseline["speculative_config"] is None and "vllm serve" in advice.baseline["serve_command"]
    else:
        assert advice.baseline["serve_command"] is None and advice.missing_inputs
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

    stripped = model(
        "someone/DeepSeek-V3-AWQ", source="hf-cache", params_b=671.0, quantization="awq", mtp=MtpInfo(present=True, layers=1, confirmed_by_weights=False)
    )
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
        fired |= set(advise(case["hw"], case["model"], case["workload"], vllm_version=case["version"], rulebase=rb, **case.get("kwargs", {})).fired_rules)
    fired |= set(advise(gpus("H100"), model("Qwen/Qwen3-8B"), wl("chat", 1, output_len=4096), rulebase=rb).fired_rules)
    assert fired == {rule.id for rule in rb.rules}


def test_every_rule_condition_reads_a_fact_and_explains_itself(rb):
    from specadvisor.advisor.facts import gather, unmet_conditions
    from specadvisor.rulebase import RuleWhen

    facts = gather(gpus("H100"), model("Qwen/Qwen3-8B"), wl("chat", 4), None, [], None, "0.32.0")
    every = RuleWhen(
        **{
            name: ([] if "list" in str(f.annotation) else "9.9" if "version" in name else True if "bool" in str(f.annotation) else 10**6)
            for name, f in RuleWhen.model_fields.items()
        }
    )
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
