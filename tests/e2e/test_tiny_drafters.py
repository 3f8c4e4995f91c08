"""The tiny drafters' configs carry what vLLM reads for their method (tiny_drafters.PEAGLE_READS for
P-EAGLE): checked here without torch, and once in the CPU engine's environment with vLLM's own
function for the parallel-drafting token and the built checkpoint's `mask_hidden`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import tiny_drafters
from tiny_drafters import drafter_config

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "models"
LLAMA = json.loads((FIXTURES / "Llama-3.1-8B-Instruct" / "config.json").read_text())
PARALLEL_TOKEN_KEYS = {"dflash_config", "mask_token_id", "dspark_noise_token_id", "pard_token", "ptd_token_id"}


def test_the_peagle_head_is_the_eagle3_head_plus_the_parallel_drafting_token():
    eagle3, peagle = drafter_config("eagle3", LLAMA), drafter_config("peagle", LLAMA)
    assert {k: v for k, v in peagle.items() if k != "ptd_token_id"} == eagle3
    assert peagle["architectures"] == ["LlamaForCausalLMEagle3"]  # served as method eagle3 + parallel_drafting
    token = peagle["ptd_token_id"]
    assert isinstance(token, int) and not isinstance(token, bool) and 0 <= token < LLAMA["vocab_size"]
    assert "ptd_token_id" in tiny_drafters.PEAGLE_READS and "mask_hidden" in tiny_drafters.PEAGLE_READS


def test_a_sequential_head_carries_no_parallel_drafting_token():
    """vLLM reads the token only with parallel_drafting; a stray one on EAGLE-3 would hide a wrong config."""
    for kind in ("eagle", "eagle3"):
        assert not PARALLEL_TOKEN_KEYS & drafter_config(kind, LLAMA).keys(), kind
    assert drafter_config("dflash", LLAMA)["dflash_config"]["mask_token_id"] == 0


def test_the_peagle_config_is_json_and_an_unknown_kind_names_the_kinds():
    assert json.loads(json.dumps(drafter_config("peagle", LLAMA))) == drafter_config("peagle", LLAMA)
    with pytest.raises(SystemExit, match="peagle"):
        drafter_config("medusa", LLAMA)


VLLM_READS_IT = """
import json, sys
from pathlib import Path
from safetensors import safe_open
from transformers import PretrainedConfig
from vllm.v1.worker.gpu.spec_decode.utils import get_parallel_drafting_token_id
head = Path(sys.argv[1])
config = json.loads((head / "config.json").read_text())
hf = PretrainedConfig(**config)
with safe_open(str(head / "model.safetensors"), "pt") as f:
    mask_hidden = list(f.get_tensor("mask_hidden").shape)
print(json.dumps({"token": get_parallel_drafting_token_id(hf), "mask_hidden": mask_hidden}))
"""


@pytest.mark.slow
@pytest.mark.e2e
def test_vllm_reads_the_built_peagle_heads_token_and_mask_hidden(cpu_engine, tmp_path):
    """No server: the engine's torch builds the head, and vLLM 0.32's own resolver reads its token."""
    out = tmp_path / "tiny-peagle"
    builder = Path(tiny_drafters.__file__)
    subprocess.run([str(cpu_engine.python), str(builder), "peagle", str(cpu_engine.model_dir), str(out)], check=True, timeout=300)
    seen = subprocess.run([str(cpu_engine.python), "-c", VLLM_READS_IT, str(out)], capture_output=True, text=True, timeout=300, check=True)
    read = json.loads(seen.stdout.strip().splitlines()[-1])
    config = json.loads((out / "config.json").read_text())
    assert read["token"] == config["ptd_token_id"] == tiny_drafters.PARALLEL_DRAFTING_TOKEN
    assert read["mask_hidden"] == [tiny_drafters.EAGLE3_AUX_LAYERS * config["target_hidden_size"]]


def test_the_mtp_kind_is_a_tiny_mimo_target_with_one_mtp_layer_and_the_tokenizer_models_vocabulary():
    """vLLM turns a `MiMoForCausalLM` target into its `MiMoMTPModel` drafter from these keys (MTP_READS)."""
    config = drafter_config("mtp", LLAMA)
    assert config["architectures"] == ["MiMoForCausalLM"] and "mtp" in tiny_drafters.TARGET_KINDS
    assert config["num_nextn_predict_layers"] == 1 and config["num_hidden_layers"] == 2 and config["hidden_size"] == 256
    assert config["vocab_size"] == LLAMA["vocab_size"] and config["eos_token_id"] == LLAMA["eos_token_id"]
    assert config["model_type"] == "qwen2" and "auto_map" not in config  # no remote code to run
    assert config["tie_word_embeddings"] is False  # MiMo-7B ships lm_head.weight, and so does the tiny one
    for key in ("num_nextn_predict_layers", "MiMoForCausalLM", "mtp_layers", "input_proj"):
        assert key in tiny_drafters.MTP_READS
