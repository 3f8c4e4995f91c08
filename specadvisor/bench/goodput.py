"""Goodput: the highest Poisson request rate whose p99 TPOT (and p99 TTFT) meets a latency target.

Capacity is what an operator buys: "at p99 TPOT <= 30 ms this config sustains 14 req/s". Inside one
server launch the rate grows geometrically until the target breaks, then the edge between the last
rate that met it and the first that did not is binary-searched to a relative precision. The search
takes any `measure(rate) -> RatePoint` callable, so it is tested without a server; `measure_at_rate`
is the real one (run_load with Poisson arrivals). No Textual, no engine here.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from specadvisor.bench.loadgen import LoadResult, run_load
from specadvisor.bench.prompts import PromptSet
from specadvisor.domain import RatePoint
from specadvisor.stats import percentile

MIN_SAMPLES = 8  # a p99 from fewer requests is the maximum; still report it, but never below this


@dataclass(frozen=True)
class Slo:
    tpot_ms: float | None = None
    ttft_ms: float | None = None

    def __post_init__(self) -> None:
        if self.tpot_ms is None and self.ttft_ms is None:
            raise ValueError("a goodput search needs a p99 TPOT or TTFT target")

    def met_by(self, tpot_p99_ms: float | None, ttft_p99_ms: float | None, failed: int) -> bool:
        """Met when every target given is met and no request failed (a failure is a broken SLO)."""
        if failed:
            return False
        if self.tpot_ms is not None and (tpot_p99_ms is None or tpot_p99_ms > self.tpot_ms):
            return False
        if self.ttft_ms is not None and (ttft_p99_ms is None or ttft_p99_ms > self.ttft_ms):
            return False
        return True

    def describe(self) -> str:
        parts = []
        if self.tpot_ms is not None:
            parts.append(f"p99 TPOT <= {self.tpot_ms:g} ms")
        if self.ttft_ms is not None:
            parts.append(f"p99 TTFT <= {self.ttft_ms:g} ms")
        return " and ".join(parts)


@dataclass
class GoodputSearch:
    goodput_rps: float | None  # the highest measured rate that met the target; None: not even the lowest
    points: list[RatePoint]  # every rate measured, in the order measured
    bracket: tuple[float, float] | None  # (met, broke) around the edge when the search found one


MeasureRate = Callable[[float], Awaitable[RatePoint]]


async def search_goodput(
    measure: MeasureRate,
    slo: Slo,
    *,
    start_rate: float,
    max_rate: float,
    growth: float = 2.0,
    precision: float = 0.1,
    max_points: int = 10,
    on_point: Callable[[RatePoint], None] | None = None,
) -> GoodputSearch:
    """Grow the rate by `growth` until the SLO breaks (or `max_rate`), then binary-search the edge until
    the bracket is within `precision` (relative) or `max_points` rates have been measured.

    If the first rate already breaks the target the search goes down instead (by `growth`, at most three
    times) to find a rate that meets it. The answer is always a rate that was measured and met the target, never interpolated."""
    if start_rate <= 0 or max_rate < start_rate or growth <= 1 or not 0 < precision < 1:
        raise ValueError("start_rate > 0, max_rate >= start_rate, growth > 1 and 0 < precision < 1 are required")
    points: list[RatePoint] = []

    async def probe(rate: float) -> RatePoint:
        point = await measure(rate)
        points.append(point)
        if on_point is not None:
            on_point(point)
        return point

    met: float | None = None
    broke: float | None = None
    rate = start_rate
    first = await probe(rate)
    if first.meets_slo:
        met = rate
        while len(points) < max_points and rate < max_rate:
            rate = min(max_rate, rate * growth)
            if (await probe(rate)).meets_slo:
                met = rate
            else:
                broke = rate
                break
    else:
        broke = rate
        floor = start_rate / growth**3  # below this the search stops: the target is out of reach here
        while len(points) < max_points and rate / growth >= floor * 0.999:
            rate = rate / growth
            if (await probe(rate)).meets_slo:
                met = rate
                break
            broke = rate
    if met is not None and broke is not None:
        while len(points) < max_points and (broke - met) / broke > precision:
            mid = (met + broke) / 2
            if (await probe(mid)).meets_slo:
                met = mid
            else:
                broke = mid
    return GoodputSearch(goodput_rps=met, points=points, bracket=(met, broke) if met is not None and broke is not None else None)


async def measure_at_rate(
    rate: float,
    *,
    base_url: str,
    model_name: str,
    prompts: PromptSet,
    output_len: int,
    temperature: float,
    seed: int,
    slo: Slo,
    max_in_flight: int = 256,
    api_key: str | None = None,
    window_s: float = 20.0,
    max_requests: int = 200,
) -> RatePoint:
    """Poisson arrivals at `rate` req/s for about `window_s` seconds (the prompt set cycled, never fewer
    than one pass), then the p99 latencies. A fixed handful of requests would never build the queue a
    sustained rate builds: at any rate it is a burst the server drains."""
    count = min(max_requests, max(len(prompts.prompts), math.ceil(rate * window_s)))
    load = await run_load(
        base_url=base_url, model_name=model_name, prompts=cycled(prompts, count), output_len=output_len, temperature=temperature,
        seed=seed, concurrency=max_in_flight, request_rate=rate, api_key=api_key,
    )  # fmt: skip
    return rate_point(rate, load, slo)


def cycled(prompts: PromptSet, count: int) -> PromptSet:
    """The prompt set repeated (in order) to `count` prompts."""
    base = list(prompts.prompts)
    if not base or count <= len(base):
        return prompts.model_copy(update={"prompts": base[: max(count, 0)] if count < len(base) else base})
    return prompts.model_copy(update={"prompts": [base[i % len(base)] for i in range(count)]})


def rate_point(rate: float, load: LoadResult, slo: Slo) -> RatePoint:
    ok = load.ok_records
    tpots = [r.tpot_s * 1000 for r in ok if r.tpot_s is not None]
    ttfts = [r.ttft_s * 1000 for r in ok if r.ttft_s is not None]
    tpot99 = percentile(tpots, 99) if tpots else None
    ttft99 = percentile(ttfts, 99) if ttfts else None
    return RatePoint(
        rate=rate,
        achieved_rate=load.achieved_rate,
        completed=load.completed,
        failed=load.failed,
        output_throughput=load.output_throughput,
        tpot_p50_ms=percentile(tpots, 50) if tpots else None,
        tpot_p99_ms=tpot99,
        ttft_p50_ms=percentile(ttfts, 50) if ttfts else None,
        ttft_p99_ms=ttft99,
        meets_slo=slo.met_by(tpot99, ttft99, load.failed),
    )
