"""Use case `demo`: SmolLM2 on the CPU engine, the baseline and n-gram at a few N on HumanEval
prompts. The headless demo and the TUI demo plan the same session, as `start_sweep` would."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from specadvisor.app.sweeps import Prepared, SweepRequest, plan_sweep

if TYPE_CHECKING:
    from specadvisor.domain import HardwareProfile
    from specadvisor.engine.cpu import CpuEngine

DEMO_PROMPTS = "humaneval"


def demo_method() -> tuple[str, dict[str, Any]]:
    """The model-free method the CPU engine serves (n-gram) and its starting lookup sizes, from the registry."""
    from specadvisor.rulebase import registry

    spec = registry.model_free("cpu")
    return spec.id, dict(spec.default_config)


def demo_request(n_values: list[int], num_prompts: int, output_len: int, *, entry_point: str = "demo") -> SweepRequest:
    """What the demo measures: the sweep command's `--cpu` sweep with the demo's choices."""
    from specadvisor.domain import SweepSettings

    return SweepRequest(
        methods=(demo_method(),),
        n_values=tuple(n_values),
        settings=SweepSettings.of(prompt_source=DEMO_PROMPTS, num_prompts=num_prompts, output_len=output_len),
        cpu=True,
        name="demo",
        entry_point=entry_point,
    )


def demo(engine: CpuEngine, n_values: list[int], num_prompts: int, output_len: int, *, hardware: HardwareProfile | None = None) -> Prepared:
    """The demo's planned session on the (provisioned) CPU engine, tagged as a code workload
    (HumanEval prompts); the TUI and `demo --headless` run the same one. `hardware`: this host as
    already detected (the TUI's), else it is detected when the session runs."""
    from specadvisor.domain import WorkloadKind

    prepared = plan_sweep(demo_request(n_values, num_prompts, output_len), engine)
    prepared.session.workload = WorkloadKind.code
    if hardware is not None:
        prepared.session.hardware = hardware
    return prepared
