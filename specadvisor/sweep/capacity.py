"""Capacity sweeps: per configuration, one server launch and a goodput search against a latency target.

`run_capacity` launches each configuration once (the baseline first), finds the single-stream latency
with one request, then lets bench.goodput search the Poisson rate edge; every measured rate is stored
with the arm, and the recommendation reads in capacity terms ("at p99 TPOT <= 30 ms, n-gram N=2
sustains 14 req/s against 9 without speculation"; that reading lives in specadvisor.analysis.capacity).
No Textual; the CLI and the TUI call this.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from specadvisor.analysis.arms import arm_label, server_key
from specadvisor.analysis.capacity import recommend_capacity, slo_of
from specadvisor.bench.goodput import measure_at_rate, search_goodput
from specadvisor.bench.loadgen import run_load
from specadvisor.domain import ArmResult, ArmStatus, LatencyStats, RatePoint, Session, SweepEvent, utcnow
from specadvisor.errors import SpecAdvisorError
from specadvisor.store import Store

if TYPE_CHECKING:
    from specadvisor.bench.prompts import PromptSet

Note = Callable[[str], None]


async def run_capacity(
    session: Session,
    store: Store,
    *,
    server_factory: Callable[..., Any] | None = None,
    prompts: Any = None,
    note: Note = lambda line: None,
    on_point: Callable[[str, RatePoint], None] | None = None,
    on_result: Callable[[ArmResult], None] | None = None,
    max_points: int = 8,
    precision: float = 0.15,
    window_s: float = 20.0,
) -> Session:
    """Measure goodput for each configuration of the session (one launch each) and store it."""
    from specadvisor.bench.prompts import prompts_for
    from specadvisor.sweep.runner import VllmServerFactory

    slo = slo_of(session)
    s = session.settings
    factory = server_factory or VllmServerFactory()
    prompts = prompts or prompts_for(s)
    session.status = "running"
    store.save_session(session)
    seen: set[str] = set()
    arms = sorted(session.arms, key=lambda a: not a.is_baseline)
    for arm in arms:
        if server_key(arm) in seen or session.result_for(arm.id) is not None:
            continue
        seen.add(server_key(arm))
        label = arm_label(arm, session.model)
        started = utcnow()
        server = factory(arm, session)
        try:
            await server.start()
            note(f"{label}: starting vLLM")
            startup = await server.wait_ready()
            note(f"{label}: ready in {startup:.0f} s; one request for the single-stream latency")
            probe = await run_load(base_url=server.base_url, model_name=session.model, prompts=_first(prompts, 2), output_len=s.output_len,
                                   temperature=s.temperature, seed=s.seed, concurrency=1)  # fmt: skip
            latency = max((r.latency_s for r in probe.ok_records), default=None)
            if not latency:
                raise SpecAdvisorError(f"{label}: the probe request failed", hint="read the server log")
            start_rate = 0.5 / latency  # half of what one stream sustains: should meet any sane target

            async def measure(rate: float) -> RatePoint:
                return await measure_at_rate(rate, base_url=server.base_url, model_name=session.model, prompts=prompts,  # noqa: B023 - used within this iteration
                                             output_len=s.output_len, temperature=s.temperature, seed=s.seed, slo=slo, window_s=window_s)  # fmt: skip

            def seen_point(point: RatePoint) -> None:
                verdict = "meets" if point.meets_slo else "breaks"
                note(f"{label}: {point.rate:.2f} req/s -> p99 TPOT {_ms(point.tpot_p99_ms)}, p99 TTFT {_ms(point.ttft_p99_ms)}: {verdict} {slo.describe()}")  # noqa: B023 - used within this iteration
                if on_point is not None:
                    on_point(arm.id, point)  # noqa: B023 - used within this iteration

            search = await search_goodput(measure, slo, start_rate=start_rate, max_rate=start_rate * 64, precision=precision,
                                          max_points=max_points, on_point=seen_point)  # fmt: skip
            result = _result(arm.id, search.goodput_rps, search.points, started, startup)
        except SpecAdvisorError as err:
            result = ArmResult(arm_id=arm.id, status=ArmStatus.failed, error=err.one_line(), started_at=started, finished_at=utcnow())
        finally:
            await server.stop()
        session.results = [r for r in session.results if r.arm_id != arm.id] + [result]
        store.save_arm_result(session.id, result)
        note(f"{label}: goodput {_rps(result.goodput_rps)} at {slo.describe()}")
        if on_result is not None:
            on_result(result)
    session.recommendation = recommend_capacity(session)
    store.set_recommendation(session.id, session.recommendation)
    session.status = "finished"
    store.set_status(session.id, "finished")
    return session


def _first(prompts: PromptSet, n: int) -> PromptSet:
    return prompts.model_copy(update={"prompts": list(prompts.prompts)[:n]})


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} ms"


def _rps(value: float | None) -> str:
    return "none (not even the lowest rate)" if value is None else f"{value:.2f} req/s"


def _result(arm_id: str, goodput: float | None, points: list[RatePoint], started: datetime, startup: float) -> ArmResult:
    best = max((p for p in points if p.meets_slo), key=lambda p: p.rate, default=None)
    return ArmResult(
        arm_id=arm_id,
        status=ArmStatus.ok,
        started_at=started,
        finished_at=utcnow(),
        completed=sum(p.completed for p in points),
        failed=sum(p.failed for p in points),
        output_throughput=best.output_throughput if best else None,
        request_throughput=best.achieved_rate if best else None,
        achieved_request_rate=best.achieved_rate if best else None,
        ttft_ms=LatencyStats(median=best.ttft_p50_ms, p99=best.ttft_p99_ms) if best else LatencyStats(),
        tpot_ms=LatencyStats(median=best.tpot_p50_ms, p99=best.tpot_p99_ms) if best else LatencyStats(),
        goodput_rps=goodput,
        rate_points=points,
        warnings=[f"server start-up {startup:.0f} s"] if startup else [],
    )


class CapacityRunner:
    """A capacity sweep as the sweep event stream the TUI renders: every line of progress is a log
    line of its arm, every rate measured a Progress, every arm an ArmFinished, then SweepFinished."""

    def __init__(self, session: Session, store: Any, *, server_factory: Callable[..., Any] | None = None, **capacity: Any):
        self.session, self.store, self.factory = session, store, server_factory
        self.capacity = capacity  # run_capacity's knobs (max_points, window_s, prompts...)
        self._task: asyncio.Task[Session] | None = None

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def events(self) -> AsyncIterator[SweepEvent]:
        from specadvisor.domain import ArmFailed, ArmFinished, ArmQueued, Progress, ServerLog, SweepFinished

        queue: asyncio.Queue[SweepEvent] = asyncio.Queue()
        current = {"arm": self.session.arms[0].id if self.session.arms else ""}
        labels = {arm_label(a, self.session.model): a.id for a in self.session.arms}
        counts: dict[str, int] = {}

        def note(line: str) -> None:
            arm_id = next((i for label, i in labels.items() if line.startswith(label + ":")), current["arm"])
            current["arm"] = arm_id
            queue.put_nowait(ServerLog(arm_id=arm_id, line=line))

        def point(arm_id: str, p: RatePoint) -> None:
            counts[arm_id] = counts.get(arm_id, 0) + 1
            queue.put_nowait(Progress(arm_id=arm_id, completed=counts[arm_id], total=8, output_throughput=p.output_throughput,
                                      ttft_p99_ms=p.ttft_p99_ms, tpot_p99_ms=p.tpot_p99_ms))  # fmt: skip

        def result(r: ArmResult) -> None:
            queue.put_nowait(ArmFailed(result=r) if r.status == ArmStatus.failed else ArmFinished(result=r))

        for arm in self.session.arms:
            yield ArmQueued(arm=arm)
        task = self._task = asyncio.create_task(
            run_capacity(self.session, self.store, server_factory=self.factory, note=note, on_point=point, on_result=result, **self.capacity)
        )
        while not (task.done() and queue.empty()):
            try:
                yield await asyncio.wait_for(queue.get(), timeout=0.5)
            except TimeoutError:
                continue
        session = task.result()
        yield SweepFinished(recommendation=session.recommendation)
