"""Textual messages the app posts to its screens, in their own module so screens need not import the app."""

from __future__ import annotations

from textual.message import Message


class SweepUpdated(Message):
    """Posted after each sweep event is folded into the live SweepState: `changed` names what to redraw."""

    def __init__(self, changed: set[str]):
        super().__init__()
        self.changed = changed
