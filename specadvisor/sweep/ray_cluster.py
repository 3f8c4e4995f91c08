"""Arms across machines on Ray (`--ray [ADDRESS]`), the distributed runtime vLLM itself uses.

Each server launch is a Ray actor holding its arm's resources (num_gpus = the tensor-parallel size,
in a placement group, STRICT_PACK when TP > 1 so the GPUs share a node; num_cpus=1 on a CPU-only
cluster). The actor fetches the checkpoints on its node, starts `vllm serve` there bound to
127.0.0.1, and runs the same measurement code (bench.measure) beside it, so no timing crosses the
network. The driver polls the actor for batches of serialized domain events and log lines and feeds
them to the unchanged runner: the store, the TUI and the CLI see the same event stream as a local
sweep. A node that dies costs the arm on it (its actor's calls fail), never the session.

Ray is imported only here and only under --ray; nodes need specadvisor, Ray and vLLM installed.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import socket
import tempfile
from collections import deque
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any

from specadvisor.domain import Arm, Session, SweepEvent
from specadvisor.engine.diagnose import Diagnosis
from specadvisor.errors import EngineError, InputError, SpecAdvisorError
from specadvisor.sweep.slots import Slot, parallel_count, ranges, tp_size
from specadvisor.sweep.stopping import CiTarget

INSTALL_HINT = "pip install 'specadvisor[ray]'"
POLL_S = 0.25
PLACEMENT_TIMEOUT_S = 600.0


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise InputError("--ray needs Ray, which is not installed", hint=INSTALL_HINT) from None
    return ray


def ray_runner(address: str | None, parallel: str | int, session: Session, env: dict[str, str]) -> dict[str, Any]:
    """Connect to the cluster (ADDRESS, else the running local one, else a new local one) and
    return the runner's slots and server factory: as many slots as the cluster holds arms at once."""
    if session.settings.endpoint:
        raise InputError("--ray and --endpoint do not go together", hint="--endpoint measures a server someone else runs: drop --ray")
    ray = import_ray()
    if not ray.is_initialized():
        try:
            ray.init(address=address or None, log_to_driver=False, logging_level="WARNING", configure_logging=False)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise EngineError(
                f"cannot connect to the Ray cluster {address or '(local)'}: {exc}", hint="check the address, or start one with `ray start --head`"
            ) from exc
    tp = max([tp_size([*session.settings.server_args, *a.server_args]) for a in session.arms] or [1])
    nodes = [n.get("Resources", {}) for n in ray.nodes() if n.get("Alive")]
    gpus = sum(r.get("GPU", 0) for r in nodes) > 0
    per_node = [int(r.get("GPU", 0) // tp) if gpus else int(r.get("CPU", 0)) for r in nodes]
    capacity = sum(per_node)
    if capacity < 1:
        need = f"{tp} GPUs on one node" if gpus else "one free CPU"
        raise EngineError(f"the Ray cluster has no room for one arm (each needs {need})", hint="add nodes or lower --tensor-parallel-size")
    asked = parallel_count(parallel)
    k = capacity if asked is None else min(capacity, asked)
    resources = {"num_gpus": tp if gpus else 0, "num_cpus": 1}
    slots = [Slot(index=i, name=f"ray {i + 1}") for i in range(k)]
    return {"slots": slots, "server_factory": RayServerFactory(resources, env=env)}


class RayServerFactory:
    """One RayServer per launch; its spec is what the local VllmServerFactory would launch."""

    def __init__(self, resources: dict[str, int], env: dict[str, str] | None = None, ready_timeout_s: float = 1200):
        self.resources = resources
        self.env = dict(env or {})
        self.ready_timeout_s = ready_timeout_s

    def __call__(self, arm: Arm, session: Session, placement: Any = None) -> RayServer:
        from specadvisor.modelinfo.fetch import checkpoints
        from specadvisor.settings import paths

        suffix = placement.log_suffix if placement is not None else ""
        spec: dict[str, Any] = dict(
            model=session.model,
            speculative_config=arm.speculative_config,
            extra_args=[*session.settings.server_args, *arm.server_args],
            env=dict(self.env),
            ready_timeout_s=self.ready_timeout_s,
            log_name=f"{session.id}/{arm.id}{suffix}.log",
        )
        if session.settings.engine_cmd:
            spec["engine_cmd"] = list(session.settings.engine_cmd)
        refs = [r for r in checkpoints(session) if r in (session.model, (arm.speculative_config or {}).get("model"))]
        return RayServer(spec, self.resources, refs, paths().logs / session.id / f"{arm.id}{suffix}.log")


class RayServer:
    """The runner's ServerHandle for a server on a Ray node; `measure` and `fit_prompts` run there."""

    def __init__(self, spec: dict[str, Any], resources: dict[str, int], checkpoints: list[str], log_path: Path):
        self.ray = import_ray()
        self.spec_dict = spec
        self.resources = resources
        self.checkpoints = checkpoints
        self.log_path: Path | None = log_path  # the driver's copy of the node's log
        self.port: int | None = None  # chosen on the node, not by the runner
        self.base_url = ""
        self.command: list[str] = []
        self.placement = ""
        self.actor_pid: int | None = None
        self.running = False
        self.diagnosis: Diagnosis | None = None
        self._subscribers: list[Callable[[str], None]] = []
        self._lines: deque[str] = deque(maxlen=2000)
        self._events: asyncio.Queue[SweepEvent | BaseException | _End] = asyncio.Queue()  # events, then a failure or the end
        self._actor: Any = None
        self._pg: Any = None
        self._poller: asyncio.Task[None] | None = None
        self._stop_rule: CiTarget | None = None  # the measuring arm's --ci-target rule
        self._log_file: Any = None

    # ------------------------------------------------------------------ ServerHandle

    def subscribe(self, callback: Callable[[str], None]) -> None:
        self._subscribers.append(callback)

    def tail(self, n: int = 40) -> list[str]:
        return list(self._lines)[-n:]

    async def start(self) -> None:
        from ray.util.placement_group import placement_group
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        gpus, cpus = self.resources["num_gpus"], self.resources["num_cpus"]
        bundle = {"CPU": cpus, **({"GPU": gpus} if gpus else {})}
        self._pg = placement_group([bundle], strategy="STRICT_PACK" if gpus > 1 else "PACK")
        try:
            await asyncio.wait_for(self._pg.ready(), PLACEMENT_TIMEOUT_S)
        except TimeoutError:
            raise EngineError(f"Ray could not place an arm needing {bundle} within {PLACEMENT_TIMEOUT_S:.0f} s", hint="free or add cluster resources") from None
        actor_cls = self.ray.remote(ArmActor)
        self._actor = actor_cls.options(
            num_cpus=cpus,
            num_gpus=gpus,
            max_concurrency=16,
            scheduling_strategy=PlacementGroupSchedulingStrategy(placement_group=self._pg, placement_group_bundle_index=0),
        ).remote()
        log_path = self.log_path or Path(os.devnull)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log_file = open(log_path, "w", encoding="utf-8", buffering=1)  # noqa: SIM115 - open for the server's life
        self._poller = asyncio.create_task(self._poll())
        info = await self._call(self._actor.start.remote(self.spec_dict, 0 if gpus else cpus, self.checkpoints))
        self.command, self.base_url, self.placement = info["command"], info["base_url"], info["placement"]
        self.actor_pid = info["pid"]
        self.running = True
        self._log(f"$ {' '.join(self.command)}  [on {self.placement}]")

    async def wait_ready(self) -> float:
        answer = await self._call(self._actor.wait_ready.remote())
        if not answer["ok"]:
            self.running = False
            self.diagnosis = Diagnosis(cause=answer["cause"], hint=answer.get("hint") or "")
            raise EngineError(answer["cause"], hint=answer.get("hint"))
        return float(answer["startup_s"])

    async def stop(self) -> None:
        if self._actor is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._actor.stop.remote(), 60)
            with contextlib.suppress(Exception):
                await self._drain()
            with contextlib.suppress(Exception):
                self.ray.kill(self._actor)
        if self._poller is not None:
            self._poller.cancel()
            await asyncio.gather(self._poller, return_exceptions=True)
        if self._pg is not None:
            with contextlib.suppress(Exception):
                self.ray.util.remove_placement_group(self._pg)
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
        self.running = False

    # ------------------------------------------------------------------ the client, beside the server

    async def measure(self, **kwargs: Any) -> AsyncGenerator[SweepEvent, None]:
        kwargs.pop("base_url", None)
        kwargs.pop("api_key", None)  # launched servers have no key; a secret never travels
        while not self._events.empty():
            self._events.get_nowait()
        self._stop_rule = kwargs.get("stop")  # the actor works on a copy: its verdict is copied back
        await self._call(self._actor.measure.remote(kwargs))
        finished = False
        try:
            while True:
                item = await self._events.get()
                if isinstance(item, _End):
                    finished = True
                    return
                if isinstance(item, BaseException):
                    finished = True
                    raise item
                yield item
        finally:
            if not finished and self._actor is not None:  # stopped early by the runner
                with contextlib.suppress(Exception):
                    await self._actor.cancel.remote()

    async def fit_prompts(self, prompts: Any, **kwargs: Any) -> Any:
        kwargs.pop("base_url", None)
        kwargs.pop("api_key", None)
        return await self._call(self._actor.fit_prompts.remote(prompts, kwargs))

    # ------------------------------------------------------------------ plumbing

    async def _call(self, ref: Any) -> Any:
        try:
            return await ref
        except self.ray.exceptions.RayError as exc:
            self.running = False
            raise EngineError(f"the Ray actor running this arm was lost ({_short(exc)})", hint="a node died or ran out of memory; see `ray status`") from exc

    async def _poll(self) -> None:
        from pydantic import TypeAdapter

        adapter = TypeAdapter(SweepEvent)
        while True:
            try:
                batch = await self._actor.poll.remote()
            except self.ray.exceptions.RayError as exc:
                self.running = False
                self._events.put_nowait(EngineError(f"the Ray actor running this arm was lost ({_short(exc)})", hint="a node died; the other arms go on"))
                return
            self._deliver(batch, adapter)
            await asyncio.sleep(POLL_S)

    async def _drain(self) -> None:
        from pydantic import TypeAdapter

        self._deliver(await self._actor.poll.remote(), TypeAdapter(SweepEvent))

    def _deliver(self, batch: dict[str, Any], adapter: Any) -> None:
        for line in batch["logs"]:
            self._log(line)
        for raw in batch["events"]:
            self._events.put_nowait(adapter.validate_json(raw))
        if batch.get("fired_halfwidth") is not None and self._stop_rule is not None:
            self._stop_rule.fired_halfwidth = batch["fired_halfwidth"]
        if batch["error"]:
            self._events.put_nowait(EngineError(batch["error"]))
        elif batch["done"]:
            self._events.put_nowait(_END)

    def _log(self, line: str) -> None:
        self._lines.append(line)
        if self._log_file is not None:
            self._log_file.write(line + "\n")
        for callback in list(self._subscribers):
            with contextlib.suppress(Exception):
                callback(line)


class ArmActor:
    """Runs on a Ray node (ray.remote(ArmActor)): one vLLM server and its load generator."""

    def __init__(self) -> None:
        self.server: Any = None
        self.logs: list[str] = []
        self.events: list[str] = []
        self.done = False
        self.error: str | None = None
        self.task: asyncio.Task[None] | None = None
        self.core_locks: list[Any] = []
        self.fired_halfwidth: float | None = None  # the --ci-target rule's verdict, copied back to the driver

    async def start(self, spec: dict[str, Any], cores: int, refs: list[str]) -> dict[str, Any]:
        from specadvisor.engine.server import VllmServer
        from specadvisor.engine.spec import ServerSpec
        from specadvisor.modelinfo.fetch import prefetch
        from specadvisor.settings import paths

        spec = dict(spec)
        self._unnice()
        where = [socket.gethostname()]
        if os.environ.get("CUDA_VISIBLE_DEVICES"):  # Ray set it to this actor's GPUs
            where.append(f"GPU {os.environ['CUDA_VISIBLE_DEVICES']}")
        if cores:
            bound = self._claim_cores(cores)
            spec["env"] = {**spec.get("env", {}), "VLLM_CPU_OMP_THREADS_BIND": ranges(bound)}
            where.append(f"cores {ranges(bound)}")
        await prefetch(refs, lambda e: self.logs.append(f"[download] {e.repo_id}: {e.status} {e.done_bytes}/{e.total_bytes or 0} B {e.message}".rstrip()))
        spec["log_path"] = paths().logs / "on-ray-node" / spec.pop("log_name")  # the driver keeps its copy at the usual path
        self.server = VllmServer(ServerSpec(**spec))
        self.server.subscribe(self.logs.append)
        await self.server.start()
        return {"command": self.server.command, "base_url": self.server.base_url, "placement": " ".join(where), "pid": os.getpid()}

    async def wait_ready(self) -> dict[str, Any]:
        try:
            return {"ok": True, "startup_s": await self.server.wait_ready()}
        except SpecAdvisorError as err:
            diagnosis = getattr(err, "diagnosis", None)
            return {"ok": False, "cause": getattr(diagnosis, "cause", None) or err.message, "hint": getattr(diagnosis, "hint", None) or err.hint}

    async def measure(self, kwargs: dict[str, Any]) -> None:
        self.done, self.error = False, None
        self.task = asyncio.create_task(self._measure(kwargs))

    async def _measure(self, kwargs: dict[str, Any]) -> None:
        from specadvisor.bench.measure import measure_arm

        self.fired_halfwidth = None
        try:
            async for event in measure_arm(base_url=self.server.base_url, **kwargs):
                self.events.append(event.model_dump_json())
            self.fired_halfwidth = getattr(kwargs.get("stop"), "fired_halfwidth", None)
        except asyncio.CancelledError:
            pass
        except Exception as exc:  # noqa: BLE001 - reaches the runner as the arm's failure
            self.error = f"{type(exc).__name__}: {exc}"
        self.done = True

    async def fit_prompts(self, prompts: Any, kwargs: dict[str, Any]) -> Any:
        from specadvisor.bench.prompts import fit_prompts

        return await fit_prompts(prompts, base_url=self.server.base_url, **kwargs)

    async def poll(self) -> dict[str, Any]:
        batch = {
            "logs": self.logs,
            "events": self.events,
            "done": self.done,
            "error": self.error,
            "fired_halfwidth": getattr(self, "fired_halfwidth", None) if self.done else None,
        }
        self.logs, self.events = [], []
        if self.done:
            self.done, self.error = False, None
        return batch

    async def cancel(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()
            with contextlib.suppress(BaseException):
                await self.task
        self.done, self.error, self.events = False, None, []

    async def stop(self) -> None:
        if self.server is not None:
            await self.server.stop()
        for fh in self.core_locks:
            fh.close()
        self.core_locks = []

    def _unnice(self) -> None:
        """Ray starts workers at nice 15 and the server would inherit it: measured beside other
        work, it would lose CPU that a local sweep's server keeps. Back to 0 where allowed."""
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, 0, 0)
        nice = os.getpriority(os.PRIO_PROCESS, 0)
        if nice > 0:
            self.logs.append(f"[specadvisor] this Ray worker runs at nice {nice} and its server inherits it; start the nodes with RAY_worker_niceness=0")

    def _claim_cores(self, k: int) -> list[int]:
        """`k` cores of this node no other arm actor holds (a lock file per core, released when the
        actor's process ends however it ends)."""
        folder = Path(tempfile.gettempdir()) / "specadvisor-ray-cores"
        folder.mkdir(exist_ok=True)
        mine = []
        for core in sorted(os.sched_getaffinity(0)):
            fh = open(folder / f"{core}.lock", "w")  # noqa: SIM115 - held (locked) until the slot is released
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                fh.close()
                continue
            self.core_locks.append(fh)
            mine.append(core)
            if len(mine) == k:
                return mine
        return mine or sorted(os.sched_getaffinity(0))[:k]


class _End:
    pass


_END = _End()


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:160]}" if text else type(exc).__name__
