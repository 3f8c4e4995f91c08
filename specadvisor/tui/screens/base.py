"""The base of every screen: the app typed as `TuiApp`, its shared state, and worker errors to its one handler.

Worker.StateChanged does not bubble in Textual, so without the handler here a failed probe or
export started by a screen would vanish silently instead of opening the error modal.
"""

from __future__ import annotations

from textual import getters
from textual.screen import Screen
from textual.worker import Worker

from specadvisor.tui.state import TuiApp, TuiState


class AppScreen(Screen[None]):
    app = getters.app(TuiApp)  # the one place a screen's app is narrowed (Textual checks it at run time)

    @property
    def state(self) -> TuiState:
        return self.app.state

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.app.worker_state_changed(event)
