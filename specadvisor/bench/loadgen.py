"""Async load generator: streamed OpenAI-compatible requests with a fixed output length.

It sends what `vllm bench serve` sends (max_tokens + ignore_eos, explicit temperature and seed,
usage in the last chunk) and times requests the same way (TTFT at the first content chunk, latency
at the last one), so that its figures can be compared with that tool's. Token counts come from the
final `usage` chunk because one SSE chunk may carry several tokens under speculation.

The endpoint is not trusted: every request has a deadline on silence and a total one (Deadlines),
its usage must be a token count within max_tokens (specadvisor.physics), and a failure is described in
our words, secrets removed, never as raw exception text.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any
from urllib.parse import urlsplit

import httpx
from pydantic import BaseModel, Field

from specadvisor.bench.prompts import Prompt, PromptSet
from specadvisor.bench.rawhttp import RawConnection, RawHTTPError
from specadvisor.bench.sse import ImplausibleStream, SSEStream, StreamError
from specadvisor.physics import ImplausibleFigures, check_usage
from specadvisor.redact import redact_cut, redact_text

_Job = tuple[str, bytes, str]  # (path, body, prompt id)


class RequestRecord(BaseModel):
    ok: bool
    error: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    ttft_s: float | None = None
    latency_s: float = 0.0  # start to last content chunk (vllm bench serve's definition)
    itl_s: list[float] = Field(default_factory=list)  # gaps between content chunks
    start_s: float = 0.0  # time.perf_counter() when sent
    end_s: float = 0.0  # the last content chunk (or the failure)
    closed_s: float = 0.0  # the stream's end (usage chunk and [DONE] read): the slot is free again
    prompt_id: str = ""
    expected_tokens: int = 0
    timed_out: bool = False  # ended by a deadline (stalled, or a stream that would not end)
    implausible: str | None = None  # what the endpoint claimed that no vLLM server could: fails the arm

    @property
    def unverified(self) -> bool:
        """Succeeded without a usage chunk: the token count is a chunk count, not the server's."""
        return self.ok and self.error is not None

    @property
    def clamped(self) -> bool:
        """The server produced fewer tokens than asked: vLLM silently clamps to max_model_len."""
        return self.ok and not self.unverified and self.completion_tokens != self.expected_tokens

    @property
    def tpot_s(self) -> float | None:
        if not self.ok or self.ttft_s is None or self.completion_tokens < 2:
            return None
        return (self.latency_s - self.ttft_s) / (self.completion_tokens - 1)


class LoadResult(BaseModel):
    records: list[RequestRecord]
    duration_s: float  # first send to last completion
    achieved_rate: float  # requests actually sent per second over the sending span
    requested_rate: float | None = None
    scheduled_rate: float | None = None  # Poisson: the rate of the arrival schedule actually drawn
    concurrency: int = 1  # the cap asked for
    start_s: float = 0.0
    end_s: float = 0.0

    @property
    def ok_records(self) -> list[RequestRecord]:
        return [r for r in self.records if r.ok]

    @property
    def completed(self) -> int:
        return sum(1 for r in self.records if r.ok)

    @property
    def failed(self) -> int:
        return sum(1 for r in self.records if not r.ok)

    @property
    def output_tokens(self) -> int:
        return sum(r.completion_tokens for r in self.records if r.ok)

    @property
    def input_tokens(self) -> int:
        return sum(r.prompt_tokens for r in self.records if r.ok)

    @property
    def output_throughput(self) -> float | None:
        return self.output_tokens / self.duration_s if self.duration_s > 0 else None

    @property
    def request_throughput(self) -> float | None:
        return self.completed / self.duration_s if self.duration_s > 0 else None

    @property
    def mean_in_flight(self) -> float | None:
        """Requests in flight on average over the run (Little's law: the sum of request times over
        the duration). In a closed loop this is the concurrency the server really saw."""
        if self.duration_s <= 0 or not self.records:
            return None
        return sum(max(0.0, max(r.closed_s, r.end_s) - r.start_s) for r in self.records) / self.duration_s


@cache
def _tls_context() -> ssl.SSLContext:
    """Loading the CA bundle costs ~40 ms: do it once, not once per connection."""
    return ssl.create_default_context()


DEFAULT_STALL_TIMEOUT_S = 180.0
# Before any request has finished, an output token is allowed this long (a loaded CPU server makes
# a few per second); after, SLOWDOWN x the slowest seconds per token measured so far.
PRIOR_TOKEN_S = 1.0
SLOWDOWN = 10.0
TIMEOUTS_IN_A_ROW = 3  # this many requests ended by a deadline in a row: the rest are not sent
_ERROR_BODY_BYTES = 4096  # what is read of a non-200 body (a hostile one may never end)


def stall_timeout_s() -> float:
    """The longest silence allowed from a server in the middle of a request (seconds between bytes;
    SPECADVISOR_STALL_TIMEOUT_S overrides). Minutes, because a loaded CPU server may take that long to
    prefill, but not ten: a stalled endpoint fails its arm in minutes, not hours."""
    try:
        value = float(os.environ.get("SPECADVISOR_STALL_TIMEOUT_S", DEFAULT_STALL_TIMEOUT_S))
    except ValueError:
        return DEFAULT_STALL_TIMEOUT_S
    return value if 0 < value < float("inf") else DEFAULT_STALL_TIMEOUT_S


@dataclass
class Deadlines:
    """How long one request may take: `stall_s` of silence, and in total the stall allowance (the
    floor) plus its output length at the measured token rate. A stream that never stops (a chunk
    every 10 ms) is cut at the total; one measurement shares one Deadlines so warmups teach it the rate."""

    stall_s: float
    prior_token_s: float = PRIOR_TOKEN_S
    slowdown: float = SLOWDOWN
    token_s: float | None = None  # the slowest seconds per output token measured so far

    @classmethod
    def default(cls) -> Deadlines:
        return cls(stall_s=stall_timeout_s())

    def total_s(self, output_len: int) -> float:
        """What was measured only ever tightens the prior: an endpoint cannot teach itself a longer
        deadline (a slow first request claiming 1 token made 70 s into 1606 s)."""
        per_token = self.prior_token_s if self.token_s is None else min(self.prior_token_s, self.slowdown * self.token_s)
        return self.stall_s + max(1, output_len) * per_token

    def observe(self, rec: RequestRecord) -> None:
        if rec.ok and not rec.unverified and rec.completion_tokens > 0 and rec.latency_s > 0:
            self.token_s = max(self.token_s or 0.0, rec.latency_s / rec.completion_tokens)


def make_client(concurrency: int) -> httpx.AsyncClient:
    """A pooled HTTP/1.1 client; the read timeout is the stall limit, not a limit on the request."""
    limits = httpx.Limits(max_connections=max(1, concurrency), max_keepalive_connections=max(1, concurrency))
    return httpx.AsyncClient(limits=limits, verify=_tls_context(), timeout=httpx.Timeout(connect=30.0, read=stall_timeout_s(), write=30.0, pool=None))


def build_request(prompt: Prompt, *, model_name: str, output_len: int, temperature: float, seed: int) -> tuple[str, bytes]:
    """(endpoint path, JSON body) for one prompt; chat prompts go to /v1/chat/completions."""
    body: dict[str, Any] = {
        "model": model_name,
        "max_tokens": output_len,
        "ignore_eos": True,
        "stream": True,
        "stream_options": {"include_usage": True},
        "temperature": temperature,
        "seed": seed,
    }
    if prompt.messages is not None:
        body["messages"] = prompt.messages
        path = "/v1/chat/completions"
    else:
        body["prompt"] = prompt.text
        path = "/v1/completions"
    return path, json.dumps(body).encode()


async def send_one(
    client: httpx.AsyncClient,
    url: str,
    body: bytes,
    headers: dict[str, str],
    *,
    expected_tokens: int,
    prompt_id: str = "",
    deadlines: Deadlines | None = None,
) -> RequestRecord:
    """Stream one request through httpx and time it; never raises (a failure is a record with ok=False)."""

    async def exchange() -> tuple[int, AsyncIterator[bytes], Callable[[], Awaitable[object]]]:
        stream = client.stream("POST", url, content=body, headers=headers)
        response = await stream.__aenter__()  # left by _timed's finally, whatever happens in between
        return response.status_code, response.aiter_raw(), lambda: stream.__aexit__(None, None, None)

    return await _timed(exchange, None, deadlines or Deadlines.default(), expected_tokens, prompt_id)


async def send_one_raw(
    conn: RawConnection,
    path: str,
    body: bytes,
    headers: dict[str, str],
    *,
    expected_tokens: int,
    prompt_id: str = "",
    deadlines: Deadlines | None = None,
) -> RequestRecord:
    """Same as send_one over a RawConnection (plain http, the fast path)."""

    async def exchange() -> tuple[int, AsyncIterator[bytes], Callable[[], Awaitable[object]]]:
        status, chunks = await conn.post_stream(path, body, headers)
        return status, chunks, _nothing_to_close

    return await _timed(exchange, conn, deadlines or Deadlines.default(), expected_tokens, prompt_id)


async def _timed(
    exchange: Callable[[], Any],
    conn: RawConnection | None,
    deadlines: Deadlines,
    expected: int,
    prompt_id: str,
) -> RequestRecord:
    """One request under both deadlines: the timer is pushed forward on every read (silence), never
    past start + the total (a stream that does not end)."""
    start = time.perf_counter()
    sse = SSEStream(max_events=expected + 8)  # a role chunk and a finish chunk carry no token
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    stall, total = deadlines.stall_s, deadlines.total_s(expected)
    close: Callable[[], Awaitable[object]] = _nothing_to_close
    try:
        async with asyncio.timeout(min(stall, total)) as timer:
            status, chunks, close = await exchange()
            if status != 200:
                return _failed(start, prompt_id, expected, f"HTTP {status}: {await _error_body(chunks)}", conn=conn)
            async for raw in chunks:
                total = deadlines.total_s(expected)  # tightens once the token rate is measured
                timer.reschedule(min(loop.time() + stall, t0 + total))
                sse.feed(raw, time.perf_counter())
    except (TimeoutError, httpx.TimeoutException):
        if conn is not None:
            conn.close()
        waited = loop.time() - t0
        if waited >= total - 1e-3:
            why = f"the stream did not end within {total:.0f} s ({expected} tokens at the measured rate plus {stall:.0f} s): cut off"
        else:
            why = f"the server sent nothing for {stall:.0f} s (stalled)"
        return _failed(start, prompt_id, expected, why, timed_out=True)
    except Exception as exc:  # noqa: BLE001 - a failure here is reported, never raised
        if conn is not None:
            conn.close()  # the body may be half read: never reuse this connection
        return _failed(start, prompt_id, expected, _request_error(exc), implausible=isinstance(exc, ImplausibleStream))
    finally:
        with contextlib.suppress(Exception):  # closing a broken response must not mask its failure
            await close()
    return _record(start, sse, prompt_id, expected)


async def _nothing_to_close() -> None:
    return None


async def _error_body(chunks: AsyncIterator[bytes]) -> str:
    """The first bytes of an error body, secrets removed before it is cut (a key echoed in a 401 must
    not survive half)."""
    head = bytearray()
    async for piece in chunks:
        head += piece
        if len(head) >= _ERROR_BODY_BYTES:
            break
    text = head[:_ERROR_BODY_BYTES].decode("utf-8", errors="replace")
    return (redact_cut(text) if len(head) >= _ERROR_BODY_BYTES else redact_text(text)).strip()[:200]


def _request_error(exc: BaseException) -> str:
    """One line in our words for a request that broke: no raw exception text reaches a result."""
    if isinstance(exc, StreamError):
        return str(exc)
    if isinstance(exc, RawHTTPError):
        return f"the endpoint broke the HTTP exchange ({exc})"
    if isinstance(exc, asyncio.IncompleteReadError):
        return "the server closed the connection mid-response"
    if isinstance(exc, (httpx.HTTPError, OSError)):
        return f"the connection to the endpoint failed ({type(exc).__name__})"
    if isinstance(exc, (ValueError, asyncio.LimitOverrunError)):
        return "the endpoint's HTTP response was malformed (status line, header or chunk size)"
    return f"the request failed unexpectedly ({type(exc).__name__})"


def _failed(
    start: float, prompt_id: str, expected: int, error: str, *, conn: RawConnection | None = None, timed_out: bool = False, implausible: bool = False
) -> RequestRecord:
    if conn is not None:
        conn.close()  # an error body may be left unread
    error = redact_text(error)[:300]
    return RequestRecord(
        ok=False,
        error=error,
        start_s=start,
        end_s=time.perf_counter(),
        prompt_id=prompt_id,
        expected_tokens=expected,
        timed_out=timed_out,
        implausible=error if implausible else None,
    )


def _record(start: float, sse: SSEStream, prompt_id: str, expected: int) -> RequestRecord:
    if sse.first is None:
        return _failed(start, prompt_id, expected, "the stream carried no content chunk")
    if not sse.done:  # vLLM always ends a stream with [DONE]: without it the response was cut off
        return _failed(start, prompt_id, expected, "the server closed the stream before [DONE] (cut off mid-response)")
    last = sse.last if sse.last is not None else sse.first  # set together with `first`
    rec = RequestRecord(
        ok=True,
        start_s=start,
        end_s=last,
        ttft_s=sse.first - start,
        latency_s=last - start,
        itl_s=sse.itl,
        prompt_id=prompt_id,
        expected_tokens=expected,
        closed_s=time.perf_counter(),
    )
    if sse.usage is not None:
        try:
            rec.completion_tokens, rec.prompt_tokens = check_usage(sse.usage, expected)
        except ImplausibleFigures as err:
            return _failed(start, prompt_id, expected, err.one_line(), implausible=True)
    else:
        rec.error = "no usage chunk: output length not verified"
        rec.completion_tokens = min(len(sse.itl) + 1, expected)
    return rec


class _Senders:
    """One connection per in-flight request, handed out from a free list.

    httpcore's pool rescans every connection on each request and response event (O(concurrency)
    per chunk): at concurrency 64 that capped the client at a quarter of `vllm bench serve`'s
    rate. Plain-http servers get RawConnections (the fast path), https ones single-connection
    httpx clients; a caller-supplied httpx client (tests, proxies) is shared as given.
    """

    def __init__(
        self, base_url: str, size: int, shared: httpx.AsyncClient | None, on_send: Callable[[], None] | None = None, deadlines: Deadlines | None = None
    ):
        self.base = base_url.rstrip("/")
        self.on_send = on_send
        self.deadlines = deadlines or Deadlines.default()
        self.shared = shared
        self.raw = shared is None and self.base.startswith("http://")
        if shared is not None:
            self.owned: list[Any] = []
        elif self.raw:
            self.owned = [RawConnection.for_url(self.base) for _ in range(size)]
        else:
            self.owned = [make_client(1) for _ in range(size)]
        self.prefix = urlsplit(self.base).path.rstrip("/") if self.raw else ""  # a server behind a path prefix
        self.free: asyncio.LifoQueue[Any] = asyncio.LifoQueue()
        for c in self.owned:
            self.free.put_nowait(c)

    async def send(self, path: str, body: bytes, headers: dict[str, str], expected: int, pid: str) -> RequestRecord:
        if self.on_send is not None:
            self.on_send()
        limits = self.deadlines
        if self.shared is not None:
            return await send_one(self.shared, self.base + path, body, headers, expected_tokens=expected, prompt_id=pid, deadlines=limits)
        conn = await self.free.get()
        try:
            if self.raw:
                return await send_one_raw(conn, self.prefix + path, body, headers, expected_tokens=expected, prompt_id=pid, deadlines=limits)
            return await send_one(conn, self.base + path, body, headers, expected_tokens=expected, prompt_id=pid, deadlines=limits)
        finally:
            self.free.put_nowait(conn)

    async def aclose(self) -> None:
        for c in self.owned:
            if self.raw:
                c.close()
            else:
                await c.aclose()


async def run_load(
    *,
    base_url: str,
    model_name: str,
    prompts: PromptSet,
    output_len: int,
    temperature: float,
    seed: int,
    concurrency: int,
    request_rate: float | None = None,
    api_key: str | None = None,
    on_done: Callable[[RequestRecord], None] | None = None,
    client: httpx.AsyncClient | None = None,
    on_send: Callable[[], None] | None = None,
    stop: Callable[[], bool] | None = None,
    deadlines: Deadlines | None = None,
) -> LoadResult:
    """Send every prompt once, at most `concurrency` in flight, optionally with Poisson arrivals.
    `stop` (checked before each send) ends the load early: nothing new is sent, in-flight requests finish.
    So do TIMEOUTS_IN_A_ROW requests ended by a deadline: a stalled endpoint costs minutes, not
    a deadline per prompt."""
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    jobs: list[_Job] = []
    for p in prompts.prompts:
        path, body = build_request(p, model_name=model_name, output_len=output_len, temperature=temperature, seed=seed)
        jobs.append((path, body, p.id))
    limits = deadlines or Deadlines.default()
    timeouts = [0]  # ended by a deadline, in a row

    def halted() -> bool:
        return timeouts[0] >= TIMEOUTS_IN_A_ROW or (stop is not None and stop())

    queue = _Until(jobs, halted)
    records: list[RequestRecord] = []

    def finish(rec: RequestRecord) -> None:
        records.append(rec)
        timeouts[0] = timeouts[0] + 1 if rec.timed_out else 0
        limits.observe(rec)
        if on_done is not None:
            on_done(rec)

    pool = _Senders(base_url, min(concurrency, max(1, len(jobs))), client, on_send, limits)
    scheduled: float | None = None
    start = time.perf_counter()
    try:
        if request_rate is None or request_rate == float("inf"):
            await _closed_loop(pool, queue, headers, output_len, concurrency, finish)
        else:
            scheduled = await _poisson(pool, queue, headers, output_len, concurrency, request_rate, seed, finish)
    finally:
        await pool.aclose()
    end = time.perf_counter()
    return LoadResult(
        records=records,
        duration_s=end - start,
        achieved_rate=_achieved_rate(records),
        requested_rate=request_rate,
        scheduled_rate=scheduled,
        concurrency=concurrency,
        start_s=start,
        end_s=end,
    )


async def _closed_loop(
    pool: _Senders, jobs: _Until, headers: dict[str, str], output_len: int, concurrency: int, finish: Callable[[RequestRecord], None]
) -> None:
    """`concurrency` workers pull the next prompt as soon as they finish: no task per request."""
    queue = iter(jobs)

    async def worker() -> None:
        for path, body, pid in queue:
            finish(await pool.send(path, body, headers, output_len, pid))

    await asyncio.gather(*(worker() for _ in range(min(concurrency, len(jobs)))))


async def _poisson(
    pool: _Senders,
    jobs: _Until,
    headers: dict[str, str],
    output_len: int,
    concurrency: int,
    rate: float,
    seed: int,
    finish: Callable[[RequestRecord], None],
) -> float | None:
    """Arrivals follow a Poisson process; requests beyond `concurrency` wait at the client, as in vLLM.
    Returns the rate of the drawn schedule ((n - 1) gaps over its span), the figure the achieved
    send rate should match when neither the client nor the concurrency cap held requests back."""
    rng = random.Random(seed)
    gate = asyncio.Semaphore(concurrency)

    async def one(path: str, body: bytes, pid: str) -> None:
        async with gate:
            finish(await pool.send(path, body, headers, output_len, pid))

    tasks = []
    first_at = next_at = time.perf_counter()
    last_at = first_at
    for path, body, pid in jobs:
        delay = next_at - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(path, body, pid)))
        last_at = next_at
        next_at += rng.expovariate(rate)
    await asyncio.gather(*tasks)
    span = last_at - first_at
    return (len(tasks) - 1) / span if len(tasks) > 1 and span > 0 else None  # tasks: what was sent (stop may end early)


class _Until:
    """The jobs, until `stop()` says the answer is known (sized like the list for worker counts)."""

    def __init__(self, jobs: list[_Job], stop: Callable[[], bool]):
        self.jobs, self.stop = jobs, stop

    def __len__(self) -> int:
        return len(self.jobs)

    def __iter__(self) -> Iterator[_Job]:
        for job in self.jobs:
            if self.stop():
                return
            yield job


def _achieved_rate(records: list[RequestRecord]) -> float:
    """Requests per second actually sent: (n - 1) intervals over the span of send times."""
    if len(records) < 2:
        return 0.0
    starts = sorted(r.start_s for r in records)
    span = starts[-1] - starts[0]
    return (len(starts) - 1) / span if span > 0 else 0.0
