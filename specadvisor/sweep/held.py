"""Keep a wave's servers up for the look at the decision that follows it (sequential measuring,
`sweep --budget`), so that the cheap step is really cheap.

When within-run noise limits a comparison, more requests narrow it, and on servers that are still
running they cost no start-up: on the shared 2-core CPU box a start-up (~100 s) was 60% of every
side-by-side wave, and a "requests" step measured as passes on one more launch of each contender
paid it again at every look (tests/e2e/test_verdict_controls_real.py). So the runner holds the
servers of a wave that a look may follow (the plan's last wave, each round of extra launches) until
the look is done with them: more passes over the prompts on each contender's running server, the
passes starting together (the arms keep sharing the host's conditions, and every pass serves the
same prompts in the same order, so the pairing by prompt holds), or a release when the next step is
a relaunch, the level is decided, or the budget, the looks or the time limit are spent.

The extra passes are stored as more runs of the same launch (same trial, role, wave and placement,
`repeat` counting up), as passes of a planned launch already are: `figures.launches` folds them into
that one launch, so a pass is never counted as a launch (the launch-to-launch spread would shrink
for nothing: a pass on a running server does not see a new start-up's state), and the passes feed
the prompts x passes estimate of the within-run noise (`figures.estimate_noise`). With the bracket on
(the default), the held wave is the bracket's confirmation wave (the baseline and the leader launched
again side by side), so the passes go to each arm's second launch; the comparison weighs an arm's
launches by their precision (`figures.Side`), so they narrow the arm's whole within-run share. A pass
the time limit cuts is stored as a stopped run and counted nowhere (`sweep/time_limit.py`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterable
from dataclasses import dataclass
from typing import Any

from specadvisor.sweep.runs import RunWhere
from specadvisor.sweep.scheduler import Job
from specadvisor.sweep.servers import ServerHandle


@dataclass
class Parked:
    """A job's server, still running after its passes: where it ran, and how many passes it measured."""

    job: Job
    server: ServerHandle
    where: RunWhere
    startup_s: float
    passes: int

    @property
    def running(self) -> bool:
        return bool(getattr(self.server, "running", False))


class HeldWave:
    """The jobs of one wave, run as tasks that park their servers once measured (`park`) and stop them
    when released (`close`) or cancelled (`abort`). `ready()` returns once every job has parked its
    server or ended without one (a failed start-up)."""

    def __init__(self, jobs: list[Job]) -> None:
        self._pending = {id(job) for job in jobs}
        self._arrived = asyncio.Event()
        self._released = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self.parked: list[Parked] = []
        if not self._pending:
            self._arrived.set()

    def start(self, jobs: Iterable[Coroutine[Any, Any, None]]) -> None:
        self._tasks = [asyncio.create_task(job) for job in jobs]

    async def ready(self) -> None:
        """Every job has parked its server or ended (the runner's job wrapper leaves the wave however
        the job ends); a job that ended with an exception raises it here, as a gather would."""
        await self._arrived.wait()
        for task in self._tasks:
            if task.done() and not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]  # not None: checked above

    async def park(self, parked: Parked) -> None:
        """Called by a job once measured: its server stays up until the wave is released."""
        self.parked.append(parked)
        self.leave(parked.job)
        await self._released.wait()

    def leave(self, job: Job) -> None:
        """A job is done with the wave (parked, or ended without a server); counted once."""
        self._pending.discard(id(job))
        if not self._pending:
            self._arrived.set()

    def serving(self, arm_ids: Iterable[str]) -> list[Parked] | None:
        """The running servers that measure `arm_ids`, one per server, or None unless every arm has one."""
        found: list[Parked] = []
        for arm_id in arm_ids:
            held = next((p for p in self.parked if p.running and any(a.id == arm_id for a in p.job.group)), None)
            if held is None:
                return None
            if held not in found:
                found.append(held)
        return found

    async def close(self) -> None:
        """Release the servers and wait until every job has stopped its own."""
        self._released.set()
        await asyncio.gather(*self._tasks)

    async def abort(self) -> None:
        """Cancel the jobs (a user's cancel, the time limit): each stops its server on the way out."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
