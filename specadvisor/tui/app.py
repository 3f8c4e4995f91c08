"""The specadvisor Textual app: one factory shared by `specadvisor`, `specadvisor demo` and the tests.

The app holds the user's journey (hardware, model, workload, advice, the planned session) and the
services that do the work. Every blocking job runs in a worker; one handler turns any worker error
into the error modal. Quitting during a sweep asks first and then stops the vLLM process group
itself, because thread workers cannot be cancelled.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from specadvisor.app.live import SweepState
from specadvisor.app.running import Runner
from specadvisor.domain import ArmFinished, Session, Workload
from specadvisor.errors import SpecAdvisorError
from specadvisor.tui.messages import SweepRequested, SweepUpdated
from specadvisor.tui.screens.provision import ProvisionScreen
from specadvisor.tui.screens.sweep import SweepScreen
from specadvisor.tui.services import Services
from specadvisor.tui.state import Prepare, TuiApp, TuiState
from specadvisor.tui.widgets.modals import ConfirmModal, ErrorModal

WORKER_TITLES = {
    "detect": "Hardware detection failed",
    "inspect": "Model inspection failed",
    "advise": "Advice failed",
    "sweep": "The sweep stopped",
    "export": "Export failed",
    "import": "Import failed",
    "store": "The session store failed",
    "provision": "The engine could not be prepared",
    "start": "Cannot start the sweep",
    "train-plan": "Cannot train a drafter here",
    "train": "Training stopped",
}


class SpecAdvisorApp(TuiApp):
    CSS_PATH = "app.tcss"
    TITLE = "specadvisor"
    SUB_TITLE = "speculative decoding advisor for vLLM"
    BINDINGS = [
        Binding("f1", "help", "Help"),
        Binding("f2", "go_setup", "Setup"),
        Binding("f3", "sessions", "Sessions"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(
        self,
        services: Services,
        *,
        cursor_blink: bool = True,
        start: str = "setup",
        workload: Workload | None = None,
        model_ref: str | None = None,
        sweep: Session | None = None,
        guard_signals: bool = False,
        prepare: Prepare | None = None,
    ):
        super().__init__()
        self.state = TuiState(services, model_ref=model_ref or "", workload=workload or Workload())
        self.cursor_blink = cursor_blink
        self.start = start
        self.initial_sweep = sweep  # `specadvisor demo`: open straight on this sweep
        self.prepare = prepare  # `specadvisor demo`: provision the engine inside the UI, then sweep
        self.guard_signals = guard_signals  # real runs: SIGTERM/SIGHUP must stop our vLLM servers too

    def on_mount(self) -> None:
        from specadvisor.tui.screens.sessions import SessionsScreen
        from specadvisor.tui.screens.setup import SetupScreen

        self.push_screen(SetupScreen())
        if self.start == "sessions":
            self.push_screen(SessionsScreen())
        if self.initial_sweep is not None:
            self.start_sweep(self.initial_sweep)
        elif self.prepare is not None:
            self.push_screen(ProvisionScreen(self.prepare))
        if self.guard_signals:
            self.run_worker(self._load_reaper, thread=True, name="signals", exit_on_error=False)

    def on_sweep_requested(self, message: SweepRequested) -> None:
        if self.state.sweep_running:
            self.notify("A sweep is already running.", severity="warning")
            return
        self.start_sweep(message.session)

    def on_provision_screen_ready(self, message: ProvisionScreen.Ready) -> None:
        """`specadvisor demo`: the engine is ready; from now on launches use it."""
        self.state.services = message.services
        self.pop_screen()
        self.start_sweep(message.session)

    def _load_reaper(self) -> None:
        """Import the engine layer off the UI thread (it is slow to import), then chain its signal
        handlers on the main thread, where Python requires them to be installed."""
        from specadvisor.app.engines import install_signal_handlers

        self.call_from_thread(install_signal_handlers)

    # ------------------------------------------------------------------ errors

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.worker_state_changed(event)

    def worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one place where a failed worker becomes an error modal (the app's and the screens')."""
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            title = WORKER_TITLES.get(event.worker.group, WORKER_TITLES.get(event.worker.name, "Something failed"))
            self.show_error(title, event.worker.error)

    def show_error(self, title: str, error: BaseException) -> None:
        self.push_screen(ErrorModal(title, error))

    # ------------------------------------------------------------------ navigation and commands

    def action_help(self) -> None:
        from specadvisor.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_go_setup(self) -> None:
        from specadvisor.tui.screens.setup import SetupScreen
        from specadvisor.tui.screens.train import TrainScreen

        while len(self.screen_stack) > 2 and not isinstance(self.screen, SetupScreen):
            if self.state.sweep_running and isinstance(self.screen, SweepScreen):
                self.notify("A sweep is running: stop it (x) or wait for it to finish.", severity="warning")
                return
            if self.state.training and isinstance(self.screen, TrainScreen):
                self.notify("A drafter is training: ctrl+c stops it.", severity="warning")
                return
            self.pop_screen()

    def action_sessions(self) -> None:
        from specadvisor.tui.screens.sessions import SessionsScreen

        if not isinstance(self.screen, SessionsScreen):
            self.push_screen(SessionsScreen())

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Help", "Keys and how the advisor works", self.action_help)
        yield SystemCommand("Setup", "Hardware, model and workload", self.action_go_setup)
        yield SystemCommand("Sessions", "Browse, compare, import and export saved sessions", self.action_sessions)
        yield from screen_commands(self, screen)

    def deliver_screenshot(self, filename: str | None = None, path: str | None = None, time_format: str | None = None) -> str | None:
        """Screenshots go to a folder that exists (the data folder's `screenshots`), not ~/Downloads,
        which a server or a fresh account may lack; the toast names the file."""
        if path is None:
            from specadvisor.settings import paths

            folder = paths().data / "screenshots"
            folder.mkdir(parents=True, exist_ok=True)
            path = str(folder)
        return super().deliver_screenshot(filename, path, time_format)

    # ------------------------------------------------------------------ the sweep

    def start_sweep(self, session: Session) -> None:
        """Run the session's arms in an async worker; events fold into sweep_state and reach the screen."""
        try:
            runner = self.state.services.make_runner(session, self.state.store)
        except SpecAdvisorError as err:  # e.g. the database cannot be opened: say so, keep the plan
            self.show_error("Cannot start the sweep", err)
            return
        self.state.session = session
        self.state.sweep_state = SweepState()
        self.state.sweep_state.add_arms(session.arms, session.settings)
        for result in session.results:  # a resumed session: finished arms show as done
            self.state.sweep_state.apply(ArmFinished(result=result))
        self.state.runner = runner
        self.push_screen(SweepScreen(self.state.sweep_state))
        self.run_worker(self._drive(runner), name="sweep", group="sweep", exclusive=True, exit_on_error=False)

    async def _drive(self, runner: Runner) -> None:
        try:
            async for event in runner.events():
                changed = self.state.sweep_state.apply(event)
                if changed:
                    self.post_to_sweep_screen(changed)
        finally:
            if self.state.runner is runner:
                self.state.runner = None
            if not self.state.sweep_state.finished:  # a finished sweep already said "done" with its last event
                self.post_to_sweep_screen({"stopped"})

    def post_to_sweep_screen(self, changed: set[str]) -> None:
        for screen in self.screen_stack:
            if isinstance(screen, SweepScreen):
                screen.post_message(SweepUpdated(changed))

    def finished_session(self) -> Session | None:
        """The session as it stands after the sweep: re-read from the store (the runner saved it)."""
        if self.state.session is None:
            return None
        try:
            return self.state.store.get_session(self.state.session.id)
        except Exception:  # noqa: BLE001 - fall back to what the event stream told us
            session = self.state.session.model_copy(deep=True)
            session.results = self.state.sweep_state.results()
            session.recommendation = self.state.sweep_state.recommendation
            return session

    # ------------------------------------------------------------------ quitting

    async def action_quit(self) -> None:
        if self.state.training:
            await self._quit_training()
            return
        if not self.state.sweep_running:
            self.exit(0)
            return

        def answered(stop: bool | None) -> None:
            if stop:
                self.stop_sweep()
                self.exit(0)

        self.push_screen(
            ConfirmModal(
                "A sweep is running. Stop the vLLM server and quit?\nFinished arms are saved; the session can be resumed later.",
                yes="Stop and quit",
            ),
            answered,
        )

    async def _quit_training(self) -> None:
        """Quitting while a drafter trains: asked first, then the run is stopped cleanly (its server and
        trainer stop, the record says interrupted) before the app exits."""

        async def answered(stop: bool | None) -> None:
            if stop:
                self.notify("Stopping the training run (the trainer saves its state)…", timeout=30)
                await self.stop_training()
                self.exit(0)

        self.push_screen(
            ConfirmModal(
                "A drafter is training. Stop it and quit?\nThe run is recorded as interrupted; `specadvisor train --resume ID` continues it.",
                yes="Stop and quit",
            ),
            answered,
        )

    async def stop_training(self) -> None:
        """Cancel the training run and wait until it has stopped its server and trainer."""
        worker = self.state.train_worker
        if worker is None:
            return
        worker.cancel()
        with contextlib.suppress(Exception):
            await worker.wait()
        self.state.train_worker = None

    def stop_sweep(self) -> None:
        """Cancel the runner and stop every vLLM server we launched (process groups)."""
        runner, self.state.runner = self.state.runner, None
        if runner is not None:
            with contextlib.suppress(Exception):  # stopping must go on to the servers whatever the runner does
                runner.cancel()
        self.workers.cancel_group(self, "sweep")
        self.state.services.stop_servers()


def screen_commands(app: App[Any], screen: Screen[Any]) -> Iterable[SystemCommand]:
    """Every described key of the screen as a palette command ("Advise", "Start sweep", "Import"...),
    so the palette finds what the footer offers, with the key shown beside it."""
    seen: set[str] = set()
    for item in getattr(type(screen), "BINDINGS", []):
        binding = item if isinstance(item, Binding) else Binding(*item)
        if not binding.description or binding.action in seen or binding.action.startswith("app."):
            continue
        seen.add(binding.action)
        key = app.get_key_display(Binding(binding.key.split(",")[0].strip(), binding.action))

        async def run(action: str = binding.action) -> None:
            await screen.run_action(action)

        yield SystemCommand(binding.tooltip or binding.description, f"{key} · this screen", run)


def create_app(services: Services | None = None, *, db_path: Path | None = None, **kwargs: Any) -> SpecAdvisorApp:
    """The app with real services (or the given ones): used by the CLI, the demo and the tests."""
    if services is None:
        from specadvisor.tui.services import default_services

        services = default_services(db_path)
    return SpecAdvisorApp(services, **kwargs)
