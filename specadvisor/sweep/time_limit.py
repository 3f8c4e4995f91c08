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
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from specadvisor.domain import Arm, MeasurementWarning, Session, SweepEvent

if TYPE_CHECKING:
    from specadvisor.sweep.recorder import Recorder
    from specadvisor.sweep.runs import RunWhere

Emit = Callable[[SweepEvent], None]

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


class TimeLimit:
    """One run's limit, as the runner's parts ask it: did it fire, how long is left, and what did it
    cut (arms stopped before any measurement, passes of measured arms cut mid-pass)."""

    def __init__(self, started_at: float | None = None) -> None:
        self.seconds: float | None = None  # the run's limit (settings.time_limit_s when it starts); None: none
        self.started_at = started_at  # time.monotonic() when the sweep began, if before the runner
        self.watchdog: Watchdog | None = None  # set when the run starts (it needs the running loop)
        self.arms_stopped = 0
        self.passes_cut = 0

    def start(self, seconds: float | None) -> None:
        """Count `seconds` from here, or from when the sweep began (an endpoint identified first): downloads included."""
        self.seconds = seconds
        self.watchdog = Watchdog(seconds, started_at=self.started_at)

    @property
    def fired(self) -> bool:
        return self.watchdog is not None and self.watchdog.fired and self.seconds is not None

    def seconds_left(self) -> float | None:
        return self.watchdog.seconds_left() if self.watchdog is not None else None

    async def run(self, launching: Coroutine[Any, Any, None], emit: Emit, on_fired: Callable[[], object]) -> None:
        """Every launch of the sweep in one task the limit cancels: the jobs in flight record their
        arms as stopped and stop their servers, and no wave starts after it (`on_fired` then keeps
        what was counted). A user's cancel still propagates."""
        assert self.watchdog is not None, "start() first"
        watchdog = self.watchdog
        task = asyncio.create_task(launching)
        limit = limit_text(self.seconds) if self.seconds is not None else ""
        watchdog.guard(task, lambda: emit(MeasurementWarning(arm_id=None, message=f"time limit of {limit} reached: stopping the launches in flight")))
        try:
            await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not watchdog.fired or (current is not None and current.cancelling()):
                raise
            on_fired()
        finally:
            watchdog.close()
            if not task.done():  # cancelled from outside while waiting: wait for its clean-up
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    def stop_unfinished(self, arms: list[Arm], recorder: Recorder, emit: Emit, where: RunWhere) -> None:
        """The arms of a launch the limit cut before their run started (its server is stopped by now)."""
        assert self.seconds is not None
        for arm in arms:
            self.arms_stopped += 1
            recorder.fail(arm, stopped_reason(self.seconds), None, emit, where=where)

    def record_unlaunched(self, session: Session, recorder: Recorder, emit: Emit) -> int:
        """The arms the limit left without any run: recorded as skipped with the reason, so the
        stored session is complete (and is not resumed as unfinished)."""
        assert self.seconds is not None
        reason = not_launched_reason(self.seconds)
        left = [arm for arm in session.arms if session.result_for(arm.id) is None]
        for arm in left:
            recorder.skip(arm, reason, emit)
        return len(left)
