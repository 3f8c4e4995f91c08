"""Measure one arm on an already-running server, as a stream of sweep events.

Order of work: warmups (excluded from everything), then per trial a /metrics snapshot, the load,
live samples about once a second, and a closing snapshot. Spec figures come only from the deltas
around measured trials, so warmups and the time between trials never count.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from datetime import datetime

import httpx

from specadvisor import stats
from specadvisor.bench.loadcheck import achieved_load, shortfall_warning
from specadvisor.bench.loadgen import Deadlines, LoadResult, RequestRecord, run_load
from specadvisor.bench.metrics import (
    KV_CACHE_USAGE,
    RUNNING,
    WAITING,
    MetricsSnapshot,
    SpecDelta,
    acceptance,
    delta,
    scrape,
)
from specadvisor.bench.prompts import PromptSet
from specadvisor.domain import (
    Arm,
    ArmFinished,
    ArmResult,
    ArmStatus,
    MeasurementWarning,
    MetricsSample,
    MetricsSampled,
    Progress,
    RunRecord,
    SweepEvent,
    SweepSettings,
    WarmupStarted,
    utcnow,
)
from specadvisor.domain import RequestRecord as DomainRequestRecord
from specadvisor.engine import reset_prefix_cache, server_version
from specadvisor.errors import SpecAdvisorError
from specadvisor.physics import ImplausibleFigures, check_speculation, gauge

MAX_WINDOWS = 10  # default window count of window_throughputs
# A single run's interval from batch means needs at least MIN_WINDOWS windows, each at least as wide
# as a request takes (narrower windows share requests and are correlated): otherwise "no interval".
MIN_WINDOWS = 10
MAX_BATCH_WINDOWS = 20
MIN_WINDOW_S = 1.0
MAX_LAG1 = 0.5
# Live samples wait at least this many times the last scrape's duration: rendering /metrics blocks
# vLLM's API-server loop, and on a 2-core CPU server 1 s scrapes cost ~4% throughput (fidelity.py).
SCRAPE_BUDGET = 100
MAX_GAUGE_REQUESTS = 1e9  # a running/waiting gauge above this is not shown


async def measure_arm(
    *,
    base_url: str,
    model_name: str,
    arm: Arm,
    settings: SweepSettings,
    prompts: PromptSet,
    api_key: str | None = None,
    sample_interval_s: float = 1.0,
    stop: Callable[[list[RequestRecord], float], bool] | None = None,
) -> AsyncGenerator[SweepEvent, None]:
    """`stop(done_records, elapsed_s)`, checked before each request is sent, ends a trial early
    (in-flight requests finish and count). Yield WarmupStarted, Progress, MetricsSampled, MeasurementWarning, then exactly one ArmFinished.

    ArmFinished carries status `failed` (with `error`) when no measured request completed.
    """
    run = _ArmRun(base_url, model_name, arm, settings, prompts, api_key, sample_interval_s)
    run.stop = stop
    # aclosing: a consumer that stops iterating (an arm stopped early) must stop the load now,
    # not when the garbage collector finalizes the nested generators.
    async with aclosing(run.events()) as events:
        async for event in events:
            yield event


class _ArmRun:
    def __init__(self, base_url: str, model_name: str, arm: Arm, settings: SweepSettings, prompts: PromptSet, api_key: str | None, sample_interval_s: float):
        self.base_url = base_url.rstrip("/")
        self.model_name = model_name
        self.arm = arm
        self.settings = settings
        self.prompts = prompts
        self.api_key = api_key
        self.interval = sample_interval_s
        self.warnings: list[str] = []
        self.loads: list[LoadResult] = []
        self.deltas: list[SpecDelta] = []
        self.completed = 0
        self.total = len(prompts.prompts) * max(1, settings.trials)
        self.first_snapshot: MetricsSnapshot | None = None
        self.measure_t0 = 0.0
        self.tokens_so_far = 0
        self.ttfts_ms: list[float] = []  # finished requests so far, for the live percentiles
        self.tpots_ms: list[float] = []
        self.sent = 0
        self.stop: Callable[[list[RequestRecord], float], bool] | None = None
        self.implausible: str | None = None  # the first figure no vLLM server could report: the arm fails
        self.deadlines = Deadlines.default()  # shared by warmups and trials: the warmups measure the token rate
        self.unanswered: str | None = None  # every warmup ended by a deadline: the endpoint is not measured

    def _reject(self, err: ImplausibleFigures) -> None:
        self.implausible = self.implausible or err.one_line()

    def _warn(self, message: str) -> MeasurementWarning:
        self.warnings.append(message)
        return MeasurementWarning(arm_id=self.arm.id, message=message)

    async def events(self) -> AsyncGenerator[SweepEvent, None]:
        started_at = utcnow()
        if not self.prompts.prompts:
            yield self._finished(started_at, None, error="the prompt set is empty")
            return
        for note in self.prompts.notes:
            yield self._warn(note)
        if self.prompts.synthetic and not any("synthetic" in n for n in self.prompts.notes):
            yield self._warn("synthetic prompts: acceptance is biased versus real traffic")
        concurrency = max(1, self.arm.concurrency)
        # run_load opens its own connections (one per in-flight request); /metrics goes through a
        # separate client so that scrapes never queue behind the load.
        side_client = httpx.AsyncClient(timeout=30.0)
        try:
            version = await server_version(self.base_url, self.api_key)
            async with aclosing(self._warmup(concurrency)) as warmup:
                async for event in warmup:
                    yield event
            if self.unanswered:
                yield self._finished(started_at, version, error=self.unanswered)
                return
            for trial in range(max(1, self.settings.trials)):
                if self.implausible:
                    break  # an endpoint that lied once is not measured again
                async with aclosing(self._trial(trial, side_client, concurrency)) as measured:
                    async for event in measured:
                        yield event
        finally:
            await side_client.aclose()
        yield self._finished(started_at, version)

    async def _warmup(self, concurrency: int) -> AsyncGenerator[SweepEvent, None]:
        n = self.settings.warmup
        if n <= 0:
            return
        yield WarmupStarted(arm_id=self.arm.id, requests=n)
        pool = self.prompts.prompts
        warm = self.prompts.model_copy(update={"prompts": [pool[i % len(pool)] for i in range(n)]})
        result = await run_load(
            base_url=self.base_url,
            model_name=self.model_name,
            prompts=warm,
            output_len=self.settings.output_len,
            temperature=self.settings.temperature,
            seed=self.settings.seed,
            concurrency=min(concurrency, n),
            api_key=self.api_key,
            deadlines=self.deadlines,
        )
        self.implausible = self.implausible or next((r.implausible for r in result.records if r.implausible), None)
        if result.records and all(r.timed_out for r in result.records):
            self.unanswered = f"the endpoint did not answer the warmup requests in time ({result.records[0].error}); arm not measured"
        elif result.failed == n:
            yield self._warn(f"all {n} warmup requests failed: {result.records[0].error}")

    async def _trial(self, trial: int, side: httpx.AsyncClient, concurrency: int) -> AsyncGenerator[SweepEvent, None]:
        # Reset also before the first trial: the warmups just cached some of these prompts.
        reset = await reset_prefix_cache(self.base_url, self.api_key)
        if not reset and trial == 1:
            yield self._warn("prefix cache not reset between trials (the server needs VLLM_SERVER_DEV_MODE=1): later trials may be flattered")
        before = await self._scrape(side)
        if trial == 0:
            self.first_snapshot = before
            self.measure_t0 = time.perf_counter()
        if before is None:
            yield self._warn("cannot read /metrics: no acceptance figures and no foreign-traffic check for this trial")

        def on_send() -> None:
            self.sent += 1

        done: list[RequestRecord] = []
        trial_t0 = time.perf_counter()

        def on_done(rec: RequestRecord) -> None:
            self.completed += 1
            self.tokens_so_far += rec.completion_tokens if rec.ok else 0
            if rec.ok and rec.ttft_s is not None:
                self.ttfts_ms.append(rec.ttft_s * 1000)
            if rec.tpot_s is not None:
                self.tpots_ms.append(rec.tpot_s * 1000)
            done.append(rec)

        rule = self.stop
        stop = (lambda: rule(done, time.perf_counter() - trial_t0)) if rule is not None else None

        task = asyncio.create_task(
            run_load(
                base_url=self.base_url,
                model_name=self.model_name,
                prompts=self.prompts,
                output_len=self.settings.output_len,
                temperature=self.settings.temperature,
                seed=self.settings.seed,
                concurrency=concurrency,
                request_rate=self.settings.request_rate,
                api_key=self.api_key,
                on_done=on_done,
                on_send=on_send,
                stop=stop,
                deadlines=self.deadlines,
            )
        )
        try:
            scrape_s = 0.0
            while not task.done():
                await asyncio.wait({task}, timeout=max(self.interval, SCRAPE_BUDGET * scrape_s))
                if task.done():
                    break
                yield self._progress()
                t0 = time.perf_counter()
                sample = await self._sample(side)
                scrape_s = time.perf_counter() - t0
                if sample is not None:
                    yield MetricsSampled(sample=sample)
            load = task.result()
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        after = await self._scrape(side)
        self.loads.append(load)
        self.implausible = self.implausible or next((r.implausible for r in load.records if r.implausible), None)
        yield self._progress()
        warnings = self._trial_warnings(trial, load, before, after)  # first: they check the trial's physics
        final_sample = self._sample_from(after)  # none once the trial's counters were refused
        if final_sample is not None:
            yield MetricsSampled(sample=final_sample)
        for message in warnings:
            yield self._warn(message)

    def _trial_warnings(self, trial: int, load: LoadResult, before: MetricsSnapshot | None, after: MetricsSnapshot | None) -> list[str]:
        label = f"trial {trial + 1}: " if self.settings.trials > 1 else ""
        out = []
        if load.failed:
            first_error = next(r.error for r in load.records if not r.ok)
            out.append(f"{label}{load.failed} of {len(load.records)} requests failed (first: {first_error})")
        clamped = [r for r in load.records if r.clamped]
        if clamped:
            out.append(
                f"{label}{len(clamped)} requests returned {clamped[0].completion_tokens} tokens instead of "
                f"{self.settings.output_len}: output clamped (prompt too long for max_model_len?)"
            )
        shortfall = shortfall_warning(load, len(self.prompts.prompts))
        if shortfall:
            out.append(label + shortfall)
        unverified = sum(1 for r in load.records if r.unverified)
        if unverified:
            out.append(f"{label}{unverified} responses had no usage chunk: output lengths not verified, tokens counted as chunks")
        if before is not None and after is not None:
            try:
                d = delta(before, after)
                if d.spec_enabled:
                    check_speculation(
                        drafts=d.num_drafts,
                        draft_tokens=d.num_draft_tokens,
                        accepted=d.num_accepted_tokens,
                        per_position=d.accepted_per_position,
                        generated=d.generation_tokens,
                        n=self.arm.n,
                        finished=d.requests_succeeded,
                    )
            except ImplausibleFigures as err:
                self._reject(err)
                return out
            self.deltas.append(d)
            # Requests rejected before reaching the engine (HTTP 4xx/5xx) never count as finished.
            if not load.completed <= d.requests_succeeded <= len(load.records):
                out.append(
                    f"{label}the server finished {d.requests_succeeded} requests while {len(load.records)} were sent "
                    f"({load.completed} completed): foreign traffic or lost requests polluted the counters"
                )
            if d.preemptions:
                out.append(f"{label}{d.preemptions} preemptions: KV cache too small for this concurrency")
        return out

    async def _scrape(self, side: httpx.AsyncClient) -> MetricsSnapshot | None:
        try:
            return await scrape(self.base_url, client=side, api_key=self.api_key)
        except ImplausibleFigures as err:
            self._reject(err)
            return None
        except SpecAdvisorError:
            return None

    async def _sample(self, side: httpx.AsyncClient) -> MetricsSample | None:
        return self._sample_from(await self._scrape(side))

    def _sample_from(self, snap: MetricsSnapshot | None) -> MetricsSample | None:
        if snap is None or self.first_snapshot is None or self.implausible:
            return None
        try:
            d = delta(self.first_snapshot, snap)
            if d.spec_enabled:  # a live sample is shown as acceptance too: the same physics, mid-run
                check_speculation(
                    drafts=d.num_drafts,
                    draft_tokens=d.num_draft_tokens,
                    accepted=d.num_accepted_tokens,
                    per_position=d.accepted_per_position,
                    generated=None,
                    n=self.arm.n,
                )
        except ImplausibleFigures as err:
            self._reject(err)
            return None
        return MetricsSample(
            arm_id=self.arm.id,
            t=time.perf_counter() - self.measure_t0,
            generation_tokens=d.generation_tokens,
            num_drafts=d.num_drafts,
            num_draft_tokens=d.num_draft_tokens,
            num_accepted_tokens=d.num_accepted_tokens,
            accepted_per_position=[float(x) for x in d.accepted_per_position],
            requests_running=gauge(snap.values, RUNNING, MAX_GAUGE_REQUESTS),
            requests_waiting=gauge(snap.values, WAITING, MAX_GAUGE_REQUESTS),
            kv_cache_usage=gauge(snap.values, KV_CACHE_USAGE, 1.0),
        )

    def _progress(self) -> Progress:
        elapsed = time.perf_counter() - self.measure_t0
        tput = self.tokens_so_far / elapsed if elapsed > 0 and self.tokens_so_far else None
        return Progress(
            arm_id=self.arm.id,
            completed=self.completed,
            total=self.total,
            output_throughput=tput,
            in_flight=self.sent - self.completed,
            concurrency=max(1, self.arm.concurrency),
            ttft_p50_ms=stats.percentile(self.ttfts_ms, 50),
            ttft_p99_ms=stats.percentile(self.ttfts_ms, 99),
            tpot_p50_ms=stats.percentile(self.tpots_ms, 50),
            tpot_p99_ms=stats.percentile(self.tpots_ms, 99),
        )

    def _finished(self, started_at: datetime | None, version: str | None, error: str | None = None) -> ArmFinished:
        if self.implausible:
            return self._not_measured(started_at, version, self.implausible)
        try:
            result = summarize(self.arm.id, self.loads, self.deltas, self.settings.output_len)
        except ImplausibleFigures as err:
            return self._not_measured(started_at, version, err.one_line())
        result.started_at, result.finished_at, result.vllm_version = started_at, utcnow(), version
        result.warnings = list(self.warnings)
        result.runs = [RunRecord(requests=request_records(self.loads, self.prompts))]  # the runner's run record keeps them
        if error or result.completed == 0:
            result.status = ArmStatus.failed
            first = next((r.error for load in self.loads for r in load.records if r.error), None)
            result.error = error or f"no measured request completed (first error: {first})"
        return ArmFinished(result=result)

    def _not_measured(self, started_at: datetime | None, version: str | None, reason: str) -> ArmFinished:
        """A failed arm with none of the endpoint's figures: nothing it claimed is kept as a measurement."""
        records = [r for load in self.loads for r in load.records]
        result = ArmResult(
            arm_id=self.arm.id,
            status=ArmStatus.failed,
            error=reason,
            completed=0,
            failed=len(records),
            started_at=started_at,
            finished_at=utcnow(),
            vllm_version=version,
            warnings=list(self.warnings),
        )
        return ArmFinished(result=result)


def summarize(arm_id: str, loads: list[LoadResult], deltas: list[SpecDelta], output_len: int) -> ArmResult:
    """Aggregate trials into one ArmResult: latencies over all requests, throughput over trials."""
    records = [r for load in loads for r in load.records]
    ok = [r for r in records if r.ok]
    duration = sum(load.duration_s for load in loads)
    out_tokens = sum(r.completion_tokens for r in ok)
    trial_tputs = [load.output_throughput for load in loads if load.output_throughput is not None]
    if len(trial_tputs) >= 2:
        ci = stats.throughput_ci(trial_tputs)
        basis = f"{len(trial_tputs)} trials" if ci else "trials without spread: no interval"
    elif loads:
        ci, basis = single_run_interval(loads[0])
    else:
        ci, basis = None, ""
    result = ArmResult(
        arm_id=arm_id,
        completed=len(ok),
        failed=len(records) - len(ok),
        duration_s=duration or None,
        output_tokens=out_tokens,
        input_tokens=sum(r.prompt_tokens for r in ok),
        output_throughput=out_tokens / duration if duration > 0 else None,
        output_throughput_ci=ci,
        output_throughput_ci_basis=basis,
        request_throughput=len(ok) / duration if duration > 0 else None,
        achieved_request_rate=_mean([load.achieved_rate for load in loads if load.achieved_rate > 0]),
        achieved_load=achieved_load(loads),
        trials=trial_tputs,
        ttft_ms=stats.latency_stats([r.ttft_s * 1000 for r in ok if r.ttft_s is not None]),
        tpot_ms=stats.latency_stats([r.tpot_s * 1000 for r in ok if r.tpot_s is not None]),
        itl_ms=stats.latency_stats([x * 1000 for r in ok for x in r.itl_s]),
        e2el_ms=stats.latency_stats([r.latency_s * 1000 for r in ok]),
    )
    if deltas and deltas[0].spec_enabled:
        total = _sum_deltas(deltas)
        acceptance(total).apply_to(result)
    return result


def request_records(loads: list[LoadResult], prompts: PromptSet) -> list[DomainRequestRecord]:
    """The measured requests as stored records: each prompt's index in the prompt set (at T=0 every
    arm serves the same prompts in the same order, so an index names the same prompt in every arm),
    its TTFT, end-to-end latency and output tokens; what a prompt-by-prompt comparison needs."""
    index: dict[str, int] = {}
    for i, prompt in enumerate(prompts.prompts):
        index.setdefault(prompt.id or f"#{i}", i)
    out = []
    for load in loads:
        for rec in load.ok_records:
            position = index.get(rec.prompt_id)
            if position is None:
                continue
            ttft = rec.ttft_s * 1000 if rec.ttft_s is not None else None
            out.append(
                DomainRequestRecord(
                    index=position, prompt_id=rec.prompt_id[:64], ttft_ms=ttft, latency_ms=rec.latency_s * 1000, output_tokens=rec.completion_tokens
                )
            )
    return out


def single_run_interval(load: LoadResult) -> tuple[tuple[float, float] | None, str]:
    """(interval, how it was made) for one run: batch means over enough independent windows, or
    no interval at all. A t interval over 2-3 correlated windows of a short run is what once printed
    [-293, 6457] tok/s; saying "no interval" is the honest answer there."""
    ok = load.ok_records
    if not ok:
        return None, ""
    latency = statistics.fmean(max(0.0, r.end_s - r.start_s) for r in ok)
    width = max(MIN_WINDOW_S, latency)
    n = min(MAX_BATCH_WINDOWS, int(load.duration_s / width))
    if n < MIN_WINDOWS:
        return None, (
            f"one trial: no interval (a {load.duration_s:.1f} s run holds fewer than {MIN_WINDOWS} independent "
            f"{width:.1f} s windows; use --trials 3 or more prompts)"
        )
    windows = window_throughputs(load, n)
    if stats.lag1_autocorrelation(windows) > MAX_LAG1:
        return None, "one trial: no interval (its time windows are correlated; use --trials 3)"
    ci = stats.throughput_ci(windows)
    return ci, (f"batch means over {n} windows of {load.duration_s / n:.1f} s" if ci else "one trial: no interval")


def window_throughputs(load: LoadResult, max_windows: int = MAX_WINDOWS) -> list[float]:
    """Output tokens/s in equal time windows (batch means), spreading each request's tokens over its chunks.

    Adjacent windows are correlated, so the t interval over them is a lower bound on the real
    spread; more trials give an honest interval.
    """
    n = min(max_windows, int(load.duration_s))
    if n < 2:
        return []
    width = load.duration_s / n
    tokens = [0.0] * n
    for r in load.ok_records:
        if r.ttft_s is None:
            continue
        times = [r.start_s + r.ttft_s]
        for gap in r.itl_s:
            times.append(times[-1] + gap)
        per_chunk = r.completion_tokens / len(times)
        for t in times:
            idx = min(n - 1, max(0, int((t - load.start_s) / width)))
            tokens[idx] += per_chunk
    return [x / width for x in tokens]


def _sum_deltas(deltas: list[SpecDelta]) -> SpecDelta:
    width = max(len(d.accepted_per_position) for d in deltas)
    return SpecDelta(
        spec_enabled=True,
        num_drafts=sum(d.num_drafts for d in deltas),
        num_draft_tokens=sum(d.num_draft_tokens for d in deltas),
        num_accepted_tokens=sum(d.num_accepted_tokens for d in deltas),
        accepted_per_position=[sum(d.accepted_per_position[i] for d in deltas if i < len(d.accepted_per_position)) for i in range(width)],
        generation_tokens=sum(d.generation_tokens for d in deltas),
        prompt_tokens=sum(d.prompt_tokens for d in deltas),
        requests_succeeded=sum(d.requests_succeeded for d in deltas),
        seconds=sum(d.seconds for d in deltas),
    )


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None
