"""Use case `plan`: the default sweep plan for this host (or for a GPU machine planned for) from
the advice, checked against what the host can serve and sized to a time budget."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specadvisor.app import engine_env

if TYPE_CHECKING:
    from specadvisor.domain import Advice, HardwareProfile, ModelProfile, Session, Workload
    from specadvisor.store import Store
    from specadvisor.sweep.plan import SweepPlan


def plan(
    advice: Advice,
    model: ModelProfile,
    hardware: HardwareProfile,
    workload: Workload,
    *,
    budget_s: float | None = None,
    host_only: bool = True,
    history: Callable[[], list[Session]] = list,
    parallel: str = "auto",
) -> SweepPlan:
    """The plan for this host (a CPU-only host measures what it can), sized to the budget with costs
    measured here when `history` (sessions measured here) has them; host_only=False plans for a GPU
    machine. `parallel` (`--parallel auto|K`, the TUI's p): servers at once, which the budget counts."""
    from specadvisor.analysis.costs import measured_costs
    from specadvisor.app.hostfit import fit_to_host
    from specadvisor.domain import SweepSettings
    from specadvisor.engine.extras import installed_distributions
    from specadvisor.sweep.plan import plan_from_advice
    from specadvisor.sweep.slots import slots_at_once

    cpu = engine_env.cpu_engine_for(hardware) if host_only else None
    settings = SweepSettings.of(
        prompt_source=workload.prompt_source or "humaneval",
        request_format="auto",  # what `vllm bench serve` does with these prompts, recorded when they load
        num_prompts=workload.num_prompts,
        output_len=workload.output_len,
        temperature=workload.temperature,
        concurrency=list(workload.concurrency_levels or [workload.concurrency]),
        engine_cmd=(list(cpu.engine_cmd) if cpu else list(hardware.engine.command)) if host_only else [],
        server_args=list(cpu.server_args) if cpu else [],
        parallel_choice=parallel,
    )
    fit = fit_to_host(
        advice, hardware, model,
        installed=installed_distributions(settings.engine_cmd) if host_only else None,
        server_args=settings.server_args, server_env=dict(cpu.env) if cpu else {},
        output_len=workload.output_len, concurrency=max(settings.concurrency),
    )  # fmt: skip
    try:
        measured = history() if host_only else []
    except Exception:  # noqa: BLE001 - no history is no reason to refuse a plan
        measured = []
    costs = measured_costs(measured, cpu_only=fit.cpu_only and host_only)
    at_once, share = slots_at_once(parallel, len(hardware.gpus), advice.tensor_parallel_size or 1)
    result = plan_from_advice(
        advice, model=model.path or model.id, settings=settings, budget_s=budget_s,
        candidates=fit.measurable if host_only else None, costs=costs, slots_at_once=at_once, slot_share=share,
    )  # fmt: skip
    result.host_note = fit.note() if host_only else fit.package_note()
    result.host_warnings = fit.memory_warnings
    result.host_headlines = fit.memory_headlines
    result.planned_for = hardware.gpu_label if hardware.hypothetical else ""
    session = result.session
    session.hardware = hardware
    session.hardware_fingerprint = hardware.fingerprint()
    session.model_profile = model
    session.workload = workload.kind
    return result


def attach(url: str, workload: Workload, settings: dict[str, Any] | None = None) -> SweepPlan:
    """The plan for a running server (the TUI's Endpoint field, as `sweep --endpoint`): identified
    now (its version, served model and speculative config, within the identification deadline), one
    arm per concurrency level, nothing launched. The session serves under the server's own model name."""
    from specadvisor.app.sweeps import SweepRequest, attach_endpoint
    from specadvisor.domain import SweepSettings
    from specadvisor.redact import redact_text
    from specadvisor.sweep.plan import SweepPlan

    from_workload = {
        "prompt_source": workload.prompt_source or "humaneval",
        "num_prompts": workload.num_prompts,
        "output_len": workload.output_len,
        "temperature": workload.temperature,
        "concurrency": list(workload.concurrency_levels or [workload.concurrency]),
    }
    asked = SweepSettings.of(**{**from_workload, **(settings or {}), "endpoint": url})
    prepared = attach_endpoint(SweepRequest(settings=asked, workload=workload.kind.value))
    info = prepared.endpoint_info
    result = SweepPlan(session=prepared.session, startup_estimate_s=0.0, estimate_source="a running server: no start-ups")
    config = prepared.session.arms[0].label.split(" at ")[0] if prepared.session.arms else "running server"
    served = f", serving {info.served_model}" if info is not None and info.served_model else ""
    shown = redact_text(url)
    result.host_note = "\n".join(
        [f"Measures the server at {shown} as it runs ({config}{served}): nothing is launched, so the plan cannot be edited.", *prepared.notes]
    )
    return result


def builtin_prompt_sets() -> tuple[str, ...]:
    """The prompt sets `--prompts NAME` knows (anything else is a file)."""
    from specadvisor.bench.prompts import BUILTIN_SOURCES

    return tuple(BUILTIN_SOURCES)


def default_output_len(source: str | None) -> int:
    """The output length a prompt set is measured at when none is asked (its own, else 256)."""
    from specadvisor.bench.prompts import default_output_len as own

    return own(source)


@dataclass(frozen=True)
class Estimate:
    """What a planned sweep will cost in time, and where the figures come from."""

    arms: int
    to_measure: int  # arms without a result yet (a resumed sweep skips the others)
    launches: int  # server launches of the full grid
    seconds: float
    source: str  # measured here (start-ups, request times) or the GPU/CPU defaults


def estimate(session: Session, store: Store) -> Estimate:
    """The same estimate the TUI's plan shows (analysis.costs): start-ups and per-stream rates
    measured by this machine's earlier sweeps when the store has them, else the defaults of a GPU
    or a CPU-only host. `session.hardware` is this machine as detected when the runner was built."""
    from specadvisor.analysis.costs import measured_costs
    from specadvisor.app.advice import measured_in
    from specadvisor.sweep.plan import SweepPlan
    from specadvisor.sweep.slots import slots_at_once

    history = [s for s in measured_in(store, session.model, session.hardware) if s.id != session.id]
    costs = measured_costs(history, cpu_only=not session.hardware.gpus)
    tp = session.advice.tensor_parallel_size if session.advice else 1
    at_once, share = slots_at_once(session.settings.parallel_choice, len(session.hardware.gpus), tp or 1)
    plan = SweepPlan(
        session=session,
        startup_estimate_s=costs.startup_s,
        tokens_per_s_estimate=costs.tokens_per_s,
        estimate_source=costs.source,
        slots=at_once,
        slot_share=share,
    )
    todo = [a for a in session.arms if session.result_for(a.id) is None]
    return Estimate(len(session.arms), len(todo), plan.launches(), plan.estimate_seconds(), costs.source)


@dataclass(frozen=True)
class ExportedPlan:
    """A plan for a GPU machine: saved here as a planned session, written as serve-params."""

    session: Session
    written: Path
    handoff: tuple[str, str, str]  # export it here, import it there, run it there
    launches: int = 0  # server launches of the plan written
    seconds: float = 0.0  # its time estimate (the figure the plan panel shows)


def export_for_gpu(
    advice: Advice,
    model: ModelProfile,
    hardware: HardwareProfile,
    workload: Workload,
    path: Path,
    store: Store,
    *,
    shown: SweepPlan | None = None,
    budget_s: float | None = None,
) -> ExportedPlan:
    """The plan for a machine planned for (`hardware`, hypothetical; `advice` for it), written as
    `vllm bench sweep serve --serve-params` JSON and saved here, so it can be exported and run there
    (an imported plan runs as a new session there). `shown`: the plan on screen for that machine, its
    edits and budget trim kept, exported as it is (the plan you see is the plan you get); else planned
    for it now within `budget_s` (None: every advised method over its grid)."""
    from specadvisor.fileio import write_atomic
    from specadvisor.report.serve_params import serve_params
    from specadvisor.trust import handoff_commands

    full = shown if shown is not None else plan(advice, model, hardware, workload, budget_s=budget_s, host_only=False)
    session = full.session
    session.name = session.name or f"plan for {hardware.gpu_label}"
    written = write_atomic(path, json.dumps(serve_params(session), indent=2) + "\n")
    store.save_session(session)
    export, load, run = handoff_commands(session, f"specadvisor-plan-{session.id[:8]}.json")
    return ExportedPlan(session, written, (export, load, run), full.launches(), full.estimate_seconds())
