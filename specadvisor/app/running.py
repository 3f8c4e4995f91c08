"""Use cases that run a prepared session: where its arms run (`slots`), the runner for it (a
`CapacityRunner` for goodput, else a `SweepRunner`: the one place that choice is made), and
`run_capacity` for a front end that waits for the answer. Both front ends call these."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, Protocol

from specadvisor.app import engine_env

if TYPE_CHECKING:
    from specadvisor.app.sweeps import Prepared
    from specadvisor.domain import GpuInfo, Session, SweepEvent
    from specadvisor.sweep.slots import Slot

Note = Callable[[str], None]


class Runner(Protocol):
    """A sweep in progress: an async stream of domain SweepEvents, cancellable from any thread."""

    def events(self) -> AsyncIterator[SweepEvent]: ...

    def cancel(self) -> None: ...


def slots(parallel: str, session: Session, *, gpus: list[GpuInfo] | None = None, note: Note = lambda line: None) -> list[Slot]:
    """Where arms run (`--parallel`): GPU groups of the arm's tensor-parallel size, or core ranges.
    `gpus`: already detected (None: detect now)."""
    from specadvisor.sweep.host import slots_for

    session.settings.parallel_choice = str(parallel).strip().lower()
    found = slots_for(parallel, session, gpus)
    if any(s.shared for s in found):
        if not any("gpu-memory-utilization" in a for a in session.settings.server_args):
            note("note: several servers share a GPU; pass --server-arg=--gpu-memory-utilization=0.3 so that they fit")
        # Measured on an H200 (vLLM 0.26, SmolLM2, c=8): ngram N=4 over the baseline read 0.46x side by
        # side on one GPU and 0.55x alone. The ranking held; the ratio did not.
        note("note: servers sharing a GPU contend for its compute: trust the ranking, confirm the speedup with --parallel 1")
    return found


def runner_options(prepared: Prepared, *, parallel: str = "auto", ray: str | None = None, note: Note = lambda line: None) -> dict[str, Any]:
    """The SweepRunner's keyword arguments on this host (`slots`) or on a Ray cluster (`ray`: its address, "" for the local one)."""
    options: dict[str, Any] = {"server_env": dict(prepared.server_env)}
    if prepared.session.settings.endpoint:
        options = {"api_key_env": prepared.api_key_env, "model_name": prepared.model_name}
    if ray is not None:
        from specadvisor.sweep.ray_cluster import ray_runner

        options.update(ray_runner(ray or None, parallel, prepared.session, options.pop("server_env", {})))
    else:
        options["slots"] = slots(parallel, prepared.session, note=note)
    return options


def capacity_runner(session: Session, store: Any, server_env: dict[str, str]) -> Runner:
    """Goodput: one launch per configuration, a Poisson rate sweep inside it, as the event stream."""
    from specadvisor.sweep.capacity import CapacityRunner
    from specadvisor.sweep.runner import VllmServerFactory

    return CapacityRunner(session, store, server_factory=VllmServerFactory(server_env))


def tui_runner(session: Session, store: Any, runner_kwargs: dict[str, Any] | None = None) -> Runner:
    """The runner the TUI's Start makes for a planned session: capacity or sweep, its slots on the
    detected GPUs, the CPU engine's environment when the plan launches that engine."""
    kwargs = dict(runner_kwargs or {})
    cpu = engine_env.cpu_engine_for(session.hardware)
    if session.settings.goodput:
        return capacity_runner(session, store, dict(kwargs.get("server_env") or (cpu.env if cpu is not None else {})))
    from specadvisor.provenance import record_provenance
    from specadvisor.sweep.runner import SweepRunner

    record_provenance(session, entry_point="tui", hardware=session.hardware)
    choice = session.settings.parallel_choice
    if "slots" not in kwargs and not session.hardware.hypothetical and (len(session.hardware.gpus) > 1 or choice != "auto"):
        kwargs["slots"] = slots(choice, session, gpus=session.hardware.gpus)  # auto: one arm per free GPU group
        session.settings.parallel_choice = choice
    if cpu_env := engine_env.cpu_env(session, cpu):
        kwargs.setdefault("server_env", cpu_env)
    return SweepRunner(session, store, **kwargs)


def run_capacity(prepared: Prepared, store: Any, *, note: Note) -> Session:
    """`--goodput` to the end: each configuration once, its goodput under the latency target. A
    missing target is bad input before anything launches."""
    import asyncio

    from specadvisor.analysis.capacity import slo_of
    from specadvisor.sweep.capacity import run_capacity as run
    from specadvisor.sweep.runner import VllmServerFactory

    session = prepared.session
    slo_of(session)
    session.settings.goodput = True
    return asyncio.run(run(session, store, server_factory=VllmServerFactory(prepared.server_env or {}), note=note))


def drive(runner: Runner, on_event: Callable[[SweepEvent], None]) -> None:
    """Run the stream to its end on this thread (the CLI), handing each event to `on_event`."""
    import asyncio

    async def consume() -> None:
        async for event in runner.events():
            on_event(event)

    asyncio.run(consume())
