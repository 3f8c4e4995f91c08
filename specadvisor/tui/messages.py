"""Textual messages between the app and its screens, in their own module so screens need not import the app.

The app posts down what changed (SweepUpdated); a screen asks up for what only the app can do
(SweepRequested: the app owns the sweep worker).
"""

from __future__ import annotations

from textual.message import Message

from specadvisor.domain import Session


class SweepUpdated(Message):
    """Posted after each sweep event is folded into the live SweepState: `changed` names what to redraw."""

    def __init__(self, changed: set[str]):
        super().__init__()
        self.changed = changed


class SweepRequested(Message):
    """A screen asks the app to run `session` (Start, capacity, resume); one already running refuses it."""

    def __init__(self, session: Session):
        super().__init__()
        self.session = session
