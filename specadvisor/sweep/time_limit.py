"""The sweep's hard time limit (`sweep --time-limit MIN`): total wall-clock time for one run of the
runner, from its start (checkpoint downloads included) to its verdict.

`--budget` only decides whether sequential measuring starts another look; nothing in it stops a slow
arm or a long plan. The limit does: when it is reached the launches in flight are cancelled (their
servers stopped by the runner's own clean-up), their arms are recorded as stopped with one line
(`STOPPED`), no launch starts after it, and the verdict is taken from what was measured, with the
limit named in its reasons (and in the verdict when it is undecided). A resumed sweep gets the limit
afresh: it bounds one run, not the sum of runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from specadvisor.domain import Recommendation

STOPPED = "stopped at the time limit"


def limit_text(seconds: float) -> str:
    """The limit as the user gave it (minutes), for the one-line reasons."""
    minutes = seconds / 60
    return f"{minutes:g} min" if minutes >= 1 else f"{seconds:g} s"


def stopped_reason(seconds: float) -> str:
    """The reason recorded on an arm cut off mid-launch."""
    return f"{STOPPED} ({limit_text(seconds)}): its server was stopped and the run discarded"


def not_launched_reason(seconds: float) -> str:
    """The reason recorded on an arm the limit left unlaunched."""
    return f"not launched: the sweep reached its time limit ({limit_text(seconds)})"


def annotate(rec: Recommendation, seconds: float, stopped: int, unlaunched: int) -> None:
    """The verdict names the limit: a reason always, and the verdict itself when it cannot decide."""
    cut = ", ".join(part for part in (f"{stopped} arm(s) stopped mid-run" if stopped else "", f"{unlaunched} not launched" if unlaunched else "") if part)
    note = f"the sweep stopped at its time limit of {limit_text(seconds)}" + (f" ({cut})" if cut else "")
    rec.reasons = [*rec.reasons, f"{note}: the verdict uses only what was measured before it"]
    if rec.decision in ("undecided", ""):
        rec.verdict = f"{rec.verdict or 'undecided'} ({note})"


class Watchdog:
    """Cancels one task at a deadline on the running loop's clock and remembers that it did, so the
    runner can tell the limit from a user's cancel."""

    def __init__(self, seconds: float | None, loop: asyncio.AbstractEventLoop | None = None):
        self.seconds = seconds
        self._loop = loop or asyncio.get_running_loop()
        self.deadline = None if seconds is None else self._loop.time() + seconds
        self.fired = False
        self._handle: asyncio.TimerHandle | None = None

    def guard(self, task: asyncio.Task[Any], on_fire: Callable[[], None] | None = None) -> None:
        """Cancel `task` at the deadline (at once when it has passed already)."""
        if self.deadline is None:
            return

        def fire() -> None:
            if task.done():
                return
            self.fired = True
            if on_fire is not None:
                on_fire()
            task.cancel()

        self._handle = self._loop.call_at(self.deadline, fire)

    def seconds_left(self) -> float | None:
        """Time until the deadline (None without a limit)."""
        return None if self.deadline is None else max(0.0, self.deadline - self._loop.time())

    def close(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
