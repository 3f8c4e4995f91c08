"""Async load generator: streamed OpenAI-compatible requests with a fixed output length.

It sends what `vllm bench serve` sends (max_tokens + ignore_eos, explicit temperature and seed,
usage in the last chunk) and times requests the same way (TTFT at the first content chunk, latency
at the last one), so that its figures can be compared with that tool's. Token counts come from the
final `usage` chunk because one SSE chunk may carry several tokens under speculation.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable
from typing import Any

import httpx
from pydantic import BaseModel, Field

from specadvisor.bench.prompts import Prompt, PromptSet


class RequestRecord(BaseModel):
    ok: bool
    error: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    ttft_s: float | None = None
    latency_s: float = 0.0  # start to last content chunk (vllm bench serve's definition)
    itl_s: list[float] = Field(default_factory=list)  # gaps between content chunks
    start_s: float = 0.0  # time.perf_counter() when sent
    end_s: float = 0.0
    prompt_id: str = ""
    expected_tokens: int = 0

    @property
    def clamped(self) -> bool:
        """The server produced fewer tokens than asked: vLLM silently clamps to max_model_len."""
        return self.ok and self.completion_tokens != self.expected_tokens

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


def make_client(concurrency: int) -> httpx.AsyncClient:
    """One pooled HTTP/1.1 client; no read timeout because a CPU server may take minutes per request."""
    limits = httpx.Limits(max_connections=max(1, concurrency), max_keepalive_connections=max(1, concurrency))
    return httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(connect=30.0, read=None, write=30.0, pool=None))


def build_request(
    prompt: Prompt, *, model_name: str, output_len: int, temperature: float, seed: int
) -> tuple[str, bytes]:
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


_CONTENT_MARKER = b'"choices":[{'  # vLLM's compact JSON: a chunk carrying a choice, no need to parse it


async def send_one(
    client: httpx.AsyncClient,
    url: str,
    body: bytes,
    headers: dict[str, str],
    *,
    expected_tokens: int,
    prompt_id: str = "",
) -> RequestRecord:
    """Stream one request and time it; never raises (a failure is a record with ok=False)."""
    start = time.perf_counter()
    rec = RequestRecord(ok=False, start_s=start, prompt_id=prompt_id, expected_tokens=expected_tokens)
    first = last = None
    itl: list[float] = []
    usage: dict[str, Any] | None = None
    try:
        async with client.stream("POST", url, content=body, headers=headers) as response:
            if response.status_code != 200:
                detail = (await response.aread())[:200].decode("utf-8", errors="replace").strip()
                rec.error = f"HTTP {response.status_code}: {detail}"
                rec.end_s = time.perf_counter()
                return rec
            buffer = b""
            async for raw in response.aiter_raw():
                now = time.perf_counter()
                buffer += raw
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if not line.startswith(b"data:"):
                        continue  # blank separators, ":" comments, event:/id: fields
                    data = line[5:].strip()
                    if data == b"[DONE]":
                        continue
                    if _CONTENT_MARKER not in data:
                        chunk = json.loads(data)
                        if chunk.get("error") or chunk.get("object") == "error":
                            err = chunk.get("error") or chunk
                            raise RuntimeError(f"server error mid-stream: {err.get('message', err) if isinstance(err, dict) else err}")
                        if chunk.get("usage"):
                            usage = chunk["usage"]
                        if not chunk.get("choices"):
                            continue
                    if first is None:
                        first = now
                    else:
                        itl.append(now - last)
                    last = now
    except Exception as exc:  # network errors, server errors, malformed JSON: all end this request only
        rec.error = f"{type(exc).__name__}: {exc}"[:300]
        rec.end_s = time.perf_counter()
        return rec
    rec.end_s = last if last is not None else time.perf_counter()
    if first is None:
        rec.error = "the stream carried no content chunk"
        return rec
    rec.ok = True
    rec.ttft_s = first - start
    rec.latency_s = last - start
    rec.itl_s = itl
    if usage:
        rec.completion_tokens = int(usage.get("completion_tokens") or 0)
        rec.prompt_tokens = int(usage.get("prompt_tokens") or 0)
    else:
        rec.error = "no usage chunk: output length not verified"
        rec.completion_tokens = len(itl) + 1
    return rec


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
) -> LoadResult:
    """Send every prompt once, at most `concurrency` in flight, optionally with Poisson arrivals."""
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    base = base_url.rstrip("/")
    jobs = []
    for p in prompts.prompts:
        path, body = build_request(p, model_name=model_name, output_len=output_len, temperature=temperature, seed=seed)
        jobs.append((base + path, body, p.id))
    records: list[RequestRecord] = []

    def finish(rec: RequestRecord) -> None:
        records.append(rec)
        if on_done is not None:
            on_done(rec)

    own = client is None
    http = client or make_client(concurrency)
    start = time.perf_counter()
    try:
        if request_rate is None or request_rate == float("inf"):
            await _closed_loop(http, jobs, headers, output_len, concurrency, finish)
        else:
            await _poisson(http, jobs, headers, output_len, concurrency, request_rate, seed, finish)
    finally:
        if own:
            await http.aclose()
    end = time.perf_counter()
    return LoadResult(
        records=records,
        duration_s=end - start,
        achieved_rate=_achieved_rate(records),
        requested_rate=request_rate,
        start_s=start,
        end_s=end,
    )


async def _closed_loop(http, jobs, headers, output_len, concurrency, finish) -> None:
    """`concurrency` workers pull the next prompt as soon as they finish: no task per request."""
    queue = iter(jobs)

    async def worker() -> None:
        for url, body, pid in queue:
            finish(await send_one(http, url, body, headers, expected_tokens=output_len, prompt_id=pid))

    await asyncio.gather(*(worker() for _ in range(min(concurrency, len(jobs)))))


async def _poisson(http, jobs, headers, output_len, concurrency, rate, seed, finish) -> None:
    """Arrivals follow a Poisson process; requests beyond `concurrency` wait at the client, as in vLLM."""
    rng = random.Random(seed)
    gate = asyncio.Semaphore(concurrency)

    async def one(url: str, body: bytes, pid: str) -> None:
        async with gate:
            finish(await send_one(http, url, body, headers, expected_tokens=output_len, prompt_id=pid))

    tasks = []
    next_at = time.perf_counter()
    for url, body, pid in jobs:
        delay = next_at - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(url, body, pid)))
        next_at += rng.expovariate(rate)
    await asyncio.gather(*tasks)


def _achieved_rate(records: list[RequestRecord]) -> float:
    """Requests per second actually sent: (n - 1) intervals over the span of send times."""
    if len(records) < 2:
        return 0.0
    starts = sorted(r.start_s for r in records)
    span = starts[-1] - starts[0]
    return (len(starts) - 1) / span if span > 0 else 0.0
