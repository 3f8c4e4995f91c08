"""The servers a sweep measures, as the runner sees them: the handle every server satisfies (a
`vllm serve` launched here, one someone else runs, one on a Ray node), where a launch runs
(`Placement`), and the real factory. The factory is the process boundary the tests replace.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from specadvisor.domain import Arm, Session, SweepEvent
from specadvisor.engine.diagnose import Diagnosis
from specadvisor.sweep.slots import Slot

if TYPE_CHECKING:
    from specadvisor.bench.prompts import PromptSet


@runtime_checkable
class ServerHandle(Protocol):
    """Everything the runner reads from a server (VllmServer, AttachedServer and the sweep's test
    fakes satisfy it; mypy checks the real ones)."""

    base_url: str
    command: list[str]  # the exact command line, known once `start` returned
    port: int | None  # the local port the runner reserved for it (None: not chosen by the runner)
    diagnosis: Diagnosis | None  # why it failed to start or died, once known

    @property
    def log_path(self) -> Path | None: ...  # the server's log file on this machine

    @property
    def running(self) -> bool: ...
    def subscribe(self, callback: Callable[[str], None]) -> None: ...
    def tail(self, n: int = 40) -> list[str]: ...
    async def start(self) -> None: ...
    async def wait_ready(self) -> float: ...
    async def stop(self) -> Any: ...


@runtime_checkable
class RemoteServerHandle(ServerHandle, Protocol):
    """A server on another machine (sweep.ray_cluster): the client runs beside it, so it brings its
    own `measure` and `fit_prompts`, and says where it landed."""

    placement: str

    def measure(self, **kwargs: Any) -> AsyncGenerator[SweepEvent, None]: ...
    async def fit_prompts(self, prompts: PromptSet, **kwargs: Any) -> PromptSet: ...


ServerFactory = Callable[..., ServerHandle]  # (arm, session) or (arm, session, placement=Placement)


@dataclass(frozen=True)
class Placement:
    """Where one launch runs: its slot (GPUs or cores), a port chosen by the runner (servers
    starting side by side must not race for one), and a log-name suffix (one log per launch)."""

    slot: Slot | None = None
    port: int | None = None
    log_suffix: str = ""


class VllmServerFactory:
    """Builds a real `vllm serve` launch for an arm (engine command, server args, a log file per arm)."""

    def __init__(self, env: dict[str, str] | None = None, ready_timeout_s: float = 1200):
        self.env = dict(env or {})
        self.ready_timeout_s = ready_timeout_s

    def __call__(self, arm: Arm, session: Session, placement: Placement | None = None) -> ServerHandle:
        from specadvisor.engine.server import VllmServer
        from specadvisor.engine.spec import ServerSpec
        from specadvisor.settings import paths

        log_dir = paths().logs / session.id
        log_dir.mkdir(parents=True, exist_ok=True)
        slot = placement.slot if placement else None
        spec_kwargs: dict[str, Any] = dict(
            model=session.model,
            speculative_config=arm.speculative_config,
            extra_args=[*session.settings.server_args, *arm.server_args],
            env={**self.env, **(slot.server_env() if slot else {})},
            ready_timeout_s=self.ready_timeout_s,
            log_path=log_dir / f"{arm.id}{placement.log_suffix if placement else ''}.log",
            port=placement.port if placement else None,
            gpu_ids=slot.gpu_ids if slot else None,
        )
        if session.settings.engine_cmd:
            spec_kwargs["engine_cmd"] = list(session.settings.engine_cmd)
        return VllmServer(ServerSpec(**spec_kwargs))


class AttachedServer:
    """A server someone else runs (--endpoint): nothing is launched or stopped."""

    def __init__(self, url: str):
        self.base_url = url.rstrip("/")
        self.command: list[str] = []
        self.running = True
        self.port: int | None = None
        self.diagnosis: Diagnosis | None = None
        self.log_path: Path | None = None  # its log is the operator's, not ours

    def subscribe(self, callback: Callable[[str], None]) -> None:
        return None

    def tail(self, n: int = 40) -> list[str]:
        return []

    async def start(self) -> None:
        return None

    async def wait_ready(self) -> float:
        import httpx

        from specadvisor.errors import EngineError

        try:
            # A total deadline, and the body is not read: a /health that never ends is no answer.
            async with asyncio.timeout(30.0), httpx.AsyncClient(timeout=10.0) as client, client.stream("GET", self.base_url + "/health") as response:
                status = response.status_code
        except (httpx.HTTPError, TimeoutError) as exc:
            raise EngineError(f"cannot reach {self.base_url}: {type(exc).__name__}", hint="check --endpoint and that the server is up") from exc
        if status != 200:
            raise EngineError(f"{self.base_url}/health answered HTTP {status}", hint="wait until the server is ready")
        return 0.0

    async def stop(self) -> None:
        return None


async def stop_quietly(server: ServerHandle) -> None:
    """Stop a server whatever state it is in (its own errors are the server's, not the sweep's)."""
    with contextlib.suppress(Exception):
        await server.stop()


def log_path_of(server: ServerHandle) -> str | None:
    return str(server.log_path) if server.log_path else None
