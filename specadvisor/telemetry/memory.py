"""Before a launch: is there room on the arm's GPUs? Wait for the previous arm's memory, name strangers.

vLLM refuses to start when free memory is below --gpu-memory-utilization x total, and the memory of
a server that just stopped takes a few seconds to come back. So we poll: enough free memory ends
the wait; memory held by a process that is not ours (not a server we launched, not its children)
ends it with an error naming that process once a short grace has passed (a container tearing down
looks foreign for a moment); otherwise we wait up to a bound, reporting progress on every poll.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from specadvisor.telemetry.gpus import Holder

DEFAULT_UTILIZATION = 0.9  # vLLM's --gpu-memory-utilization default


@dataclass
class MemoryCheck:
    ok: bool
    waited_s: float
    need_mib: dict[int, float]
    free_mib: dict[int, float | None]
    holders: list[Holder] = field(default_factory=list)
    foreign: list[Holder] = field(default_factory=list)
    polls: int = 0
    reason: str = ""  # why it is not ok: "held" (by a foreign process) or "timeout"

    def message(self) -> str:
        short = [g for g in self.need_mib if (self.free_mib.get(g) or 0) < self.need_mib[g]]
        gpus = "; ".join(f"GPU {g}: {_gib(self.free_mib.get(g))} free, {_gib(self.need_mib[g])} needed" for g in short)
        if self.reason == "held":
            return f"GPU memory is held by another process: {', '.join(h.describe() for h in self.foreign)} ({gpus})"
        held = f"; still held by {', '.join(h.describe() for h in self.holders)}" if self.holders else "; no process is listed (another container?)"
        return f"GPU memory was not released within {self.waited_s:.0f} s ({gpus}{held})"


def _gib(mib: float | None) -> str:
    return "unknown" if mib is None else f"{mib / 1024:.1f} GiB"


def need_per_gpu(reader: Any, gpus: list[int], utilization: float | None, estimate_mib: float | None = None) -> dict[int, float]:
    """What vLLM will ask for on each GPU: utilization x total (its start-up check), at least the model's estimate."""
    need = {}
    for gpu in gpus:
        total = reader.memory(gpu)[1]
        share = (utilization or DEFAULT_UTILIZATION) * total if total else 0.0
        need[gpu] = max(share, estimate_mib or 0.0)
    return need


def is_ours(pid: int, own_groups: set[int], me: int | None = None) -> bool:
    """True for processes of servers we launched (same process group) and our own descendants;
    a pid that has exited is "ours" too: its memory is on its way back."""
    me = os.getpid() if me is None else me
    try:
        if os.getpgid(pid) in own_groups:
            return True
    except (ProcessLookupError, PermissionError):
        return True
    except OSError:
        return False
    try:
        ppid = pid
        for _ in range(64):
            with open(f"/proc/{ppid}/stat") as handle:
                ppid = int(handle.read().rsplit(")", 1)[1].split()[1])
            if ppid == me:
                return True
            if ppid <= 1:
                return False
    except (OSError, ValueError, IndexError):
        return False
    return False


async def wait_for_memory(
    reader: Any,
    need_mib: dict[int, float],
    *,
    timeout_s: float = 120.0,
    poll_s: float = 1.0,
    foreign_grace_s: float = 10.0,
    ours: Callable[[int], bool] = lambda pid: False,
    on_wait: Callable[[MemoryCheck], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], Any] = asyncio.sleep,
) -> MemoryCheck:
    """Poll until every GPU in `need_mib` has that much free; see the module docstring for the rules."""
    t0 = clock()
    polls = 0
    while True:
        polls += 1
        free = {g: reader.memory(g)[2] for g in need_mib}
        waited = round(clock() - t0, 2)
        short = [g for g, need in need_mib.items() if free[g] is not None and free[g] < need]
        check = MemoryCheck(ok=not short, waited_s=waited, need_mib=dict(need_mib), free_mib=free, polls=polls)
        if not short:
            return check
        check.holders = [h for g in short for h in reader.holders(g)]
        check.foreign = [h for h in check.holders if not ours(h.pid)]
        if check.foreign and waited >= foreign_grace_s:
            check.reason = "held"
            return check
        if waited >= timeout_s:
            check.reason = "timeout"
            return check
        if on_wait is not None:
            on_wait(check)
        await sleep(poll_s)
