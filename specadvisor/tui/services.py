"""Everything the TUI asks of the rest of specadvisor, behind one injectable object.

Each callable is a use case of the application layer (`specadvisor.app`), the same the CLI calls;
`default_services()` binds the database and the launch environment to them. The app reaches
nothing else of the core: tests pass fixed profiles and a fake runner at the same seams. No Textual here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specadvisor.app.running import Runner
from specadvisor.app.train_steps import TrainSteps
from specadvisor.domain import Advice, EngineInfo, HardwareProfile, ModelProfile, Recommendation, Session, Workload
from specadvisor.tui.protocols import PlanLike

if TYPE_CHECKING:  # the store (sqlite-utils) is imported when first opened, not at TUI start-up
    from specadvisor.app.plan import ExportedPlan
    from specadvisor.app.sessions import Store


@dataclass
class Services:
    detect: Callable[[], HardwareProfile]
    inspect_model: Callable[[str], ModelProfile]
    advise: Callable[[HardwareProfile, ModelProfile, Workload], Advice]
    plan: Callable[..., PlanLike]  # (advice, model, hardware, workload, budget_s=None, host_only=True, parallel="auto")
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
    export_plan: Callable[..., ExportedPlan]  # (advice, model, hardware, workload, path, store, shown=plan on screen, budget_s=)
    hypothetical: Callable[[str], HardwareProfile] | None = None  # "H100x8": a machine planned for, not this one
    probe_engine: Callable[[list[str]], EngineInfo] | None = None  # the vLLM behind Setup's engine command
    attach_plan: Callable[[str, Workload, dict[str, Any]], PlanLike] | None = None  # a running server's plan (Setup's endpoint)
    launch_problem: Callable[[Session], str | None] = lambda session: None  # why Start cannot launch (asked before it does)
    train: TrainSteps = field(default_factory=TrainSteps)  # training a drafter, step by step (the Train screen)


def default_services(db_path: Path | None = None, server_env: dict[str, str] | None = None) -> Services:
    """The real wiring: the app layer's use cases on the database at `db_path`. Each imports its
    modules when first called, so the first frame does not wait for them. `server_env`: the
    environment every launch gets (the demo passes the CPU engine's); None: the runner derives it."""
    from specadvisor.app import advice, engines, evidence, machines, models, plan, reports, running, sessions
    from specadvisor.app.sweeps import Prepared

    def make_runner(session: Session, store: Store) -> Runner:
        """The runner for a plan made on the hardware this app detected (or a resumed session)."""
        return running.runner_for(Prepared(session, server_env=server_env), store, running.RunOptions(entry_point="tui", detected=session.hardware))

    def make_plan(
        chosen: Advice,
        model: ModelProfile,
        hardware: HardwareProfile,
        workload: Workload,
        budget_s: float | None = None,
        host_only: bool = True,
        parallel: str = "auto",
    ) -> PlanLike:
        return plan.plan(
            chosen,
            model,
            hardware,
            workload,
            budget_s=budget_s,
            host_only=host_only,
            history=lambda: evidence.sessions_measured_here(db_path, model.id, hardware),
            parallel=parallel,
        )

    def serve_command(session: Session, rec: Recommendation) -> str:
        from specadvisor.app.views import recommended_command

        return recommended_command(session, rec) or ""

    def predict(session: Session) -> dict[str, float]:
        from specadvisor.app.views import predictions

        return {key: p.predicted_throughput for key, p in predictions(session).items() if p.arm_id}

    return Services(
        detect=machines.detect,
        inspect_model=models.inspect_model,
        advise=lambda hardware, model, workload: advice.advise(hardware, model, workload, db=db_path),
        plan=make_plan,
        predict=predict,
        open_store=lambda: sessions.open_store(db_path),
        make_runner=make_runner,
        stop_servers=engines.stop_all_servers,
        recommend=sessions.recommendation,
        rejudge=sessions.rejudge,
        serve_command=serve_command,
        report_markdown=lambda session: reports.report(session, "md"),
        report_html=lambda session: reports.report(session, "html"),
        export_bundle=lambda session, path: sessions.export(session, path),
        import_bundle=lambda store, path: sessions.import_into(store, path),
        export_plan=plan.export_for_gpu,
        hypothetical=machines.hypothetical,
        probe_engine=machines.engine,
        attach_plan=plan.attach,
        launch_problem=engines.launch_problem,
    )
