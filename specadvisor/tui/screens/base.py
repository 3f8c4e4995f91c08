"""The base of every screen: worker state changes go to the app's one error handler.

Worker.StateChanged does not bubble in Textual, so without this a failed probe or export started by
a screen would vanish silently instead of opening the error modal.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.worker import Worker


class AppScreen(Screen):
    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.app.on_worker_state_changed(event)
