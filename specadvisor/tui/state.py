"""The TUI's shared state and what a screen may ask of the app, typed, below the screens.

The app owns one `TuiState` (the user's journey: hardware, model, workload, advice, the plan, the
session being run, and the services that do the work); screens read and fill it through
`AppScreen.state`. `TuiApp` declares the app's own methods a screen calls (errors, stopping a
sweep), so screens type-check without importing the app, which sits above them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

from textual.app import App
from textual.worker import Worker

from specadvisor.app.live import SweepState
from specadvisor.app.running import Runner
from specadvisor.domain import Advice, EngineInfo, HardwareProfile, ModelProfile, Session, Workload
from specadvisor.tui.protocols import PlanLike
from specadvisor.tui.services import Services

if TYPE_CHECKING:  # the store (sqlite-utils) is imported when first opened, not at TUI start-up
    from specadvisor.app.sessions import Store


@dataclass
class TuiState:
    """One user's journey through the screens, in the order the screens fill it."""

    services: Services
    model_ref: str = ""
    workload: Workload = field(default_factory=Workload)
    hardware: HardwareProfile | None = None
    model_profile: ModelProfile | None = None
    budget_s: float | None = None  # the Setup form's time budget: sizes the default plan
    budget_text: str | None = None
    parallel: str = "auto"  # Advice's p (`--parallel auto|K`): servers at once; the plan's estimate and budget count it
    form_settings: dict[str, Any] = field(default_factory=dict)  # the Setup form's sweep settings (time limit...), model units
    form_texts: dict[str, str] = field(default_factory=dict)  # what was typed in them, shown again on return
    target_gpu: str | None = None  # Setup's "Plan for GPU" (H100x8): advice, plan and export for it
    engine_cmd: list[str] | None = None  # Setup's "Engine command": the vLLM that launches (None: the one detected)
    engine: EngineInfo | None = None  # that command's probe (what `detect --engine-cmd` reads)
    endpoint: str | None = None  # Setup's "Endpoint": a running server measured as it is, nothing launched
    planned_hardware: HardwareProfile | None = None  # that GPU's hypothetical profile, once advised
    advice: Advice | None = None
    plan: PlanLike | None = None
    session: Session | None = None  # the session being (or last) run
    runner: Runner | None = None  # set while a sweep runs
    train_worker: Worker[None] | None = None  # set while a drafter trains (the Train screen's run)
    sweep_state: SweepState = field(default_factory=SweepState)
    _store: Store | None = field(default=None, repr=False)

    @property
    def store(self) -> Store:
        """Opened on first use, so the first frame does not wait for SQLite."""
        if self._store is None:
            self._store = self.services.open_store()
        return self._store

    def take_plan(self, plan: PlanLike) -> None:
        """The plan the Advice screen shows and Start runs (from Setup, or re-planned for a budget),
        its session carrying the Setup form's settings (the time limit, as `sweep --time-limit` would),
        validated like the flags."""
        plan.session.settings = plan.session.settings.replace(**self.form_settings)
        self.plan = plan
        self.session = plan.session

    @property
    def machine(self) -> HardwareProfile | None:
        """This machine as its plans launch on it: the detected hardware, served by the engine command
        typed in Setup when there is one (its probe), else the vLLM detected."""
        if self.hardware is None or self.engine_cmd is None or self.engine is None:
            return self.hardware
        return replace(self.hardware, engine=self.engine)

    @property
    def sweep_running(self) -> bool:
        return self.runner is not None

    @property
    def training(self) -> bool:
        return self.train_worker is not None and not self.train_worker.is_finished


class TuiApp(App[int]):
    """The app as its screens see it: Textual's App plus the state and the few actions only the app
    can take (it owns the sweep worker and the error modal; a sweep is asked for with the
    SweepRequested message). `SpecAdvisorApp` implements them."""

    state: TuiState
    cursor_blink: bool = True
    refresh_interval: float = 0.25  # seconds between redraws of the sweep's fast-changing parts
    chart_interval: float = 1.0  # seconds between chart redraws

    # The actions only the app can take, declared here for the screens and defined by `SpecAdvisorApp`:
    show_error: Callable[[str, BaseException], None]  # the one error modal
    # A screen's worker changed state (the event does not bubble): a failure opens the error modal. Not
    # named `on_...`: Textual would call a handler here as well as the app's.
    worker_state_changed: Callable[[Worker.StateChanged], None]
    stop_sweep: Callable[[], None]
    finished_session: Callable[[], Session | None]


T = TypeVar("T")
Prepare = Callable[[Callable[[str], None]], tuple[Services, Session]]  # `specadvisor demo`: (progress) -> (services, session)


def required(value: T | None, what: str) -> T:
    """A piece of the journey a screen can only be on after it was filled (the Advice screen opens
    after Setup advised and planned): its absence is a bug, said plainly rather than as an AttributeError."""
    if value is None:
        raise RuntimeError(f"no {what} yet: this screen opens only after Setup has filled it in")
    return value
