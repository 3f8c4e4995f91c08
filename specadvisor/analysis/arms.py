"""How an arm is named and which arms share one server: the small vocabulary plan, runner and
predictor agree on, so that resuming a session finds the same ids it stored."""

from __future__ import annotations

import json
from typing import Any

from specadvisor.domain import Arm
from specadvisor.rulebase import registry


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
    label = _method_slug(cfg)
    if cfg.get("model"):
        label += f" ({str(cfg['model']).rstrip('/').split('/')[-1]})"
    return label


def server_key(arm: Arm) -> str:
    """Arms with the same key run on one server launch (they differ only in client concurrency)."""
    return json.dumps([arm.speculative_config, arm.server_args], sort_keys=True)


def _method_slug(cfg: dict[str, Any]) -> str:
    """The vLLM method, or the registry's first alias for a flag-defined method (eagle3 + parallel
    -> "p-eagle"): arm ids are built from it, so it must stay stable across releases."""
    method = str(cfg.get("method"))
    spec = registry.by_vllm_name(method, bool(cfg.get("parallel_drafting")))
    if spec is not None and spec.extra_config and spec.aliases and spec.extra_config.items() <= cfg.items():
        return spec.aliases[0]
    return method


# ---------------------------------------------------------------------- how an arm reads to a person


def method_display_name(method: str | None) -> str:
    """The registry's display name ("P-EAGLE") of a method id, alias or vLLM name."""
    return "no speculation" if method is None else registry.display_name(method)


def short_drafter(drafter: str | None, model: str | None = None) -> str | None:
    """A drafter's short name: its last path part, minus the target model's own name when it repeats it
    ("RedHatAI/Qwen3-8B-speculator.peagle" for Qwen/Qwen3-8B -> "speculator.peagle")."""
    if not drafter:
        return None
    name = str(drafter).rstrip("/").split("/")[-1]
    base = str(model or "").rstrip("/").split("/")[-1]
    if base and name.lower().startswith(base.lower()) and len(name) > len(base) + 1:
        name = name[len(base) :].lstrip("-_.")
    return name


def arm_label(arm: Arm, model: str | None = None, *, with_concurrency: bool = True) -> str:
    """The one label of an arm, everywhere: `P-EAGLE N=5 · speculator.peagle` (plus ` · c8` above
    concurrency 1). The display name comes from the method registry."""
    if arm.is_baseline:
        text = "baseline"
    else:
        text = f"{registry.config_label(arm.speculative_config)} N={arm.n}" if arm.n else arm.label
        drafter = short_drafter((arm.speculative_config or {}).get("model"), model)
        if drafter:
            text += f" · {drafter}"
    if with_concurrency and arm.concurrency != 1:
        text += f" · c{arm.concurrency}"
    return text
