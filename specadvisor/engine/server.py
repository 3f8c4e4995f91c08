"""One launched vLLM server: start, stream its log, wait until /health says ready, stop its group."""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
import signal
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import IO

import httpx

from specadvisor.engine import reaper
from specadvisor.engine.diagnose import Diagnosis, diagnose
from specadvisor.engine.ports import free_port, port_is_free
from specadvisor.engine.spec import ServerSpec, build_command, server_env
from specadvisor.errors import EngineError
from specadvisor.fileio import make_private_dirs
from specadvisor.redact import LogRedactor, redact_argv, redact_text

log = logging.getLogger(__name__)

STREAM_LIMIT = 16 * 1024 * 1024  # vLLM prints very long lines (configs, tracebacks)
POLL_INTERVAL_S = 1.0
_TAIL_KEPT = 2000


def open_private_log(path: Path, *, append: bool = False) -> IO[str]:
    """A server log only its owner can read (0600), in folders only its owner can list (0700):
    logs hold prompts, paths and whatever vLLM prints. A symlink planted at the path is refused.
    `append`: keep what an earlier run wrote (a resumed training run's log)."""
    make_private_dirs(path.parent)
    os.chmod(path.parent, 0o700)  # the arm's own log folder, even one an older version made
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC) | getattr(os, "O_NOFOLLOW", 0), 0o600)
    os.fchmod(fd, 0o600)
    return os.fdopen(fd, "w", encoding="utf-8", buffering=1)


class ServerStartError(EngineError):
    """The server exited, timed out or could not be launched; `diagnosis` says why."""

    def __init__(self, diagnosis: Diagnosis):
        self.diagnosis = diagnosis
        super().__init__(diagnosis.cause, hint=diagnosis.hint)


class VllmServer:
    """Async context manager: start + wait_ready on enter, stop on exit."""

    def __init__(self, spec: ServerSpec):
        self.spec = spec
        self.port: int | None = None
        self.base_url = ""
        self.pid: int | None = None
        self.command: list[str] = []
        self.returncode: int | None = None
        self.diagnosis: Diagnosis | None = None
        self._proc: asyncio.subprocess.Process | None = None
        self._lines: deque[str] = deque(maxlen=_TAIL_KEPT)
        self._redact_line = LogRedactor()  # a PEM block spans lines
        self._subscribers: list[Callable[[str], None]] = []
        self._reader: asyncio.Task[None] | None = None
        self._exited: asyncio.Task[int] | None = None
        self._log_file: IO[str] | None = None
        self._started_at = 0.0

    async def __aenter__(self) -> VllmServer:
        await self.start()
        try:
            await self.wait_ready()
        except BaseException:
            await self.stop()
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    def subscribe(self, callback: Callable[[str], None]) -> None:
        """Call `callback(line)` for every log line from now on (from the event-loop thread)."""
        self._subscribers.append(callback)

    def tail(self, n: int = 40) -> list[str]:
        return list(self._lines)[-n:]

    def full_log(self) -> list[str]:
        """Every line the server wrote (its log file when it has one; else the lines kept in memory):
        the diagnosis reads the whole log, because the root cause comes long before the last lines."""
        path = self.spec.log_path
        if path is not None and path.is_file():
            try:
                return path.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                pass
        return list(self._lines)

    @property
    def log_path(self) -> Path | None:
        return self.spec.log_path

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.returncode is None

    async def start(self) -> None:
        if self._proc is not None:
            raise EngineError("this server was already started", hint="create a new VllmServer for another launch")
        self.port = self.spec.port or free_port()
        if self.spec.port and not port_is_free(self.port):
            raise ServerStartError(diagnose([f"[Errno 98] Address already in use: 127.0.0.1:{self.port}"], None))
        self.command = build_command(self.spec, self.port)
        self.base_url = f"http://127.0.0.1:{self.port}"
        if self.spec.log_path:
            self._log_file = open_private_log(self.spec.log_path)
            self._log_file.write(f"$ {redact_text(shlex.join(redact_argv(self.command)))}\n")
        self._started_at = time.monotonic()
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *self.command,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                env=server_env(self.spec),
                start_new_session=True,
                preexec_fn=reaper.child_preexec_for_this_process(),
                limit=STREAM_LIMIT,
            )
        except OSError as exc:  # the engine command itself is missing or not executable
            self._close_log()
            raise EngineError(
                f"cannot run the engine command {self.command[0]!r}: {exc.strerror or exc}",
                hint="install vLLM or point --engine-cmd at it (e.g. 'python -m vllm.entrypoints.openai.api_server')",
            ) from exc
        self.pid = self._proc.pid
        reaper.register(self.pid)  # start_new_session: the group id is the child's pid
        self._reader = asyncio.create_task(self._read_log())
        self._exited = asyncio.create_task(self._proc.wait())

    async def _read_log(self) -> None:
        stream = self._proc.stdout if self._proc is not None else None
        if stream is None:  # started with stdout=PIPE: never
            return
        while True:
            try:
                raw = await stream.readline()
            except ValueError:  # a line longer than the limit: take what is buffered
                raw = await stream.read(STREAM_LIMIT)
            if not raw:
                return
            self._emit(raw.decode("utf-8", errors="replace").rstrip("\r\n"))

    def _emit(self, line: str) -> None:
        line = self._redact_line(line)  # vLLM echoes its arguments (an --api-key among them) at start-up
        self._lines.append(line)
        if self._log_file:
            self._log_file.write(line + "\n")
        for callback in list(self._subscribers):
            try:
                callback(line)
            except Exception:  # a broken view must not stop the log or the measurement
                log.exception("log subscriber failed")

    async def wait_ready(self) -> float:
        """Seconds from launch until GET /health returned 200. Raises ServerStartError (an
        EngineError carrying `.diagnosis`) when the server exits first or the timeout passes."""
        exited = self._exited
        if self._proc is None or exited is None:
            raise EngineError("the server was never started", hint="call start() first")
        deadline = self._started_at + self.spec.ready_timeout_s
        # trust_env=False: a proxy from the environment must not sit between us and 127.0.0.1.
        async with httpx.AsyncClient(timeout=httpx.Timeout(5.0), trust_env=False) as client:
            while True:
                if exited.done():
                    await self._fail(timed_out=False)
                try:
                    response = await client.get(f"{self.base_url}/health")
                    if response.status_code == 200:
                        return time.monotonic() - self._started_at
                except httpx.TransportError:
                    pass
                if time.monotonic() >= deadline:
                    await self._fail(timed_out=True)
                remaining = max(0.0, deadline - time.monotonic())
                await asyncio.wait({exited}, timeout=min(POLL_INTERVAL_S, remaining))

    async def _fail(self, *, timed_out: bool) -> None:
        if timed_out:
            self._emit(f"[specadvisor] not ready after {self.spec.ready_timeout_s:.0f} s; stopping the server")
        await self.stop()
        self.diagnosis = diagnose(self.full_log(), None if timed_out else self.returncode, timed_out=timed_out)
        raise ServerStartError(self.diagnosis)

    async def stop(self, grace_s: float = 15) -> int | None:
        """SIGTERM the process group, wait up to grace_s, then SIGKILL. Returns the exit code."""
        exited = self._exited
        if self._proc is None or exited is None:
            return None
        pgid = self._proc.pid
        if self._proc.returncode is None:
            reaper.signal_group(pgid, signal.SIGTERM)
            try:
                await asyncio.wait_for(asyncio.shield(exited), grace_s)
            except TimeoutError:
                reaper.signal_group(pgid, signal.SIGKILL)
                await exited
        # The leader is gone; workers it left behind in the group get the same treatment.
        if reaper.group_alive(pgid):
            await asyncio.to_thread(reaper.kill_groups, {pgid}, min(grace_s, 5.0))
        reaper.unregister(pgid)
        if self._reader:
            try:
                await asyncio.wait_for(self._reader, 5)
            except TimeoutError:  # a grandchild still holds the pipe open
                self._reader.cancel()
        self.returncode = self._proc.returncode
        self._close_log()
        return self.returncode

    def _close_log(self) -> None:
        if self._log_file:
            self._log_file.close()
            self._log_file = None
