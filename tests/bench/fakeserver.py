"""A small OpenAI-compatible SSE server speaking vLLM's wire format, for tests and the client benchmark.

A fake at the network boundary only: the client under test talks real HTTP/1.1 over TCP to it.
It streams completions (several tokens per chunk when speculation is simulated), keeps vLLM-style
Prometheus counters (two engines, `_created` samples), and answers /tokenize, /version and
/reset_prefix_cache. Prompts containing FAIL500 get an HTTP 500; MIDERR gets an error event.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from dataclasses import dataclass, field


@dataclass
class FakeConfig:
    chunk_delay_s: float = 0.0  # per SSE chunk; 0 = as fast as possible
    ttft_s: float = 0.0
    num_spec_tokens: int = 0  # 0 = no speculation metrics at all (like a baseline server)
    accept_pattern: tuple[int, ...] = (3, 1, 4, 0, 2)  # accepted tokens per step, cycled
    max_model_len: int = 2048
    reset_available: bool = True
    comment_every: int = 4  # an SSE ":" comment line every N chunks (0 = never)
    version: str = "0.32.0-fake"
    close_after_response: bool = False  # drop keep-alive connections silently (as idle timeouts do)
    metrics_delay_s: float = 0.0  # time to render /metrics (vLLM's blocks its API-server loop)
    path_prefix: str = ""  # served behind a reverse proxy at this prefix
    yield_every: int = 1  # instant mode: let other streams run every N chunks (larger = cheaper server)


@dataclass
class FakeState:
    drafts: int = 0
    draft_tokens: int = 0
    accepted: int = 0
    per_pos: list[int] = field(default_factory=list)
    generation_tokens: int = 0
    prompt_tokens: int = 0
    success: int = 0
    running: int = 0
    resets: int = 0
    requests: list[dict] = field(default_factory=list)


def prompt_token_count(body: dict) -> int:
    """One token per whitespace-separated word: stable and easy to reason about in tests."""
    if "messages" in body:
        return 3 + sum(len(str(m.get("content", "")).split()) for m in body["messages"])
    return len(str(body.get("prompt", "")).split())


class FakeServer:
    def __init__(self, config: FakeConfig | None = None, record_requests: bool = True):
        self.config = config or FakeConfig()
        self.state = FakeState(per_pos=[0] * self.config.num_spec_tokens)
        self.record_requests = record_requests
        self._server: asyncio.base_events.Server | None = None
        self.port = 0
        self._step = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self, port: int = 0) -> FakeServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", port, backlog=1024)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    def add_foreign_requests(self, n: int) -> None:
        """Someone else's traffic: counters move without our client sending anything."""
        self.state.success += n
        self.state.generation_tokens += 10 * n

    # ------------------------------------------------------------------ HTTP/1.1 plumbing

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {k.strip().lower(): v.strip() for k, v in (ln.split(":", 1) for ln in lines[1:] if ":" in ln)}
                length = int(headers.get("content-length", "0"))
                body = await reader.readexactly(length) if length else b""
                route = path.split("?")[0]
                if self.config.path_prefix and route.startswith(self.config.path_prefix):
                    route = route[len(self.config.path_prefix) :]
                await self._route(method, route, body, writer)
                if self.config.close_after_response:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError, asyncio.CancelledError):
            pass  # client went away, or the test's loop is shutting down
        finally:
            writer.close()

    @staticmethod
    def _send(writer, status: int, payload: bytes, content_type: str = "application/json") -> None:
        reason = {200: "OK", 404: "Not Found", 500: "Internal Server Error"}.get(status, "Error")
        writer.write(f"HTTP/1.1 {status} {reason}\r\ncontent-type: {content_type}\r\ncontent-length: {len(payload)}\r\n\r\n".encode() + payload)

    async def _route(self, method: str, path: str, body: bytes, writer) -> None:
        if method == "POST" and path in ("/v1/completions", "/v1/chat/completions"):
            await self._stream(json.loads(body), path.endswith("chat/completions"), writer)
        elif method == "GET" and path == "/metrics":
            if self.config.metrics_delay_s:
                await asyncio.sleep(self.config.metrics_delay_s)
            self._send(writer, 200, self.metrics_text().encode(), "text/plain; version=0.0.4")
        elif method == "POST" and path == "/tokenize":
            data = json.loads(body)
            n = prompt_token_count(data)
            self._send(writer, 200, json.dumps({"count": n, "max_model_len": self.config.max_model_len, "tokens": list(range(n))}).encode())
        elif method == "GET" and path == "/version":
            self._send(writer, 200, json.dumps({"version": self.config.version}).encode())
        elif method == "POST" and path == "/reset_prefix_cache" and self.config.reset_available:
            self.state.resets += 1
            self._send(writer, 200, b"")
        else:
            self._send(writer, 404, b'{"detail":"Not Found"}')
        await writer.drain()

    # ------------------------------------------------------------------ completions

    async def _stream(self, req: dict, chat: bool, writer) -> None:
        cfg, st = self.config, self.state
        if self.record_requests:
            st.requests.append(req)
        text = json.dumps(req.get("messages") or req.get("prompt"))
        if "FAIL500" in text:
            self._send(writer, 500, b'{"error":{"message":"boom"}}')
            return
        prompt_tokens = prompt_token_count(req)
        want = int(req.get("max_tokens", 16))
        n_out = max(1, min(want, cfg.max_model_len - prompt_tokens))  # vLLM clamps silently
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
        st.running += 1
        obj = "chat.completion.chunk" if chat else "text_completion"
        if chat:
            piece = b'data: {"id":"c1","object":"%s","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"%s"},"logprobs":null,"finish_reason":null}]}\n\n'
        else:
            piece = b'data: {"id":"c1","object":"%s","created":1,"model":"m","choices":[{"index":0,"text":"%s","logprobs":null,"finish_reason":null}]}\n\n'
        if cfg.ttft_s:
            await asyncio.sleep(cfg.ttft_s)
        sent, chunks = 0, 0
        while sent < n_out:
            if "MIDERR" in text and sent > 0:
                self._chunk(writer, b'data: {"error":{"message":"engine died","type":"InternalServerError","code":500}}\n\n')
                break
            step = self._spec_step(n_out - sent)
            sent += step
            chunks += 1
            self._chunk(writer, piece % (obj.encode(), b"tok" * step))
            if cfg.comment_every and chunks % cfg.comment_every == 0:
                self._chunk(writer, b": ping\n\n")
            if cfg.chunk_delay_s:
                await asyncio.sleep(cfg.chunk_delay_s)
            elif chunks % cfg.yield_every == 0:
                await writer.drain()
                await asyncio.sleep(0)
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": sent, "total_tokens": prompt_tokens + sent}
        self._chunk(
            writer,
            b'data: {"id":"c1","object":"%s","created":1,"model":"m","choices":[],"usage":%s}\n\n'
            % (obj.encode(), json.dumps(usage, separators=(",", ":")).encode()),
        )
        self._chunk(writer, b"data: [DONE]\n\n")
        writer.write(b"0\r\n\r\n")
        st.running -= 1
        st.prompt_tokens += prompt_tokens
        st.generation_tokens += sent
        st.success += 1

    @staticmethod
    def _chunk(writer, data: bytes) -> None:
        writer.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _spec_step(self, remaining: int) -> int:
        """Tokens emitted by one engine step: 1 without speculation, 1 + accepted with it."""
        k = self.config.num_spec_tokens
        if not k:
            return 1
        a = min(self.config.accept_pattern[self._step % len(self.config.accept_pattern)], k)
        self._step += 1
        st = self.state
        st.drafts += 1
        st.draft_tokens += k
        st.accepted += a
        for i in range(a):
            st.per_pos[i] += 1
        return min(remaining, a + 1)

    # ------------------------------------------------------------------ /metrics

    def metrics_text(self) -> str:
        """vLLM 0.32 layout; the counts are split 1/3 + 2/3 across two engines to exercise summing."""
        st, created = self.state, 1764400000.0
        out: list[str] = []

        def counter(name: str, value: int, extra: str = "") -> None:
            a = value // 3
            for engine, v in (("0", a), ("1", value - a)):
                labels = f'engine="{engine}",model_name="m"{extra}'
                out.append(f"vllm:{name}_total{{{labels}}} {float(v)}")
                out.append(f"vllm:{name}_created{{{labels}}} {created}")

        def family(name: str, kind: str) -> None:
            out.append(f"# HELP vllm:{name} fake help.")
            out.append(f"# TYPE vllm:{name} {kind}")

        family("num_requests_running", "gauge")
        out.append(f'vllm:num_requests_running{{engine="0",model_name="m"}} {float(st.running)}')
        family("num_requests_waiting", "gauge")
        out.append('vllm:num_requests_waiting{engine="0",model_name="m"} 0.0')
        family("kv_cache_usage_perc", "gauge")
        out.append(f'vllm:kv_cache_usage_perc{{engine="0",model_name="m"}} {0.01 * st.running}')
        family("generation_tokens", "counter")
        counter("generation_tokens", st.generation_tokens)
        family("prompt_tokens", "counter")
        counter("prompt_tokens", st.prompt_tokens)
        family("request_success", "counter")
        counter("request_success", st.success, ',finished_reason="length"')
        counter("request_success", 0, ',finished_reason="stop"')
        if self.config.num_spec_tokens:
            family("spec_decode_num_drafts", "counter")
            counter("spec_decode_num_drafts", st.drafts)
            family("spec_decode_num_draft_tokens", "counter")
            counter("spec_decode_num_draft_tokens", st.draft_tokens)
            family("spec_decode_num_accepted_tokens", "counter")
            counter("spec_decode_num_accepted_tokens", st.accepted)
            family("spec_decode_num_accepted_tokens_per_pos", "counter")
            for i, v in enumerate(st.per_pos):
                counter("spec_decode_num_accepted_tokens_per_pos", v, f',position="{i}"')
        family("e2e_request_latency_seconds", "histogram")
        out.append('vllm:e2e_request_latency_seconds_bucket{engine="0",le="1.0",model_name="m"} 3.0')
        out.append('vllm:e2e_request_latency_seconds_count{engine="0",model_name="m"} 3.0')
        out.append('vllm:e2e_request_latency_seconds_sum{engine="0",model_name="m"} 1.5')
        return "\n".join(out) + "\n"


async def _serve_forever(args: argparse.Namespace) -> None:
    server = await FakeServer(
        FakeConfig(chunk_delay_s=args.chunk_delay, num_spec_tokens=args.spec_tokens, comment_every=0, yield_every=args.yield_every),
        record_requests=False,
    ).start(args.port)
    print(f"fake SSE server on {server.base_url}", flush=True)
    t0 = time.time()
    while time.time() - t0 < args.lifetime:
        await asyncio.sleep(1)


def main() -> None:
    parser = argparse.ArgumentParser(description="fake vLLM-compatible SSE server")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--chunk-delay", type=float, default=0.0)
    parser.add_argument("--spec-tokens", type=int, default=0)
    parser.add_argument("--lifetime", type=float, default=3600.0)
    parser.add_argument("--yield-every", type=int, default=1)
    parser.add_argument("--uvloop", action="store_true")
    args = parser.parse_args()
    if args.uvloop:
        import uvloop

        uvloop.install()
    asyncio.run(_serve_forever(args))


if __name__ == "__main__":
    main()
