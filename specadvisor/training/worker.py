"""The training worker as a child process: started in the engine's Python, read as JSON events.

The worker (`engine_side/train_worker.py`) writes one JSON object per line to a pipe of its own, so
its events never mix with what Speculators and torch print (that goes to the worker's log file).
It runs in its own process group, gets the parent-death signal like every launched server, and is
stopped with SIGINT first: Speculators then saves an `interrupted` checkpoint a resume continues from.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from specadvisor.engine import reaper
from specadvisor.engine.server import open_private_log
from specadvisor.engine.speculators_env import TrainingPython

WORKER_SCRIPT = Path(__file__).with_name("engine_side") / "train_worker.py"
PLUGIN_FOLDER = Path(__file__).with_name("engine_side")
_MAX_LINE = 1024 * 1024


class TrainWorker:
    """One run of the worker: `async for event in worker.events()`, then `await worker.wait()`."""

    def __init__(self, python: TrainingPython, spec_path: Path, log_path: Path, env: dict[str, str] | None = None):
        self.python = python
        self.spec_path = spec_path
        self.log_path = log_path
        self.extra_env = env or {}
        self.returncode: int | None = None
        self._proc: asyncio.subprocess.Process | None = None
        self._reader: asyncio.StreamReader | None = None

    async def start(self) -> None:
        read_fd, write_fd = os.pipe()
        env = self.python.env()
        env.update(self.extra_env)
        env["PYTHONUNBUFFERED"] = "1"
        log = open_private_log(self.log_path, append=True)
        try:
            self._proc = await asyncio.create_subprocess_exec(
                str(self.python.python),
                str(WORKER_SCRIPT),
                str(self.spec_path),
                str(write_fd),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env=env,
                pass_fds=(write_fd,),
                start_new_session=True,
                preexec_fn=reaper.child_preexec_for_this_process(),
            )
        finally:
            os.close(write_fd)
            log.close()
        reaper.register(self._proc.pid)
        loop = asyncio.get_running_loop()
        self._reader = asyncio.StreamReader(limit=_MAX_LINE)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(self._reader), os.fdopen(read_fd, "rb"))  # type: ignore[arg-type]

    async def events(self) -> AsyncIterator[dict[str, Any]]:
        reader = self._reader
        if reader is None:
            return
        while True:
            try:
                raw = await reader.readline()
            except ValueError:  # a line past the limit: not ours to parse
                continue
            if not raw:
                return
            try:
                event = json.loads(raw)
            except ValueError:
                continue
            if isinstance(event, dict) and isinstance(event.get("event"), str):
                yield event

    async def wait(self) -> int:
        if self._proc is None:
            return -1
        self.returncode = await self._proc.wait()
        reaper.unregister(self._proc.pid)
        return self.returncode

    async def stop(self, grace_s: float = 120.0) -> int | None:
        """SIGINT (Speculators saves its `interrupted` checkpoint), then SIGTERM, then SIGKILL."""
        proc = self._proc
        if proc is None:
            return None
        for sig, wait_s in ((signal.SIGINT, grace_s), (signal.SIGTERM, 10.0), (signal.SIGKILL, 10.0)):
            if proc.returncode is not None:
                break
            reaper.signal_group(proc.pid, sig)
            try:
                await asyncio.wait_for(proc.wait(), wait_s)
            except TimeoutError:
                continue
        if reaper.group_alive(proc.pid):
            await asyncio.to_thread(reaper.kill_groups, {proc.pid}, 5.0)
        reaper.unregister(proc.pid)
        self.returncode = proc.returncode
        return self.returncode
