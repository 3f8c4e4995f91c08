"""The memory plan: weights (format aware) + drafter + KV cache per GPU, the TP it picks, its arithmetic."""

from __future__ import annotations

import pytest

from advisor_helpers import gpus, model
from specadvisor.advisor import advise, explain, validate_spec_config
from specadvisor.advisor.sizing import BASELINE, ArmLoad, KvLayout, plan_memory, weight_format
from specadvisor.domain import DrafterProfile, Workload, WorkloadKind
from specadvisor.modelinfo.drafter import read_drafter
from specadvisor.modelinfo.profile import kv_bytes_per_token, kv_heads, quantization
from specadvisor.rulebase import load_rulebase, workload_defaults


@pytest.fixture(scope="module")
def rb():
    return load_rulebase(include_user=False)


def test_quantized_weights_need_fewer_gpus():
    bf16 = plan_memory(model("x", params_b=70.6), gpus("H100", 8))
    fp8 = plan_memory(model("x", params_b=70.6, quantization="fp8"), gpus("H100", 8))
    assert (bf16.tensor_parallel_size, fp8.tensor_parallel_size) == (4, 2)
    assert any("70.6B x 2 B/param = 131.5 GiB" in line for line in bf16.lines)


def test_kv_cache_for_the_workload_can_decide_the_tp():
    light = plan_memory(model("x", params_b=8.0, kv_bytes_per_token=131072), gpus("H100", 8), concurrency=1)
    heavy = plan_memory(model("x", params_b=8.0, kv_bytes_per_token=131072), gpus("H100", 8), prompt_len=16384, output_len=512, concurrency=64)
    assert light.tensor_parallel_size == 1 and heavy.tensor_parallel_size == 4  # 64 x 16.9k tokens x 128 KiB = 132 GiB of KV


def test_full_context_that_does_not_fit_suggests_max_model_len():
    # Llama-3.1-8B on one 24 GB L4: 15 GiB of weights leave about 3 GiB of KV, not the 16 GiB a 128K request needs.
    plan = plan_memory(model("x", params_b=8.0, kv_bytes_per_token=131072, context_length=131072), gpus("L4", 1))
    assert plan.tensor_parallel_size == 1 and plan.max_model_len and 8192 <= plan.max_model_len < 131072
    assert any("--max-model-len" in w for w in plan.warnings)


def test_unknown_size_is_said_and_a_given_tp_is_kept():
    unknown = plan_memory(model("acme/x"), gpus("H100", 8))
    assert unknown.tensor_parallel_size is None and "pass --tensor-parallel-size" in unknown.warnings[0]
    given = plan_memory(model("acme/x"), gpus("H100", 8), tensor_parallel_size=4)
    assert given.tensor_parallel_size == 4 and given.fits is None


def test_explain_shows_the_memory_arithmetic(rb):
    advice = advise(gpus("H200", 8), model("deepseek-ai/DeepSeek-V3"), Workload(kind=WorkloadKind.chat, concurrency=16), rulebase=rb)
    lines = [line for line in explain(advice) if line.startswith("memory:")]
    assert any("671B x 1 B/param" in line for line in lines)  # the catalog says the checkpoint is fp8
    assert any("KV 69 KiB/token (from the model catalog)" in line for line in lines)
    assert lines[-1].startswith(f"memory: TP {advice.tensor_parallel_size}, ") and "<=" in lines[-1]


def test_kv_bytes_from_config_shapes():
    llama8b = {"num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8}
    deepseek = {"num_hidden_layers": 61, "kv_lora_rank": 512, "qk_rope_head_dim": 64}
    assert kv_bytes_per_token(llama8b) == 131072 and kv_bytes_per_token(deepseek) == 61 * 576 * 2
    assert kv_heads(llama8b) == 8 and kv_heads(deepseek) is None  # MLA: vLLM keeps one latent head, whole on every rank


def test_workload_defaults_come_from_practice(rb):
    chat = workload_defaults("chat", "openai/gpt-oss-120b", rb)
    assert chat.temperature == 1.0 and "gpt-oss-120b model card" in chat.why
    math = workload_defaults("math", "acme/x", rb)
    assert math.output_len >= 2048 and math.temperature > 0
    assert workload_defaults("chat", "acme/x", rb).temperature >= 0.6


@pytest.mark.parametrize(
    "config, version, problem",
    [
        ({"method": "eagle3", "model": "d", "num_speculative_tokens": 3, "num_speculative_tokens_per_batch_size": [[1, 8, 3]]}, "0.23.0", "not accepted"),
        ({"method": "eagle3", "model": "d", "num_speculative_tokens": 3, "enable_adaptive_verification": True}, "0.33.0", "not accepted with method 'eagle3'"),
        ({"method": "dspark", "num_speculative_tokens": 7, "enable_adaptive_verification": True}, "0.27.1", "not accepted"),
        ({"method": "mtp", "num_speculative_tokens": 1}, "0.10.2", "needs vLLM >= 0.11.0"),
        ({"method": "suffix", "num_speculative_tokens": 8}, "0.11.0", "needs vLLM >= 0.11.1"),
        ({"method": "draft_model", "model": "d", "num_speculative_tokens": 3}, "0.14.1", "needs vLLM >= 0.15.0"),
        ({"method": "dspark", "num_speculative_tokens": 7}, "0.24.0", "needs vLLM >= 0.25.0"),
    ],
)
def test_version_bounds_with_their_sources(config, version, problem, rb):
    problems = validate_spec_config(config, version, rulebase=rb)
    assert any(problem in p for p in problems), problems


def test_the_same_configs_pass_where_vllm_accepts_them(rb):
    assert validate_spec_config({"method": "deepseek_mtp", "num_speculative_tokens": 1}, "0.10.2", rulebase=rb) == []
    assert validate_spec_config({"method": "dspark", "num_speculative_tokens": 7, "enable_adaptive_verification": True}, "0.32.0", rulebase=rb) == []
    assert (
        validate_spec_config(
            {"method": "eagle3", "model": "d", "num_speculative_tokens": 3, "num_speculative_tokens_per_batch_size": [[1, 8, 3]]}, "0.26.0", rulebase=rb
        )
        == []
    )


@pytest.mark.parametrize(
    "text,size",
    [
        ("mistralai/Mistral-Large-3-675B-Instruct-2512-NVFP4", 0.5),
        ("Qwen/Qwen3-235B-A22B-GPTQ-Int4", 0.5),
        ("someone/Llama-3.3-70B-Instruct-AWQ", 0.5),
        ("neuralmagic/Mistral-Small-24B-Instruct-2501-FP8-Dynamic", 1.0),
        ("RedHatAI/Llama-3.3-70B-Instruct-quantized.w8a8", 1.0),
        ("gptq (8-bit)", 1.0),
        ("compressed-tensors (int4)", 0.5),
        ("modelopt (nvfp4)", 0.5),
        ("mxfp4", 0.5),
        ("mistralai/Mistral-Large-3-675B-Instruct-2512-BF16", 2.0),
        ("Qwen/Qwen3-8B", None),
        ("meta-llama/Llama-3.1-8B-Instruct", None),
    ],
)
def test_weight_format_from_quantization_or_id(text, size):
    assert weight_format(text) == size


def test_quantized_checkpoint_is_sized_by_its_dtype_from_the_id():
    fp8 = plan_memory(model("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", params_b=70.6), gpus("H100", 8))
    assert any("70.6B x 1 B/param" in line for line in fp8.lines) and fp8.tensor_parallel_size == 2


def test_compressed_tensors_and_modelopt_configs_name_their_width():
    fp8 = {
        "quantization_config": {
            "quant_method": "compressed-tensors",
            "format": "float-quantized",
            "config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "float"}}},
        }
    }
    w4 = {
        "quantization_config": {
            "quant_method": "compressed-tensors",
            "format": "pack-quantized",
            "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int"}}},
        }
    }
    nvfp4 = {"quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4"}}
    assert [quantization(c) for c in (fp8, w4, nvfp4)] == ["compressed-tensors (fp8)", "compressed-tensors (int4)", "modelopt (nvfp4)"]
    assert [weight_format(quantization(c)) for c in (fp8, w4, nvfp4)] == [1.0, 0.5, 0.5]


def test_a_drafter_is_sized_from_its_real_parameter_count(rb):
    # issue 23: PARD-Llama-3.2-1B was counted as 10% of a 70B (13.2 GiB); it is 1.24B parameters, 2.3 GiB.
    advice = advise(gpus("H100", 2), model("meta-llama/Llama-3.3-70B-Instruct"), Workload(kind=WorkloadKind.chat), rulebase=rb)
    assert advice.fits is True and advice.tensor_parallel_size == 2
    pard = _memory_trace(advice, "amd/PARD-Llama-3.2-1B")
    assert pard == [] or "1.24B from the drafter catalog" in pard[0]  # a larger drafter may be the one sized
    alone = advise(
        gpus("H100", 2),
        model("meta-llama/Llama-3.3-70B-Instruct"),
        Workload(kind=WorkloadKind.chat),
        drafter=DrafterProfile(id="amd/PARD-Llama-3.2-1B", method="draft_model", parallel_drafting=True, params_b=1.24),
        rulebase=rb,
    )
    assert advice.fits is True and alone.fits is True


def test_a_user_drafter_is_sized_from_its_config(rb):
    eagle3_8b = {
        "speculators_model_type": "eagle3",
        "speculators_config": {"verifier": {"name_or_path": "meta-llama/Llama-3.1-8B-Instruct"}, "proposal_methods": [{"speculative_tokens": 3}]},
        "transformer_layer_config": {
            "hidden_size": 4096,
            "num_hidden_layers": 1,
            "vocab_size": 128256,
            "intermediate_size": 14336,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
        },
        "draft_vocab_size": 32000,
    }
    drafter = read_drafter("me/llama8b-eagle3", eagle3_8b, None)
    assert drafter.params_b is not None and 0.5 < drafter.params_b < 1.0  # one layer + embeddings + a 32k-token head
    # the base model has no published drafter, so the user's is the one the plan makes room for
    advice = advise(gpus("H100"), model("meta-llama/Llama-3.1-8B"), Workload(kind=WorkloadKind.chat), drafter=drafter, rulebase=rb)
    assert any("me/llama8b-eagle3" in line and "from its config.json" in line for line in advice.trace if line.startswith("memory:"))
    eagle3 = next(c for c in advice.candidates if c.drafter == "me/llama8b-eagle3")
    assert eagle3.speculative_config["num_speculative_tokens"] == 3


def _memory_trace(advice, needle):
    return [line for line in advice.trace if line.startswith("memory:") and needle in line]


def test_kv_heads_are_replicated_once_tp_exceeds_them():
    """vLLM keeps max(1, kv_heads // TP) heads per rank (ModelConfig.get_num_kv_heads): past TP = heads the
    cache is replicated, so 4 KV heads at TP 8 leave each rank a quarter of it, not an eighth."""
    layout = KvLayout(188.0, "test", kv_heads=4)
    assert [layout.rank_share(tp) for tp in (1, 2, 4, 8)] == [0.25 * 4, 0.5, 0.25, 0.25]
    assert KvLayout(69.0, "test", mla=True).rank_share(8) == 1.0 and KvLayout(128.0, "test").rank_share(8) == 1 / 8
    qwen = model("x", params_b=235.0, kv_bytes_per_token=94 * 2 * 4 * 128 * 2)
    four = plan_memory(qwen, gpus("H200", 8), prompt_len=16384, output_len=512, concurrency=64, tensor_parallel_size=8, kv_heads=4, drafter_share=0)
    eight = plan_memory(qwen, gpus("H200", 8), prompt_len=16384, output_len=512, concurrency=64, tensor_parallel_size=8, kv_heads=8, drafter_share=0)
    kv_per_gpu = 188 * 64 * 16896 / 2**20 / 8
    assert four.need_gib == pytest.approx(eight.need_gib + kv_per_gpu, rel=0.01)
    assert any("replicated 2x" in line for line in four.assumptions)


def test_a_drafter_is_charged_only_to_the_arms_that_load_it():
    """Issue 39: 70B FP8 on one H100 refused every arm because the plan reserved the largest drafter for
    all of them. The baseline starts (tight); only the arm whose drafter does not fit is reported."""
    fp8 = model("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", params_b=70.6, kv_bytes_per_token=320 * 1024)
    plan = plan_memory(
        fp8, gpus("H100"), prompt_len=1024, output_len=512, arms=[BASELINE, ArmLoad("eagle3", 3.9, 0.03, "a head"), ArmLoad("pard", 2.3, 0.1, "PARD")]
    )
    assert plan.tensor_parallel_size == 1 and plan.fits is True
    assert plan.arms["baseline"].fits and plan.arms["pard"].fits and not plan.arms["eagle3"].fits
    assert plan.arms["pard"].held is not None and plan.arms["baseline"].held is not None and plan.arms["pard"].held < plan.arms["baseline"].held
    assert any("eagle3 +3.9 GiB (a head) and +3% KV" in line for line in plan.assumptions)


def test_native_mtp_layers_are_charged_to_the_mtp_arm_only(rb):
    """vLLM loads DeepSeek's MTP layer only when speculating: the MTP arm carries it, the baseline does not."""
    advice = advise(gpus("H200", 8), model("deepseek-ai/DeepSeek-R1"), Workload(kind=WorkloadKind.agentic, concurrency=64), rulebase=rb)
    arms = [line for line in advice.trace if line.startswith("memory: TP 8, ")]
    assert any(line.startswith("memory: TP 8, no-drafter arms: ") for line in arms)
    assert any(line.startswith("memory: TP 8, mtp (+12.5 GiB drafter, +2% KV)") for line in arms), arms
    assert any("mtp +12.5 GiB (its 1 MTP layer(s)" in line for line in advice.memory)
