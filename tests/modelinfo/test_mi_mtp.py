"""Native MTP heads: per-family config keys, and the weights deciding whether they really exist."""

import json

from mi_helpers import copy_model, model_dir
from specadvisor.modelinfo import inspect_model
from specadvisor.modelinfo.mtp import detect_mtp


def profile(path):
    return inspect_model(str(path), offline=True)


def test_deepseek_v3_heads_confirmed_by_layer_61_in_the_index():
    mtp = profile(model_dir("DeepSeek-V3")).mtp
    assert mtp.present and mtp.layers == 1 and mtp.config_key == "num_nextn_predict_layers"
    assert mtp.confirmed_by_weights is True


def test_stripped_reupload_is_caught(tmp_path):
    stripped = copy_model("DeepSeek-V3", tmp_path)
    index_path = stripped / "model.safetensors.index.json"
    index = json.loads(index_path.read_text())
    index["weight_map"] = {k: v for k, v in index["weight_map"].items() if ".layers.61." not in k}
    index_path.write_text(json.dumps(index))
    p = profile(stripped)
    assert not p.mtp.present and p.mtp.confirmed_by_weights is False and p.mtp.layers == 1
    assert any("no MTP tensors" in w for w in p.warnings)


def test_glm_without_index_is_declared_but_unconfirmed():
    mtp = profile(model_dir("GLM-4.5")).mtp
    assert mtp.present and mtp.confirmed_by_weights is None and "no weight index" in mtp.detail


def test_mimo_heads_are_mtp_layers_tensors():
    mtp = profile(model_dir("MiMo-7B-RL")).mtp
    assert mtp.present and mtp.confirmed_by_weights is True


def test_qwen3_next_has_heads_by_family_and_mtp_tensors():
    mtp = profile(model_dir("Qwen3-Next-80B-A3B-Instruct")).mtp
    assert mtp.present and mtp.layers == 1 and mtp.config_key == "model_type" and mtp.confirmed_by_weights is True


def test_qwen35_counts_heads_under_text_config():
    mtp = profile(model_dir("Qwen3.5-35B-A3B")).mtp
    assert mtp.present and mtp.config_key == "text_config.mtp_num_hidden_layers"


def test_gemma4_needs_its_assistant_checkpoint():
    mtp = profile(model_dir("gemma-4-31B-it")).mtp
    assert not mtp.present and mtp.needs_assistant_checkpoint and "assistant" in mtp.detail


def test_models_without_heads():
    for name in ("Llama-3.1-8B-Instruct", "Qwen3-8B", "Qwen3-30B-A3B", "gpt-oss-20b"):
        mtp = profile(model_dir(name)).mtp
        assert not mtp.present and not mtp.needs_assistant_checkpoint, name


def test_deepseek_v41_is_dspark_not_mtp():
    mtp = detect_mtp({"model_type": "deepseek_v41", "num_nextn_predict_layers": 1}, None, 61)
    assert not mtp.present and "dspark" in mtp.detail


def test_kimi_text_config_and_minimax_keys():
    kimi = detect_mtp({"model_type": "kimi_k3", "text_config": {"num_nextn_predict_layers": 1}}, None, 61)
    assert kimi.present and kimi.config_key == "text_config.num_nextn_predict_layers"
    minimax = detect_mtp({"model_type": "minimax_m3", "num_mtp_modules": 3}, frozenset({"mtp.0.fc.weight"}), 62)
    assert minimax.present and minimax.layers == 3 and minimax.confirmed_by_weights is True


def test_zero_layers_means_no_heads():
    mtp = detect_mtp({"model_type": "deepseek_v3", "num_nextn_predict_layers": 0}, None, 61)
    assert not mtp.present and mtp.layers == 0
