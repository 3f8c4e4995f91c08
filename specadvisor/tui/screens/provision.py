"""Provisioning inside the TUI: the CPU engine (and model) is installed with its progress on screen.

`specadvisor demo` opens the app at once and prepares the engine in a worker; each progress line goes
to the log here, so a first run of several minutes is visibly working, not a silent terminal before
the UI appears. When the engine is ready the app swaps in the real services and starts the sweep.
"""

from __future__ import annotations

from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Footer, Header, LoadingIndicator, RichLog, Static

from specadvisor import textsafe
from specadvisor.domain import Session
from specadvisor.settings import CPU_ENGINE_DISK
from specadvisor.tui.screens.base import AppScreen
from specadvisor.tui.services import Services
from specadvisor.tui.state import Prepare


class ProvisionScreen(AppScreen):
    class Ready(Message):
        """The engine is prepared: the app swaps in `services` (which launch it) and starts `session`."""

        def __init__(self, services: Services, session: Session) -> None:
            super().__init__()
            self.services = services
            self.session = session

    def __init__(self, prepare: Prepare, title: str = f"Preparing the CPU engine (first run: {CPU_ENGINE_DISK}, a few minutes)"):
        super().__init__()
        self.prepare = prepare
        self.heading = title
        self.lines: list[str] = []

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="provision-body", classes="panel"):
            yield Static(self.heading, id="provision-title", markup=False)
            yield LoadingIndicator(id="provision-spinner")
            yield RichLog(id="provision-log", max_lines=500, wrap=True, markup=False, highlight=False)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#provision-body").border_title = "Engine"
        self.run_prepare()

    def add_line(self, line: str) -> None:
        self.lines.append(line)
        self.query_one("#provision-log", RichLog).write(textsafe.line(line, 300))

    @work(thread=True, exclusive=True, group="provision", exit_on_error=False)
    def run_prepare(self) -> None:
        services, session = self.prepare(lambda line: self.app.call_from_thread(self.add_line, line))
        self.app.call_from_thread(self.ready, services, session)

    def ready(self, services: Services, session: Session) -> None:
        self.post_message(self.Ready(services, session))
