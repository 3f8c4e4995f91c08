"""The sweep's hard time limit (`sweep --time-limit MIN`): total wall-clock time for one run of the
runner, from its start (checkpoint downloads included) to its verdict.

`--budget` only decides whether sequential measuring starts another look; nothing in it stops a slow
arm or a long plan. The limit does: when it is reached the launches in flight are cancelled (their
servers stopped by the runner's own clean-up), the run each was measuring is stored as a stopped
run (`STOPPED_RUN`, with the requests it completed and the reason in one line, `STOPPED`) whether it
was an arm's first run or one more pass over the prompts on a running server, the arms whose run had
not started are recorded as stopped, no launch starts after it, and the verdict is taken from what was measured, with the
limit named in it (the runner records the stop, `domain.SweepStop`; `analysis/stops.py` puts it in the verdict). A resumed sweep gets the limit
afresh: it bounds one run, not the sum of runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

STOPPED = "stopped at the time limit"
STOPPED_RUN = "stopped"  # RunRecord.status of a run the limit cut: stored, and not a measurement (figures read "ok" and "stopped_early")


def limit_text(seconds: float) -> str:
    """The limit as the user gave it (minutes), for the one-line reasons."""
    minutes = seconds / 60
    return f"{minutes:g} min" if minutes >= 1 else f"{seconds:g} s"


def stopped_reason(seconds: float, completed: int | None = None, planned: int = 0) -> str:
    """The reason recorded on a run cut off mid-pass (`completed` None: its server never started measuring).
    A cut pass served only the prompts it reached, not the prompt set a full pass serves: it is kept
    as a stopped run and left out of every figure (its run total would compare a subset of the prompts
    with full passes, and the measurement hands its per-request records over only at a pass's end)."""
    head = f"{STOPPED} ({limit_text(seconds)})"
    if completed is None:
        return f"{head}: its server was stopped and the run discarded"
    of = f" of {planned}" if planned else ""
    return f"{head} after {completed}{of} requests of its pass: stored as a stopped run, left out of the figures (a partial pass is not the same prompts)"


def not_launched_reason(seconds: float) -> str:
    """The reason recorded on an arm the limit left unlaunched."""
    return f"not launched: the sweep reached its time limit ({limit_text(seconds)})"


class Watchdog:
    """Cancels one task at a deadline on the running loop's clock and remembers that it did, so the
    runner can tell the limit from a user's cancel."""

    def __init__(self, seconds: float | None, loop: asyncio.AbstractEventLoop | None = None, started_at: float | None = None):
        """`started_at`: when the sweep began on the loop's clock (time.monotonic), when work before
        the runner counts too (an endpoint identified first); else now."""
        self.seconds = seconds
        self._loop = loop or asyncio.get_running_loop()
        start = self._loop.time() if started_at is None else min(started_at, self._loop.time())
        self.deadline = None if seconds is None else start + seconds
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
