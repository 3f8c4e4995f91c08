"""Use cases that run a prepared session: `runner_for` builds its runner (a `CapacityRunner` for
goodput, else a `SweepRunner`), the one place that records its provenance, gives its launches the
CPU engine's environment and decides where its arms run (`slots`, or a Ray cluster). The CLI, the
TUI and the demo call it and pass only what differs between them (`RunOptions`); `drive` runs the
stream to its end for a front end that waits."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from specadvisor.app import engine_env

if TYPE_CHECKING:
    from specadvisor.app.sweeps import Prepared
    from specadvisor.domain import GpuInfo, HardwareProfile, Session, SweepEvent
    from specadvisor.store import Store
    from specadvisor.sweep.slots import Slot

Note = Callable[[str], None]


def _quiet(line: str) -> None:
    """A front end that shows no notes (the TUI shows the placement on its plan panel instead)."""


class Runner(Protocol):
    """A sweep in progress: an async stream of domain SweepEvents, cancellable from any thread."""

    def events(self) -> AsyncIterator[SweepEvent]: ...

    def cancel(self) -> None: ...


@dataclass(frozen=True)
class RunOptions:
    """What differs between front ends when a prepared session runs; `runner_for` decides the rest."""

    entry_point: str = "sweep"  # who runs it, for provenance, when the use case that planned it named none (the TUI's plan)
    parallel: str | None = None  # `--parallel` as typed; None: the plan's own choice on the GPUs it was planned on (the TUI)
    ray: str | None = None  # `--ray`: the cluster's address ("" the local one); None: this host
    detected: HardwareProfile | None = None  # this host as the front end already probed it (else probed here)
    goodput: bool = False  # `--goodput` asked (a session planned for goodput runs so anyway)
    note: Note = field(default=_quiet)


def runner_for(prepared: Prepared, store: Store, options: RunOptions | None = None) -> Runner:
    """The runner for a planned, resumed or rebuilt session, whichever front end starts it. A
    capacity session without a latency target is bad input before anything is probed or launched."""
    options = options or RunOptions()
    session = prepared.session
    goodput = options.goodput or session.settings.goodput
    if goodput:
        from specadvisor.analysis.capacity import slo_of

        slo_of(session)
        session.settings = session.settings.replace(goodput=True)
    from specadvisor.provenance import record_provenance

    record_provenance(session, entry_point=options.entry_point, hardware=options.detected, endpoint_info=prepared.endpoint_info)
    server_env = launch_env(prepared)
    if goodput:
        from specadvisor.sweep.capacity import CapacityRunner
        from specadvisor.sweep.runner import VllmServerFactory

        return CapacityRunner(session, store, server_factory=VllmServerFactory(server_env))
    from specadvisor.sweep.runner import SweepRunner

    return SweepRunner(session, store, **_placement(prepared, options, server_env))


def launch_env(prepared: Prepared) -> dict[str, str]:
    """The environment every launch gets: what the use case computed, even when that is nothing;
    when it computed none, the CPU engine's if the session launches the detected CPU build."""
    if prepared.server_env is not None:
        return dict(prepared.server_env)
    session = prepared.session
    if session.settings.endpoint:
        return {}
    return engine_env.cpu_env(session, engine_env.cpu_engine_for(session.hardware))


def _placement(prepared: Prepared, options: RunOptions, server_env: dict[str, str]) -> dict[str, Any]:
    """The SweepRunner's keyword arguments for where its servers run: on a Ray cluster (`ray`), on
    this host's slots, or (attach mode) the endpoint with its key's variable and served name."""
    session = prepared.session
    kwargs: dict[str, Any] = {"server_env": server_env}
    if session.settings.endpoint:  # identified before the runner: the time limit counts from then
        kwargs = {"api_key_env": prepared.api_key_env, "model_name": prepared.model_name, "started_at": prepared.started_at}
    if options.ray is not None:
        from specadvisor.sweep.ray_cluster import ray_runner

        kwargs.update(ray_runner(options.ray or None, options.parallel or "auto", session, kwargs.pop("server_env", {})))
    elif options.parallel is not None:  # as asked, on the GPUs detected now
        kwargs["slots"] = slots(options.parallel, session, note=options.note)
    else:  # the plan's choice on the GPUs it was planned for; auto on one GPU (or a plan for another machine): one at a time
        choice, gpus = session.settings.parallel_choice, session.hardware.gpus
        if not session.hardware.hypothetical and (len(gpus) > 1 or choice != "auto"):
            kwargs["slots"] = slots(choice, session, gpus=gpus, note=options.note)
    return kwargs


def parallel_choice(text: str) -> str:
    """`--parallel` (or the TUI's Parallel prompt) as stored: auto, or a positive count (InputError otherwise)."""
    from specadvisor.sweep.slots import parallel_count

    count = parallel_count(text)
    return "auto" if count is None else str(count)


def slots(parallel: str, session: Session, *, gpus: list[GpuInfo] | None = None, note: Note = _quiet) -> list[Slot]:
    """Where arms run (`--parallel`): GPU groups of the arm's tensor-parallel size, or core ranges.
    `gpus`: already detected (None: detect now)."""
    from specadvisor.sweep.host import slots_for

    session.settings = session.settings.replace(parallel_choice=str(parallel).strip().lower())
    found = slots_for(parallel, session, gpus)
    if any(s.shared for s in found):
        if not any("gpu-memory-utilization" in a for a in session.settings.server_args):
            note("note: several servers share a GPU; pass --server-arg=--gpu-memory-utilization=0.3 so that they fit")
        # Measured on an H200 (vLLM 0.26, SmolLM2, c=8): ngram N=4 over the baseline read 0.46x side by
        # side on one GPU and 0.55x alone. The ranking held; the ratio did not.
        note("note: servers sharing a GPU contend for its compute: trust the ranking, confirm the speedup with --parallel 1")
    return found


def drive(runner: Runner, on_event: Callable[[SweepEvent], None]) -> None:
    """Run the stream to its end on this thread (the CLI), handing each event to `on_event`."""
    import asyncio

    async def consume() -> None:
        async for event in runner.events():
            on_event(event)

    asyncio.run(consume())
