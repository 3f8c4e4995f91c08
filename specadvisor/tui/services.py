"""Everything the TUI asks of the rest of specadvisor, behind one injectable object.

The app never imports the probes, the advisor, the store or the runner directly: it calls these
callables. `default_services()` wires the real modules (imported lazily, so the first frame does not
wait for them): the use cases (a plan for this host, the runner for a session) are the app layer's
(`specadvisor.app`), shared with the CLI; tests pass fixed profiles and a fake runner at the same
seams. No Textual here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from specadvisor.app.running import Runner
from specadvisor.domain import (
    Advice,
    HardwareProfile,
    ModelProfile,
    Recommendation,
    Session,
    Workload,
)
from specadvisor.tui.protocols import PlanLike

if TYPE_CHECKING:  # the store (sqlite-utils) is imported when first opened, not at TUI start-up
    from specadvisor.store import Store


@dataclass
class Services:
    detect: Callable[[], HardwareProfile]
    inspect_model: Callable[[str], ModelProfile]
    advise: Callable[[HardwareProfile, ModelProfile, Workload], Advice]
    plan: Callable[..., PlanLike]  # (advice, model, hardware, workload, budget_s=None)
    predict: Callable[[Session], dict[str, float]]
    open_store: Callable[[], Store]
    make_runner: Callable[[Session, Store], Runner]
    stop_servers: Callable[[], None]
    recommend: Callable[[Session], Recommendation | None]
    rejudge: Callable[[Session], Recommendation]  # the current code's verdict on stored measurements (runs nothing)
    serve_command: Callable[[Session, Recommendation], str]
    report_markdown: Callable[[Session], str]
    report_html: Callable[[Session], str]
    export_bundle: Callable[[Session, Path], Path]
    import_bundle: Callable[[Store, Path], tuple[Session, bool]]  # (session, added: False when already stored)
    hypothetical: Callable[[str], HardwareProfile] | None = None  # "H100x8": a machine planned for, not this one


def measured_here(db_path: Path | None, model: ModelProfile, hardware: HardwareProfile) -> list[Session]:
    """Sessions measured on this machine for this model, newest first: local evidence outweighs
    published numbers (specadvisor.app.evidence, the CLI's `advise` answer too)."""
    from specadvisor.app.evidence import sessions_measured_here

    return sessions_measured_here(db_path, model.id, hardware)


def default_services(db_path: Path | None = None, server_env: dict[str, str] | None = None) -> Services:
    """The real wiring. Each callable imports its module when first called. `server_env`: the
    environment every launch gets (the demo passes the CPU engine's); None: the runner derives it."""

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
        from specadvisor.app.plan import plan as _plan

        return _plan(advice, model, hardware, workload, budget_s=budget_s, host_only=host_only, history=lambda: local_sessions(model, hardware))

    def predict(session: Session) -> dict[str, float]:
        from specadvisor.analysis.predict import confident_predictions

        return {key: p.predicted_throughput for key, p in confident_predictions(session).items() if p.arm_id}

    def open_store() -> Store:
        from specadvisor.settings import paths
        from specadvisor.store import Store

        return Store.open(db_path or paths().database)

    def make_runner(session: Session, store: Store) -> Runner:
        """The app layer's runner for a plan made on the hardware this app detected (or a resumed session)."""
        from specadvisor.app.running import RunOptions, runner_for
        from specadvisor.app.sweeps import Prepared

        return runner_for(Prepared(session, server_env=server_env), store, RunOptions(entry_point="tui", detected=session.hardware))

    def stop_servers() -> None:
        from specadvisor.engine import stop_all_servers

        stop_all_servers()

    def recommend(session: Session) -> Recommendation | None:
        if session.recommendation is not None:
            return session.recommendation
        from specadvisor.analysis.recommend import recommend as _recommend

        return _recommend(session)

    def rejudge(session: Session) -> Recommendation:
        from specadvisor.analysis.rejudge import rejudge as _rejudge

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

    def import_bundle(store: Store, path: Path) -> tuple[Session, bool]:
        from specadvisor.analysis.recommend import recommend as _recommend
        from specadvisor.store.bundle import import_bundle as _import

        return _import(store, path, judge=_recommend)  # as `sessions import`: a verdict computed once, not per view

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
