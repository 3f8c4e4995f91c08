"""Parameter counts from config.json arithmetic, when the weights cannot be counted directly.

Dense: embeddings + layers x (attention + gated MLP). MoE: routed experts counted once for the total
and top-k times for the active count, plus shared experts and the router. DeepSeek-style MLA
attention has its own low-rank shapes. MTP layers are not counted (they are not in
num_hidden_layers). Good to a few percent on the common families; an estimate, labelled as such.
"""

from __future__ import annotations

from typing import Any


def num(cfg: dict[str, Any], *keys: str) -> int | None:
    for key in keys:
        value = cfg.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return int(value)
    return None


def num_experts(cfg: dict[str, Any]) -> int | None:
    return num(cfg, "n_routed_experts", "num_experts", "num_local_experts", "moe_num_experts")


def experts_per_token(cfg: dict[str, Any]) -> int | None:
    return num(cfg, "num_experts_per_tok", "experts_per_token", "num_experts_per_token", "moe_k", "moe_topk")


def _attention(cfg: dict[str, Any], h: int) -> int:
    heads = num(cfg, "num_attention_heads", "n_head") or max(1, h // 128)
    if num(cfg, "kv_lora_rank"):  # multi-head latent attention (DeepSeek-V2/V3, Kimi)
        rope = num(cfg, "qk_rope_head_dim") or 64
        nope = num(cfg, "qk_nope_head_dim") or 128
        v_dim = num(cfg, "v_head_dim") or nope
        kv_rank = num(cfg, "kv_lora_rank") or 512
        q_rank = num(cfg, "q_lora_rank")
        q = h * q_rank + q_rank * heads * (nope + rope) if q_rank else h * heads * (nope + rope)
        kv = h * (kv_rank + rope) + kv_rank * heads * (nope + v_dim)
        return q + kv + heads * v_dim * h
    kv_heads = num(cfg, "num_key_value_heads", "num_kv_heads") or heads
    head_dim = num(cfg, "head_dim") or h // heads
    return 2 * h * heads * head_dim + 2 * h * kv_heads * head_dim


def estimate_params(cfg: dict[str, Any]) -> tuple[int, int] | None:
    """(total, active) parameters, or None when the config lacks the basic shapes."""
    h = num(cfg, "hidden_size", "d_model", "n_embd")
    layers = num(cfg, "num_hidden_layers", "n_layer", "num_layers")
    vocab = num(cfg, "vocab_size")
    if not (h and layers and vocab):
        return None
    attention = _attention(cfg, h)
    inter = num(cfg, "intermediate_size", "ffn_hidden_size", "n_inner") or 4 * h
    dense_layer = attention + 3 * h * inter
    experts = num_experts(cfg)
    if experts and experts > 1:
        expert_inter = num(cfg, "moe_intermediate_size", "expert_intermediate_size") or inter
        expert = 3 * h * expert_inter
        shared = (num(cfg, "n_shared_experts", "num_shared_experts") or 0) * expert
        shared += 3 * h * (num(cfg, "shared_expert_intermediate_size") or 0)
        router = h * experts
        dense_count = min(num(cfg, "first_k_dense_replace") or 0, layers)
        moe_count = layers - dense_count
        body_total = dense_count * dense_layer + moe_count * (attention + experts * expert + shared + router)
        top_k = experts_per_token(cfg) or 1
        body_active = dense_count * dense_layer + moe_count * (attention + top_k * expert + shared + router)
    else:
        body_total = body_active = layers * dense_layer
    embeddings = vocab * h * (1 if cfg.get("tie_word_embeddings") else 2)
    return embeddings + body_total, embeddings + body_active
