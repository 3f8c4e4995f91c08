"""The main families' real config.json files, read as specadvisor reads them."""

import pytest

from mi_helpers import model_dir
from specadvisor.modelinfo import inspect_model


def profile(name):
    return inspect_model(str(model_dir(name)), offline=True)


@pytest.mark.parametrize(
    "name, total_b, active_b",
    [
        ("Llama-3.1-8B-Instruct", 8.03, 8.03),
        ("Qwen3-8B", 8.19, 8.19),
        ("Qwen3-30B-A3B", 30.5, 3.3),
        ("DeepSeek-V3", 671, 37),
        ("GLM-4.5", 355, 32),
        ("Qwen3-Next-80B-A3B-Instruct", 80, 3.0),
        ("gpt-oss-20b", 21, 3.6),
        ("MiMo-7B-RL", 7.8, 7.8),
    ],
)
def test_parameter_counts_match_the_published_sizes(name, total_b, active_b):
    p = profile(name)
    assert p.params_b == pytest.approx(total_b, rel=0.03)
    assert p.active_params_b == pytest.approx(active_b, rel=0.18)


def test_llama_dense_profile():
    p = profile("Llama-3.1-8B-Instruct")
    assert (p.source, p.architecture, p.model_type) == ("local", "LlamaForCausalLM", "llama")
    assert not p.is_moe and p.num_experts is None
    assert (p.num_hidden_layers, p.vocab_size, p.context_length, p.dtype) == (32, 128256, 131072, "bfloat16")
    assert p.quantization is None and not p.mtp.present
    assert p.path == str(model_dir("Llama-3.1-8B-Instruct"))


@pytest.mark.parametrize(
    "name, experts, active",
    [("Qwen3-30B-A3B", 128, 8), ("DeepSeek-V3", 256, 8), ("GLM-4.5", 160, 8), ("gpt-oss-20b", 32, 4), ("Qwen3.5-35B-A3B", 256, 8)],
)
def test_moe_experts(name, experts, active):
    p = profile(name)
    assert p.is_moe and (p.num_experts, p.experts_per_token) == (experts, active)
    assert p.active_params_b < p.params_b / 4


def test_quantization_is_named():
    assert profile("DeepSeek-V3").quantization == "fp8 (e4m3)"
    assert profile("gpt-oss-20b").quantization == "mxfp4"


def test_text_config_is_read_for_multimodal_wrappers():
    p = profile("gemma-4-31B-it")
    assert p.architecture == "Gemma4ForConditionalGeneration"
    assert (p.num_hidden_layers, p.vocab_size, p.context_length) == (72, 262144, 262144)
    assert p.params_b == pytest.approx(31, rel=0.05)


def test_a_drafter_passed_as_target_is_flagged():
    p = profile("Llama-3.1-8B-Instruct-speculator.eagle3")
    assert any("--drafter" in w for w in p.warnings)


@pytest.mark.slow
def test_real_smollm2_checkpoint_counts_its_tensors_exactly(smollm2_dir):
    p = inspect_model(str(smollm2_dir), offline=True)
    assert p.architecture == "LlamaForCausalLM" and p.num_hidden_layers == 30 and p.vocab_size == 49152
    assert p.params_b == pytest.approx(0.1345, rel=0.01)  # exact, from the safetensors header
    assert p.dtype == "float32" and not p.mtp.present and p.mtp.confirmed_by_weights is None


def test_a_typo_in_the_users_rules_is_reported_not_taken_for_not_in_catalog(tmp_path, monkeypatch):
    """A broken user rules file names its file and line; it does not become 'not in the model catalog'."""
    from specadvisor.errors import InputError
    from specadvisor.rulebase import loader

    monkeypatch.setenv("SPECADVISOR_HOME", str(tmp_path))
    folder = tmp_path / "config" / "rules"
    folder.mkdir(parents=True)
    (folder / "models.toml").write_text('[[model]\nid = "oops"\n')
    loader.default_rulebase.cache_clear()
    try:
        with pytest.raises(InputError, match=r"models\.toml:\d+: not valid TOML"):
            inspect_model("acme/unknown-model", offline=True)
    finally:
        loader.default_rulebase.cache_clear()
