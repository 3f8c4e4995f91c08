"""Build a tiny drafter with random weights in a real checkpoint format, for a Llama-architecture target.

Run with the CPU engine's Python (torch and safetensors live there, not in specadvisor's venv):

    $SPECADVISOR_ENGINE_DIR/venv/bin/python tests/e2e/tiny_drafters.py KIND TARGET_DIR OUT_DIR

KIND is `eagle` (EAGLE-1: one decoder layer without its input norm, `fc` over [embedding, hidden],
embedding and LM head shared with the target), `eagle3` (EAGLE-3 as the SafeAILab / Speculators
checkpoints ship it: `midlayer.*` reading [embedding, hidden], `fc` over three target layers, its own
norm, a reduced draft vocabulary with its `d2t` / `t2d` maps), `peagle` (P-EAGLE, served as `eagle3`
with `parallel_drafting`: the EAGLE-3 head plus what vLLM reads for parallel drafting, PEAGLE_READS)
or `dflash` (z-lab's DFlashDraftModel: Qwen3-style layers with q/k norms, `fc` over the target layers
named in `dflash_config`, a `mask_token_id`, block size 16).

KIND `mtp` builds a TARGET, not a drafter: a tiny MiMo (`MiMoForCausalLM`, dense Qwen2 layers plus its
own multi-token-prediction layer, see MTP_READS), served with method `mtp` and no drafter. It reuses
TARGET_DIR's tokenizer files (and vocabulary size), so the prompts of a sweep of TARGET_DIR fit it.

The weights are random: the drafts are wrong and acceptance is low, which is the point; these
checkpoints prove that a configuration starts and that its counters are read, not that it drafts
well. Seeded, so the same files come out every time.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch lives in the engine's environment; the config alone needs none (unit tests)
    import torch

KINDS = ("eagle", "eagle3", "peagle", "dflash", "mtp")
TARGET_KINDS = ("mtp",)  # a whole target model (with its tokenizer), not a head for TARGET_DIR
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

MTP_HIDDEN, MTP_LAYERS, MTP_HEADS, MTP_KV_HEADS, MTP_INTERMEDIATE = 256, 2, 4, 2, 512
MTP_NEXTN = 1  # MiMo-7B ships one MTP layer (tests/fixtures/models/MiMo-7B-RL); N=1 is the layer count
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "chat_template.jinja",
                   "generation_config.json", "vocab.json", "merges.txt")  # fmt: skip

MTP_READS = """What vLLM reads for a MiMo target served with method `mtp` (0.26.0 and 0.32.0 alike):
- `architectures[0] == "MiMoForCausalLM"` turns the drafter's config into `mimo_mtp` / `MiMoMTPModel`
  with `n_predict = num_nextn_predict_layers` and `num_hidden_layers = 0`:
  vllm/config/speculative.py `hf_config_override` (0.26.0 lines 358-367, 0.32.0 lines 725-734);
  an N above n_predict must be a multiple of it (0.26.0 lines 976-988, 0.32.0 lines 1489-1500);
- the target `MiMoForCausalLM` is Qwen2 (q/k/v biases) and skips `model.mtp_layers.*`:
  vllm/model_executor/models/mimo.py (0.26.0 `load_weights` skip_prefixes, lines 122-127; 0.32.0
  `hf_to_vllm_mapper`, line 93);
- the drafter `MiMoMTP` keeps `model.mtp_layers.{i}.*`, `model.embed_tokens.*` and `lm_head.*`: per layer
  `token_layernorm`, `hidden_layernorm`, `input_proj` (hidden x 2 hidden, no bias), `final_layernorm`
  and one Qwen2 decoder layer under the checkpoint's own names (`self_attn.*`, `mlp.*`,
  `input_layernorm`, `post_attention_layernorm`), which vLLM moves under `mtp_block`:
  vllm/model_executor/models/mimo_mtp.py `hf_to_vllm_mapper` and `load_weights` (lines 168-222 in both).
  Its forward asserts `spec_step_idx == 0` (line 200): one layer, reused for N > 1.
MiMo-7B's own config says `model_type: mimo` with remote code (a Qwen2Config subclass); transformers
has no `mimo` type, so this one says `qwen2` and nothing is executed from the folder. The weights are
untied (`lm_head.weight` present), as MiMo-7B's."""


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


def _rope_theta(config: dict) -> float:
    """The target's RoPE base, as transformers 5 (`rope_parameters`) or 4 (`rope_theta`) writes it: a
    target converted on another machine (the H200 kit's GGUF conversion) may carry either."""
    return float((config.get("rope_parameters") or {}).get("rope_theta") or config.get("rope_theta") or 10000.0)


def _dflash_target_layers(target: dict) -> list[int]:
    layers = target["num_hidden_layers"]
    return [1, layers // 2, layers - 2]


def mtp_target_config(tokenizer_model: dict) -> dict:
    """config.json of the tiny MiMo target (see MTP_READS), with the vocabulary of the model whose
    tokenizer it reuses (no torch)."""
    rope_theta = _rope_theta(tokenizer_model)
    return {
        "architectures": ["MiMoForCausalLM"],
        "model_type": "qwen2",
        "hidden_size": MTP_HIDDEN,
        "intermediate_size": MTP_INTERMEDIATE,
        "num_hidden_layers": MTP_LAYERS,
        "num_attention_heads": MTP_HEADS,
        "num_key_value_heads": MTP_KV_HEADS,
        "num_nextn_predict_layers": MTP_NEXTN,
        "hidden_act": "silu",
        "rms_norm_eps": 1e-5,
        "max_position_embeddings": tokenizer_model.get("max_position_embeddings", 8192),
        "rope_theta": rope_theta,
        "rope_parameters": {"rope_theta": rope_theta, "rope_type": "default"},
        "attention_dropout": 0.0,
        "use_sliding_window": False,
        "sliding_window": None,
        "max_window_layers": MTP_LAYERS,
        "vocab_size": tokenizer_model["vocab_size"],
        "bos_token_id": tokenizer_model.get("bos_token_id"),
        "eos_token_id": tokenizer_model.get("eos_token_id"),
        "tie_word_embeddings": False,
        "dtype": "bfloat16",  # a GPU serves it in bf16 (FlashAttention); the CPU engine passes --dtype float32
        "torch_dtype": "bfloat16",  # the same, as transformers 4 names it
    }


def drafter_config(kind: str, target: dict) -> dict:
    """The drafter's config.json for a target's config.json: everything vLLM reads from it (no torch).
    For `mtp`, the tiny MiMo target's config with `target`'s vocabulary."""
    if kind not in KINDS:
        raise SystemExit(f"unknown drafter kind {kind!r}: use {', '.join(KINDS)}")
    if kind == "mtp":
        return mtp_target_config(target)
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
        "rope_parameters": target.get("rope_parameters") or {"rope_theta": _rope_theta(target), "rope_type": "default"},
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


def _qwen2_layer(prefix: str, config: dict) -> dict[str, torch.Tensor]:
    """One Qwen2 decoder layer under the checkpoint's names (q/k/v with biases, as Qwen2 and MiMo have)."""
    import torch

    hidden, heads, kv_heads = config["hidden_size"], config["num_attention_heads"], config["num_key_value_heads"]
    head_dim = hidden // heads
    weights = {**_attention(prefix, hidden, heads, kv_heads, head_dim, hidden), **_mlp(prefix, hidden, config["intermediate_size"])}
    for proj, width in (("q_proj", heads * head_dim), ("k_proj", kv_heads * head_dim), ("v_proj", kv_heads * head_dim)):
        weights[f"{prefix}.self_attn.{proj}.bias"] = torch.zeros(width)
    weights[f"{prefix}.input_layernorm.weight"] = torch.ones(hidden)
    weights[f"{prefix}.post_attention_layernorm.weight"] = torch.ones(hidden)
    return weights


def mtp_target_weights(config: dict) -> dict[str, torch.Tensor]:
    """The tiny MiMo's tensors under MiMo-7B's names: the target's and `model.mtp_layers.*` (MTP_READS)."""
    import torch

    torch.manual_seed(0)
    hidden, vocab = config["hidden_size"], config["vocab_size"]
    weights = {"model.embed_tokens.weight": _linear(vocab, hidden), "lm_head.weight": _linear(vocab, hidden), "model.norm.weight": torch.ones(hidden)}
    for i in range(config["num_hidden_layers"]):
        weights.update(_qwen2_layer(f"model.layers.{i}", config))
    for i in range(config["num_nextn_predict_layers"]):
        prefix = f"model.mtp_layers.{i}"
        weights.update(_qwen2_layer(prefix, config))
        for norm in ("token_layernorm", "hidden_layernorm", "final_layernorm"):
            weights[f"{prefix}.{norm}.weight"] = torch.ones(hidden)
        weights[f"{prefix}.input_proj.weight"] = _linear(hidden, 2 * hidden)
    return {name: tensor.to(torch.bfloat16) for name, tensor in weights.items()}


def drafter_weights(kind: str, target: dict, config: dict) -> dict[str, torch.Tensor]:
    import torch

    if kind == "mtp":
        return mtp_target_weights(config)
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
    if kind in TARGET_KINDS:  # a whole model: the prompts are tokenized with TARGET_DIR's tokenizer
        for name in TOKENIZER_FILES:
            if (target_dir / name).is_file():
                shutil.copyfile(target_dir / name, out_dir / name)
    return config


if __name__ == "__main__":
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    build(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]))
    what = "target" if sys.argv[1] in TARGET_KINDS else "drafter"
    print(f"built a tiny {sys.argv[1]} {what} in {sys.argv[3]}")
