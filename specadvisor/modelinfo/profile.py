"""Turn a checkpoint's config.json (plus its weight index) into a ModelProfile.

Multimodal and wrapper configs (Gemma 3/4, Llama 4, Kimi, Qwen3.5-VL) keep the language model's
shapes under `text_config`; those values win over the top level for everything but the identity.
"""

from __future__ import annotations

from typing import Any

from specadvisor.domain import ModelProfile
from specadvisor.modelinfo import catalog
from specadvisor.modelinfo.locate import Located
from specadvisor.modelinfo.mtp import detect_mtp
from specadvisor.modelinfo.params import estimate_params, experts_per_token, num, num_experts
from specadvisor.modelinfo.weights import WeightInfo

BYTES_PER_PARAM = {"float32": 4, "float16": 2, "bfloat16": 2}
"""Turns an unquantized index's total_size into a parameter count; quantized checkpoints mix dtypes
(fp8 weights, bf16 embeddings, scales) so they use config arithmetic instead."""

CONTEXT_KEYS = ("max_position_embeddings", "max_sequence_length", "seq_length", "n_positions", "model_max_length")


def language_config(config: dict[str, Any]) -> dict[str, Any]:
    text = config.get("text_config")
    return {**config, **text} if isinstance(text, dict) else config


def _weight_bits(q: dict[str, Any]) -> str | None:
    """The stored weight format of a compressed-tensors or ModelOpt config ("fp8", "int4", "nvfp4"):
    their quant_method names the tool, not the width, and the memory plan needs the width."""
    groups = q.get("config_groups")
    if isinstance(groups, dict):
        for group in groups.values():
            weights = group.get("weights") if isinstance(group, dict) else None
            bits = weights.get("num_bits") if isinstance(weights, dict) else None
            if isinstance(bits, int) and not isinstance(bits, bool):
                kind = "fp" if isinstance(weights, dict) and weights.get("type") == "float" else "int"
                return f"{'nvfp' if kind == 'fp' and bits == 4 else kind}{bits}"
    algo = q.get("quant_algo")
    return algo.lower() if isinstance(algo, str) and algo else None


def quantization(config: dict[str, Any]) -> str | None:
    q = config.get("quantization_config") or language_config(config).get("quantization_config")
    if not isinstance(q, dict):
        return None
    method = str(q.get("quant_method") or "unknown")
    detail = _weight_bits(q) or q.get("fmt") or q.get("format") or (f"{q['bits']}-bit" if q.get("bits") else None)
    return f"{method} ({detail})" if detail and detail != method else method


def family_of(model_id: str, model_type: str | None) -> str | None:
    known = catalog.find_family(model_id)
    if known is not None:
        return known.id
    return model_type


def _params_b(cfg: dict[str, Any], weights: WeightInfo | None, dtype: str | None, quant: str | None) -> tuple[float | None, float | None, str | None]:
    """(total, active, note) in billions: exact from local headers, else index size, else arithmetic."""
    estimate = estimate_params(cfg)
    active = estimate[1] / 1e9 if estimate else None
    if weights and weights.exact_params:
        total = weights.exact_params / 1e9
        return total, (active if estimate and estimate[0] != estimate[1] else total), None
    per_param = BYTES_PER_PARAM.get(dtype or "")
    if weights and weights.total_bytes and per_param and quant is None:  # quantized: mixed dtypes, use arithmetic
        total = weights.total_bytes / per_param / 1e9
        return total, (active if estimate and estimate[0] != estimate[1] else total), None
    if estimate:
        return estimate[0] / 1e9, active, None
    return None, None, "parameter count unknown: config.json lacks hidden_size/num_hidden_layers/vocab_size"


def kv_bytes_per_token(cfg: dict[str, Any]) -> int | None:
    """KV cache bytes per token over all layers at 16 bits: MLA keeps one latent (kv_lora_rank + rope dims)
    per layer; other attention keeps K and V for each KV head."""
    layers = num(cfg, "num_hidden_layers", "n_layer", "num_layers")
    if not layers:
        return None
    if num(cfg, "kv_lora_rank"):
        return layers * ((num(cfg, "kv_lora_rank") or 512) + (num(cfg, "qk_rope_head_dim") or 64)) * 2
    heads = num(cfg, "num_attention_heads", "n_head")
    hidden = num(cfg, "hidden_size", "d_model", "n_embd")
    kv_heads = num(cfg, "num_key_value_heads", "num_kv_heads") or heads
    head_dim = num(cfg, "head_dim") or (hidden // heads if hidden and heads else None)
    if not (kv_heads and head_dim):
        return None
    return layers * 2 * kv_heads * head_dim * 2


def kv_heads(cfg: dict[str, Any]) -> int | None:
    """Total KV heads of a non-MLA config (num_key_value_heads, else the attention heads): what vLLM
    divides by the tensor-parallel size, replicating heads once TP exceeds their count."""
    if num(cfg, "kv_lora_rank"):
        return None
    return num(cfg, "num_key_value_heads", "num_kv_heads") or num(cfg, "num_attention_heads", "n_head")


def _sig(value: float | None) -> float | None:
    """Four significant digits: 8.03 and 0.1345 (SmolLM2) alike."""
    return float(f"{value:.4g}") if value is not None else None


def build_profile(model_id: str, located: Located) -> ModelProfile:
    config = located.config
    cfg = language_config(config)
    architectures = config.get("architectures") or cfg.get("architectures") or []
    model_type = config.get("model_type")
    dtype = cfg.get("torch_dtype") or cfg.get("dtype") or config.get("torch_dtype") or config.get("dtype")
    quant = quantization(config)
    layers = num(cfg, "num_hidden_layers", "n_layer", "num_layers")
    weights = located.weights
    total_b, active_b, params_note = _params_b(cfg, weights, dtype, quant)
    experts = num_experts(cfg)
    is_moe = bool(experts and experts > 1)
    warnings: list[str] = []
    if isinstance(config.get("speculators_model_type"), str):
        warnings.append("this is a speculators drafter checkpoint, not a target model: pass it with --drafter")
    if params_note:
        warnings.append(params_note)
    mtp = detect_mtp(config, weights.names if weights else None, layers)
    if mtp.confirmed_by_weights is False:
        warnings.append(mtp.detail)
    return ModelProfile(
        id=model_id,
        source=located.source,
        path=located.path,
        family=family_of(model_id, model_type),
        architecture=architectures[0] if architectures else None,
        model_type=model_type,
        text_model_type=cfg.get("model_type") if cfg is not config and isinstance(cfg.get("model_type"), str) else None,
        params_b=_sig(total_b),
        active_params_b=_sig(active_b),
        is_moe=is_moe,
        num_experts=experts if is_moe else None,
        experts_per_token=experts_per_token(cfg) if is_moe else None,
        num_hidden_layers=layers,
        vocab_size=num(cfg, "vocab_size"),
        context_length=num(cfg, *CONTEXT_KEYS),
        kv_bytes_per_token=kv_bytes_per_token(cfg),
        kv_heads=kv_heads(cfg),
        mla=bool(num(cfg, "kv_lora_rank")),
        quantization=quant,
        dtype=str(dtype) if dtype else None,
        mtp=mtp,
        drafters=catalog.published_drafters(model_id),
        warnings=warnings,
    )
