"""A new local sweep planned from an imported session: the same arms, this machine's engine.

Used by `sweep --resume ID --rebuild`. Only data crosses over from the bundle (method, N, numeric
speculative-config keys, the drafter id, measurement settings); the engine command, server
arguments, prompt file paths and serve commands come from this machine, never from the bundle.
"""

from __future__ import annotations

from typing import Any

from specadvisor.bench.prompts import BUILTIN_SOURCES
from specadvisor.domain import Session, SweepSettings
from specadvisor.errors import InputError
from specadvisor.sweep.plan import SweepPlan, plan_from_methods

# Speculative-config string values that name a model are kept (vLLM downloads weights, it does not
# run code without --trust-remote-code, which a bundle cannot add); every other string is dropped.
_STRING_KEYS_KEPT = {"model", "method"}


def rebuild_plan(imported: Session, *, model: str | None, engine_cmd: list[str], server_args: list[str], prompt_source: str) -> SweepPlan:
    s = imported.settings
    settings = SweepSettings(
        prompt_source=s.prompt_source if s.prompt_source in BUILTIN_SOURCES else prompt_source,
        num_prompts=s.num_prompts,
        output_len=s.output_len,
        temperature=s.temperature,
        seed=s.seed,
        warmup=s.warmup,
        trials=s.trials,
        concurrency=list(s.concurrency),
        request_rate=s.request_rate,
        engine_cmd=list(engine_cmd),
        server_args=list(server_args),
        adaptive=s.adaptive,
        slo_tpot_ms=s.slo_tpot_ms,
        slo_ttft_ms=s.slo_ttft_ms,
    )
    target = model or imported.model
    if not target or target.startswith("-"):
        raise InputError("the imported session names no usable model", hint="pass --model MODEL")
    plan = plan_from_methods(target, [], [], settings, baseline=True)  # a local sweep always measures its own baseline
    for arm in imported.arms:
        if arm.is_baseline:
            continue
        config = arm.speculative_config or {}
        method = config.get("method") or arm.method
        if not isinstance(method, str) or not method:
            continue
        n = arm.n if arm.n is not None else config.get("num_speculative_tokens")
        plan.add_arm(method, n if isinstance(n, int) else None, _data_only(config), concurrency=arm.concurrency)
    plan.session.name = f"rebuilt from {imported.id[:8]}"
    plan.session.drafter = imported.drafter
    plan.session.workload = imported.workload
    return plan


def _data_only(config: dict[str, Any]) -> dict[str, Any]:
    return {
        key: value
        for key, value in config.items()
        if key not in ("method", "num_speculative_tokens")
        and (isinstance(value, (int, float, bool)) or (key in _STRING_KEYS_KEPT and isinstance(value, str) and not value.startswith("-")))
    }
