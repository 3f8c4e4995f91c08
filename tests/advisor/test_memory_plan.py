"""The memory plan: weights (format aware) + drafter + KV cache per GPU, the TP it picks, its arithmetic."""

from __future__ import annotations

import pytest

from advisor_helpers import gpus, model
from specadvisor.advisor import advise, explain, validate_spec_config
from specadvisor.advisor.sizing import plan_memory
from specadvisor.domain import Workload, WorkloadKind
from specadvisor.modelinfo.profile import kv_bytes_per_token
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
    assert lines[-1].startswith(f"memory: TP {advice.tensor_parallel_size}:") and "<=" in lines[-1]


def test_kv_bytes_from_config_shapes():
    llama8b = {"num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8}
    deepseek = {"num_hidden_layers": 61, "kv_lora_rank": 512, "qk_rope_head_dim": 64}
    assert kv_bytes_per_token(llama8b) == 131072 and kv_bytes_per_token(deepseek) == 61 * 576 * 2


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
        ({"method": "dspark", "num_speculative_tokens": 7}, "0.24.0", "needs vLLM >= 0.25.1"),
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
