"""How an arm is named and which arms share one server: the small vocabulary plan, runner and
predictor agree on, so that resuming a session finds the same ids it stored."""

from __future__ import annotations

import json
from typing import Any

from specadvisor.domain import Arm

# Method ids that are not vLLM method names (contract section 1): P-EAGLE and PARD are flags.
METHOD_ALIASES: dict[str, tuple[str, dict[str, Any]]] = {
    "peagle": ("eagle3", {"parallel_drafting": True}),
    "p-eagle": ("eagle3", {"parallel_drafting": True}),
    "pard": ("draft_model", {"parallel_drafting": True}),
}
# vLLM forces parallel drafting on for these.
ALWAYS_PARALLEL = {"dflash", "dspark"}


def slug(text: str) -> str:
    keep = "".join(ch if ch.isalnum() else "-" for ch in text.lower())
    return "-".join(part for part in keep.split("-") if part)


def arm_id(family: str | None, n: int | None, concurrency: int, multi_concurrency: bool) -> str:
    base = "baseline" if family is None else f"{slug(family)}-n{n}"
    return f"{base}-c{concurrency}" if multi_concurrency else base


def family_key(arm: Arm) -> str:
    """Everything in the speculative config except N: arms of one family differ only in N."""
    if arm.speculative_config is None:
        return "baseline"
    rest = {k: v for k, v in arm.speculative_config.items() if k != "num_speculative_tokens"}
    return json.dumps(rest, sort_keys=True)


def family_label(arm: Arm) -> str:
    """Short human name of a family: the method, plus the drafter's last path part when there is one."""
    if arm.speculative_config is None:
        return "baseline"
    cfg = arm.speculative_config
    label = "p-eagle" if cfg.get("method") == "eagle3" and cfg.get("parallel_drafting") else str(cfg.get("method"))
    if cfg.get("model"):
        label += f" ({str(cfg['model']).rstrip('/').split('/')[-1]})"
    return label


def server_key(arm: Arm) -> str:
    """Arms with the same key run on one server launch (they differ only in client concurrency)."""
    return json.dumps([arm.speculative_config, arm.server_args], sort_keys=True)


def is_parallel(method: str, config: dict[str, Any]) -> bool:
    return bool(config.get("parallel_drafting")) or method in ALWAYS_PARALLEL


def resolve_method(method_id: str, extra: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The vLLM method and extra keys for a method id ("peagle" -> eagle3 + parallel_drafting)."""
    key = method_id.strip().lower()
    if key in METHOD_ALIASES:
        method, implied = METHOD_ALIASES[key]
        return method, {**implied, **extra}
    return key, dict(extra)
