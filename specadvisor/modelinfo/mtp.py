"""Native multi-token-prediction heads (served with method "mtp" and no drafter), per model family.

A config key only says the architecture has heads; quantized re-uploads often strip them, so the
weight names decide when we have them: `mtp.*` tensors, or an extra decoder layer
`model.layers.{num_hidden_layers}.*` (DeepSeek/GLM style).
"""

from __future__ import annotations

import re
from typing import Any

from specadvisor.domain import MtpInfo

LAYER_KEYS = ("num_nextn_predict_layers", "mtp_num_hidden_layers", "num_mtp_modules", "num_mtp_layers")
"""Config keys that count MTP layers, checked at the top level and under text_config."""

DSPARK_INSTEAD = {"deepseek_v4", "deepseek_v41"}
"""DeepSeek-V4.x: vLLM rejects `mtp` and serves the heads as `dspark`."""

ASSISTANT_MTP = {"gemma4", "gemma4_text"}
"""Gemma 4: MTP through a separate assistant checkpoint (model_type gemma4_assistant)."""

ALWAYS_MTP = {"qwen3_next": 1}
"""Families whose checkpoints carry MTP layers even when the config does not count them."""


_MTP_TENSOR = re.compile(r"(^|\.)mtp[._]")
"""`mtp.layers.0.*` (Qwen3-Next/3.5), `model.mtp_layers.0.*` (MiMo)."""


def _layer_count(config: dict[str, Any]) -> tuple[int, str | None]:
    scopes = [("", config)]
    if isinstance(config.get("text_config"), dict):
        scopes.append(("text_config.", config["text_config"]))
    for prefix, scope in scopes:
        for key in LAYER_KEYS:
            value = scope.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value, prefix + key
    return 0, None


def _weights_have_heads(names: frozenset[str], num_hidden_layers: int | None) -> bool:
    extra_layer = re.compile(rf"(^|\.)layers\.{num_hidden_layers}\.") if num_hidden_layers is not None else None
    return any(_MTP_TENSOR.search(n) or (extra_layer is not None and extra_layer.search(n)) for n in names)


def detect_mtp(config: dict[str, Any], weight_names: frozenset[str] | None, num_hidden_layers: int | None) -> MtpInfo:
    model_type = str(config.get("model_type") or "")
    text_type = str((config.get("text_config") or {}).get("model_type") or "") if isinstance(config.get("text_config"), dict) else ""
    layers, key = _layer_count(config)
    if model_type in ASSISTANT_MTP or text_type in ASSISTANT_MTP:
        return MtpInfo(
            needs_assistant_checkpoint=True,
            detail="Gemma 4 has no MTP heads in its own checkpoint; serve MTP with its assistant checkpoint as the drafter",
        )
    if model_type in DSPARK_INSTEAD:
        return MtpInfo(
            present=False,
            layers=layers,
            config_key=key,
            detail=f"{model_type} rejects method 'mtp'; its heads are served with method 'dspark'",
        )
    if not layers and model_type in ALWAYS_MTP:
        layers, key = ALWAYS_MTP[model_type], "model_type"
    if not layers:
        return MtpInfo(detail="no MTP heads declared in config.json")
    if weight_names is None:
        return MtpInfo(present=True, layers=layers, config_key=key, detail=f"{key} = {layers}; no weight index to confirm the heads")
    if _weights_have_heads(weight_names, num_hidden_layers):
        return MtpInfo(present=True, layers=layers, config_key=key, confirmed_by_weights=True, detail=f"{key} = {layers}, MTP tensors present")
    return MtpInfo(
        present=False,
        layers=layers,
        config_key=key,
        confirmed_by_weights=False,
        detail=f"{key} = {layers} but the weights have no MTP tensors (stripped in this upload?): method 'mtp' will fail",
    )
