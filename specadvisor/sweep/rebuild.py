"""A new local sweep planned from an imported session: the same arms, this machine's engine.

Used by `sweep --resume ID --rebuild`. What crosses from the bundle is decided in one place,
specadvisor.crossing (the method from the registry, N, declared numeric keys and settings
within the CLI's bounds); the engine command, server arguments, prompt file paths, the target model,
the drafter, `--adaptive` and serve commands come from this machine and the user's flags, never from
the bundle.
"""

from __future__ import annotations

from specadvisor import textsafe
from specadvisor.bench.prompts import BUILTIN_SOURCES
from specadvisor.crossing import crossing_arms, crossing_settings
from specadvisor.domain import Session, SweepSettings
from specadvisor.errors import InputError
from specadvisor.sweep.plan import SweepPlan, plan_from_methods


def rebuild_plan(
    imported: Session,
    *,
    model: str | None,
    engine_cmd: list[str],
    server_args: list[str],
    prompt_source: str,
    drafter: str | None = None,
    adaptive: bool = False,
    request_format: str = "auto",
) -> tuple[SweepPlan, list[str]]:
    """The plan and the notes to show (one line per arm dropped or key ignored). `model` is the
    user's (`--model`, or the CPU engine's): the bundle's model, a Hub id or a path its author chose,
    is never served, like its drafter; `adaptive` is the user's `--adaptive`, not the bundle's; the
    request format is the user's flag (auto: resolved when the prompts load), as the prompt path is."""
    s = imported.settings
    settings = SweepSettings.of(
        prompt_source=s.prompt_source if s.prompt_source in BUILTIN_SOURCES else prompt_source,
        request_format=request_format if request_format in ("chat", "completions") else "auto",
        engine_cmd=list(engine_cmd),
        server_args=list(server_args),
        adaptive=adaptive,
        **crossing_settings(s),
    )
    if not model:
        named = textsafe.line(imported.model or "no model", 80)
        raise InputError(
            f"a rebuild never serves a bundle's model (session {imported.id[:8]} names '{named}')",
            hint="pass --model MODEL, the model to serve here (name that one yourself if you trust it)",
        )
    target = model
    if target.startswith("-") or len(target) > 1000:
        raise InputError(f"--model {textsafe.line(target, 40)!r} is not a model name", hint="pass --model MODEL")
    plan = plan_from_methods(target, [], [], settings, baseline=True)  # a local sweep always measures its own baseline
    crossing = crossing_arms(imported, target_model=target, drafter=drafter)
    if not crossing.arms and any(not a.is_baseline for a in imported.arms):
        first = crossing.notes[0] if crossing.notes else "nothing crossed"
        raise InputError(
            f"no speculative arm of session {imported.id[:8]} can be rebuilt here ({first})", hint="pass --drafter MODEL, or plan a new sweep with --method"
        )
    for arm in crossing.arms:
        config = arm.speculative_config()
        extra = {k: v for k, v in config.items() if k not in ("method", "num_speculative_tokens")}
        plan.add_arm(arm.method.id, arm.n, extra, concurrency=arm.concurrency)
    plan.session.name = f"rebuilt from {imported.id[:8]}"
    plan.session.drafter = drafter or next((a.drafter for a in crossing.arms if a.drafter), None)
    plan.session.workload = imported.workload
    return plan, crossing.notes
