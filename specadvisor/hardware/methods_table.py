"""Which speculative methods and `--speculative-config` keys a vLLM version accepts, as data.

Verified against the vLLM 0.32.0 and 0.33.0 code (vllm/config/speculative.py); the first versions of
older features are approximate. The rule base (specadvisor.rulebase, rules/methods.toml) is the
authority when installed; engine_probe prefers it and falls back to this table.
"""

from __future__ import annotations

import re

METHODS: dict[str, tuple[str, str | None]] = {
    # method: (first version that accepts it, first version that rejects it)
    "ngram": ("0.5", None),
    "medusa": ("0.5", "0.33"),
    "mlp_speculator": ("0.5", "0.33"),
    "eagle": ("0.7", None),
    "eagle3": ("0.9", None),
    "mtp": ("0.9", None),
    "suffix": ("0.11", None),
    "draft_model": ("0.12", None),
    "ngram_gpu": ("0.15", None),
    "dflash": ("0.20", None),
    "dspark": ("0.30", None),
    "custom_class": ("0.32", None),
}
"""`extract_hidden_states` is accepted too but is not speculation, so it is left out."""

CONFIG_KEYS: dict[str, tuple[str, str | None]] = {
    "method": ("0.7", None),
    "model": ("0.7", None),
    "num_speculative_tokens": ("0.7", None),
    "draft_tensor_parallel_size": ("0.7", None),
    "quantization": ("0.7", None),
    "max_model_len": ("0.7", None),
    "revision": ("0.7", None),
    "code_revision": ("0.7", None),
    "prompt_lookup_max": ("0.7", None),
    "prompt_lookup_min": ("0.7", None),
    "disable_by_batch_size": ("0.7", "0.20"),
    "acceptance_method": ("0.7", "0.20"),
    "speculative_token_tree": ("0.10", "0.32"),
    "suffix_decoding_max_tree_depth": ("0.11", None),
    "suffix_decoding_max_cached_requests": ("0.11", None),
    "suffix_decoding_max_spec_factor": ("0.11", None),
    "suffix_decoding_min_token_prob": ("0.11", None),
    "disable_padded_drafter_batch": ("0.11", None),
    "enforce_eager": ("0.12", None),
    "tensor_parallel_size": ("0.12", None),
    "parallel_drafting": ("0.16", None),
    "attention_backend": ("0.20", None),
    "kv_cache_dtype": ("0.20", None),
    "moe_backend": ("0.30", None),
    "draft_load_config": ("0.30", None),
    "rejection_sample_method": ("0.30", None),
    "synthetic_acceptance_rates": ("0.30", None),
    "synthetic_acceptance_length": ("0.32", None),
    "num_speculative_tokens_per_batch_size": ("0.30", None),
    "draft_sample_method": ("0.30", None),
    "index_share_for_mtp_iteration": ("0.32", None),
    "disable_eagle_block_drop": ("0.32", None),
    "use_local_argmax_reduction": ("0.32", None),
    "use_heterogeneous_vocab": ("0.32", None),
    "enable_adaptive_verification": ("0.32", None),
    "dspark_draft_topk": ("0.32", None),
}

_VERSION = re.compile(r"^\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?")


def version_tuple(text: str | None) -> tuple[int, int, int] | None:
    match = _VERSION.match(text or "")
    return tuple(int(p or 0) for p in match.groups()) if match else None  # type: ignore[return-value]


def _accepted(table: dict[str, tuple[str, str | None]], version: str | None) -> list[str]:
    v = version_tuple(version)
    if v is None:
        return []
    return [
        name
        for name, (first, removed) in table.items()
        if v >= version_tuple(first) and (removed is None or v < version_tuple(removed))  # type: ignore[operator]
    ]


def methods_for(version: str | None) -> list[str]:
    """Speculative methods accepted by this vLLM version ([] when the version is unknown)."""
    return _accepted(METHODS, version)


def config_keys_for(version: str | None) -> list[str]:
    return _accepted(CONFIG_KEYS, version)
