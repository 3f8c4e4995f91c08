"""Keep the servers of one wave fair to each other: start-ups that share a GPU one at a time, and
measurements that begin together.

vLLM sizes its KV cache from the GPU memory it profiles while it starts. A second server starting on
the same GPU at the same moment changes that memory under the first one's profile: on an H200 with
vLLM 0.26, two SmolLM2 servers (--gpu-memory-utilization 0.3 each) started together ended with
"Available KV cache memory: -0.86 GiB" and "No available memory for the cache blocks" for one of
them, while each started alone was fine. So servers sharing GPUs start one after another.

Staggered start-ups would then let the first server measure while the second is still compiling and
capturing CUDA graphs, which is neither "alone" nor "side by side". So every job of a wave waits at
a gate until all the wave's servers are ready (or have failed), and the wave measures together.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from specadvisor.sweep.slots import Slot


class StartupLocks:
    """One lock per GPU set that more than one slot shares; other slots start freely."""

    def __init__(self) -> None:
        self._locks: dict[tuple[int, ...], asyncio.Lock] = {}

    @contextlib.asynccontextmanager
    async def hold(self, slot: Slot | None) -> AsyncIterator[None]:
        if slot is None or not slot.shared or not slot.gpus:
            yield
            return
        lock = self._locks.setdefault(tuple(sorted(slot.gpus)), asyncio.Lock())
        async with lock:
            yield


class WaveGate:
    """Released once every job of the wave has arrived (ready to measure, or out of the wave)."""

    def __init__(self, jobs: int) -> None:
        self._waiting = jobs
        self._open = asyncio.Event()
        if jobs <= 1:
            self._open.set()

    def arrive(self) -> None:
        self._waiting -= 1
        if self._waiting <= 0:
            self._open.set()

    async def wait(self) -> None:
        await self._open.wait()

    @contextlib.asynccontextmanager
    async def member(self) -> AsyncIterator[Arrival]:
        """A job's membership: arrives exactly once, however the job ends (failure, cancellation)."""
        arrival = Arrival(self)
        try:
            yield arrival
        finally:
            arrival.arrive_once()


class Arrival:
    """What a job holds: `ready()` arrives and waits for the rest of the wave."""

    def __init__(self, gate: WaveGate) -> None:
        self._gate = gate
        self._arrived = False

    def arrive_once(self) -> None:
        if not self._arrived:
            self._arrived = True
            self._gate.arrive()

    async def ready(self) -> None:
        self.arrive_once()
        await self._gate.wait()
