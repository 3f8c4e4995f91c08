"""Build a tiny drafter with random weights in a real checkpoint format, for a Llama-architecture target.

Run with the CPU engine's Python (torch and safetensors live there, not in specadvisor's venv):

    $SPECADVISOR_ENGINE_DIR/venv/bin/python tests/e2e/tiny_drafters.py KIND TARGET_DIR OUT_DIR

KIND is `eagle` (EAGLE-1: one decoder layer without its input norm, `fc` over [embedding, hidden],
embedding and LM head shared with the target), `eagle3` (EAGLE-3 as the SafeAILab / Speculators
checkpoints ship it: `midlayer.*` reading [embedding, hidden], `fc` over three target layers, its own
norm, a reduced draft vocabulary with its `d2t` / `t2d` maps), `peagle` (P-EAGLE, served as `eagle3`
with `parallel_drafting`: the EAGLE-3 head plus what vLLM reads for parallel drafting, PEAGLE_READS)
or `dflash` (z-lab's DFlashDraftModel: Qwen3-style layers with q/k norms, `fc` over the target layers
named in `dflash_config`, a `mask_token_id`, block size 16). The weights are random: the drafts are
wrong and acceptance is low, which is the point; these checkpoints prove that a configuration starts and that its counters are
read, not that it drafts well. Seeded, so the same files come out every time.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch lives in the engine's environment; the config alone needs none (unit tests)
    import torch

KINDS = ("eagle", "eagle3", "peagle", "dflash")
DRAFT_VOCAB = 2048  # EAGLE-3's reduced vocabulary: the first DRAFT_VOCAB target ids
DFLASH_BLOCK = 16
DFLASH_LAYERS = 2
EAGLE3_AUX_LAYERS = 3  # EAGLE-3's `fc` reads three target layers (vLLM's default num_aux_hidden_states)
PARALLEL_DRAFTING_TOKEN = 0  # the id fed into the masked slots; any id of the target's vocabulary starts

PEAGLE_READS = """What vLLM reads for P-EAGLE (`method` eagle3 with `parallel_drafting: true`), in its own source:
- the masked-slot token id from the drafter's config: the first of `dflash_config.mask_token_id`,
  (0.32's proposer also top-level `mask_token_id`, `dspark_noise_token_id`), `pard_token`, `ptd_token_id`,
  else ValueError: vllm/v1/spec_decode/llm_base_proposer.py `_init_parallel_drafting_params`
  (0.26.0 lines 347-366, 0.32.0 lines 356-380); the v2 runner's copy is
  vllm/v1/worker/gpu/spec_decode/utils.py `get_parallel_drafting_token_id` (0.26.0 lines 55-77);
- a `mask_hidden` weight of target_hidden_size x num_aux_hidden_states values (the hidden state of a
  masked slot, before `fc`), else ValueError "mask_hidden not found in weights":
  vllm/model_executor/models/llama_eagle3.py (0.26.0: buffer lines 309-315, `load_weights` 381-416;
  0.32.0: 347-353 and 420-455).
A Speculators-format P-EAGLE (`speculators_model_type: peagle`) names the id `mask_token_id` and vLLM
maps it to `pard_token` (vllm/transformers_utils/configs/speculators/algos.py `update_peagle`, 0.26.0
line 86). This head is in the plain EAGLE-3 format, so it carries `ptd_token_id`, read by both."""


def _linear(out_features: int, in_features: int) -> torch.Tensor:
    import torch

    return torch.randn(out_features, in_features) * 0.02


def _attention(prefix: str, hidden: int, heads: int, kv_heads: int, head_dim: int, q_in: int) -> dict[str, torch.Tensor]:
    return {
        f"{prefix}.self_attn.q_proj.weight": _linear(heads * head_dim, q_in),
        f"{prefix}.self_attn.k_proj.weight": _linear(kv_heads * head_dim, q_in),
        f"{prefix}.self_attn.v_proj.weight": _linear(kv_heads * head_dim, q_in),
        f"{prefix}.self_attn.o_proj.weight": _linear(hidden, heads * head_dim),
    }


def _mlp(prefix: str, hidden: int, intermediate: int) -> dict[str, torch.Tensor]:
    return {
        f"{prefix}.mlp.gate_proj.weight": _linear(intermediate, hidden),
        f"{prefix}.mlp.up_proj.weight": _linear(intermediate, hidden),
        f"{prefix}.mlp.down_proj.weight": _linear(hidden, intermediate),
    }


def _dflash_target_layers(target: dict) -> list[int]:
    layers = target["num_hidden_layers"]
    return [1, layers // 2, layers - 2]


def drafter_config(kind: str, target: dict) -> dict:
    """The drafter's config.json for a target's config.json: everything vLLM reads from it (no torch)."""
    if kind not in KINDS:
        raise SystemExit(f"unknown drafter kind {kind!r}: use {', '.join(KINDS)}")
    hidden, heads = target["hidden_size"], target["num_attention_heads"]
    common = {
        "hidden_size": hidden,
        "num_attention_heads": heads,
        "num_key_value_heads": target["num_key_value_heads"],
        "head_dim": target.get("head_dim") or hidden // heads,
        "intermediate_size": 256,  # tiny: the drafter's own MLP width is free
        "hidden_act": "silu",
        "rms_norm_eps": target.get("rms_norm_eps", 1e-5),
        "max_position_embeddings": target.get("max_position_embeddings", 8192),
        "rope_parameters": target.get("rope_parameters", {"rope_theta": 10000.0, "rope_type": "default"}),
        "vocab_size": target["vocab_size"],
        "bos_token_id": target.get("bos_token_id"),
        "eos_token_id": target.get("eos_token_id"),
        "tie_word_embeddings": False,
        "torch_dtype": "float32",
    }
    if kind == "eagle":
        return {**common, "architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 1}
    if kind in ("eagle3", "peagle"):
        config = {**common, "architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama", "num_hidden_layers": 1,
                  "draft_vocab_size": DRAFT_VOCAB, "target_hidden_size": hidden}  # fmt: skip
        if kind == "peagle":
            config["ptd_token_id"] = PARALLEL_DRAFTING_TOKEN  # see PEAGLE_READS
        return config
    return {**common, "architectures": ["DFlashDraftModel"], "model_type": "qwen3", "num_hidden_layers": DFLASH_LAYERS,
            "block_size": DFLASH_BLOCK, "num_target_layers": target["num_hidden_layers"], "attention_bias": False,
            "dflash_config": {"mask_token_id": 0, "target_layer_ids": _dflash_target_layers(target)}}  # fmt: skip


def drafter_weights(kind: str, target: dict, config: dict) -> dict[str, torch.Tensor]:
    import torch

    torch.manual_seed(0)
    hidden, heads, kv_heads = config["hidden_size"], config["num_attention_heads"], config["num_key_value_heads"]
    head_dim, intermediate = config["head_dim"], config["intermediate_size"]
    ones = torch.ones(hidden)
    weights: dict[str, torch.Tensor]
    if kind == "eagle":
        weights = {**_attention("layers.0", hidden, heads, kv_heads, head_dim, hidden), **_mlp("layers.0", hidden, intermediate)}
        weights["layers.0.post_attention_layernorm.weight"] = ones.clone()
        weights["fc.weight"] = _linear(hidden, 2 * hidden)
    elif kind in ("eagle3", "peagle"):
        weights = {**_attention("midlayer", hidden, heads, kv_heads, head_dim, 2 * hidden), **_mlp("midlayer", hidden, intermediate)}
        for norm in ("input_layernorm", "hidden_norm", "post_attention_layernorm"):
            weights[f"midlayer.{norm}.weight"] = ones.clone()
        weights["norm.weight"] = ones.clone()
        weights["fc.weight"] = _linear(hidden, EAGLE3_AUX_LAYERS * hidden)
        weights["lm_head.weight"] = _linear(DRAFT_VOCAB, hidden)
        weights["d2t"] = torch.zeros(DRAFT_VOCAB, dtype=torch.int64)  # draft id i -> target id i + d2t[i]
        t2d = torch.zeros(target["vocab_size"], dtype=torch.bool)
        t2d[:DRAFT_VOCAB] = True
        weights["t2d"] = t2d
        if kind == "peagle":  # the hidden state of a masked slot, before `fc`: see PEAGLE_READS
            weights["mask_hidden"] = torch.randn(EAGLE3_AUX_LAYERS * config["target_hidden_size"]) * 0.02
    else:
        weights = {}
        for i in range(DFLASH_LAYERS):
            weights.update(_attention(f"layers.{i}", hidden, heads, kv_heads, head_dim, hidden))
            weights.update(_mlp(f"layers.{i}", hidden, intermediate))
            weights[f"layers.{i}.self_attn.q_norm.weight"] = torch.ones(head_dim)
            weights[f"layers.{i}.self_attn.k_norm.weight"] = torch.ones(head_dim)
            weights[f"layers.{i}.input_layernorm.weight"] = ones.clone()
            weights[f"layers.{i}.post_attention_layernorm.weight"] = ones.clone()
        weights["fc.weight"] = _linear(hidden, hidden * len(config["dflash_config"]["target_layer_ids"]))
        weights["hidden_norm.weight"] = ones.clone()
        weights["norm.weight"] = ones.clone()
    return weights


def build(kind: str, target_dir: Path, out_dir: Path) -> dict:
    from safetensors.torch import save_file

    target = json.loads((target_dir / "config.json").read_text())
    config = drafter_config(kind, target)
    weights = drafter_weights(kind, target, config)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    save_file({k: v.contiguous() for k, v in weights.items()}, str(out_dir / "model.safetensors"), metadata={"format": "pt"})
    return config


if __name__ == "__main__":
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    build(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]))
    print(f"built a tiny {sys.argv[1]} drafter in {sys.argv[3]}")
