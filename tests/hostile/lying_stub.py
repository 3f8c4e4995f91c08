"""A vLLM look-alike on 127.0.0.1 that streams well-formed responses but lies in its figures or
never stops: the endpoint-physics, deadline and echoed-secret cases of the hostile suite.

A fake at the network boundary only (real HTTP over TCP, a thread per connection, like hostile_stub).
Honest by default: /metrics counts what it streamed (output_len tokens per request, drafts of N=3
with half the draft tokens accepted); each keyword replaces one figure or one behaviour with a lie.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

N = 3

Counters = dict[str, float]


def honest_counters(requests: int, output_len: int) -> Counters:
    """What a vLLM server with N=3 reports after `requests` finished requests of `output_len` tokens."""
    drafts = requests * max(1, output_len // 2)
    return {
        "vllm:generation_tokens_total": requests * output_len,
        "vllm:prompt_tokens_total": requests * 7,
        "vllm:request_success_total": requests,
        "vllm:spec_decode_num_drafts_total": drafts,
        "vllm:spec_decode_num_draft_tokens_total": drafts * N,
        "vllm:spec_decode_num_accepted_tokens_total": drafts,
    }


def exposition(counters: Counters, per_position: list[float] | None, extra: str = "") -> str:
    """Prometheus text for the counters (one engine), per-position acceptance labelled by position."""
    lines = []
    for name, value in counters.items():
        base = name.removesuffix("_total")
        lines += [
            f"# TYPE {base} counter",
            f'{name}{{engine="0",model_name="m"}} {value!r}' if isinstance(value, float) else f'{name}{{engine="0",model_name="m"}} {value}',
        ]
    if per_position is not None:
        lines.append("# TYPE vllm:spec_decode_num_accepted_tokens_per_pos counter")
        for pos, value in enumerate(per_position):
            lines.append(f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{engine="0",position="{pos}"}} {value}')
    return "\n".join(lines) + "\n" + extra


class LyingEndpoint:
    """`counters(requests, output_len, scrape_no)` -> the counters to report (default: honest);
    `usage(output_len)` -> the usage object of each stream; `stream`: "ok", "forever" (a content-less
    keep-alive chunk every 10 ms, never [DONE]), "tokens-forever" (a token every 10 ms),
    "long-line" (64 KB pieces without a newline); `reject_key`: POSTs answer 401 echoing the key sent;
    `get_forever`: GET paths whose body never ends."""

    def __init__(
        self,
        *,
        counters: Callable[[int, int, int], Counters] | None = None,
        per_position: Callable[[int, int], list[float]] | None = None,
        metrics_extra: str = "",
        usage: Callable[[int], object] | None = None,
        stream: str = "ok",
        reject_key: bool = False,
        output_len: int = 4,
        get_forever: tuple[str, ...] = (),
        server_info: object = None,
        metrics_text: str | None = None,
        reject_template: str | None = None,
    ):
        self.counters = counters or (lambda r, n, _s: honest_counters(r, n))
        self.per_position = per_position or (lambda r, n: [float(r * max(1, n // 2)), 0.0, 0.0])  # returning None: no series
        self.metrics_extra, self.stream, self.reject_key, self.output_len = metrics_extra, stream, reject_key, output_len
        # GET paths whose body never ends: 4 KB every 10 ms, so the 16 MiB read cap is 40 s away and
        # only the deadline can end the wait (64 KB every 10 ms reached the cap in 2.6 s, before a 3 s limit)
        self.get_forever = get_forever
        default_info = {"vllm_config": {"speculative_config": {"method": "ngram", "num_speculative_tokens": N}}}
        # a JSON-able value, bytes sent as they are, or False: no /server_info (404)
        self.server_info = default_info if server_info is None else server_info
        self.metrics_text = metrics_text  # sent instead of the counters' exposition (identification, parsing)
        self.reject_template = reject_template  # with reject_key: the 401 body, `{key}` and `{escaped_key}` (JSON's `\/`) filled in
        self.usage = usage or (lambda n: {"prompt_tokens": 7, "completion_tokens": n, "total_tokens": n + 7})
        self.finished = 0
        self.scrapes = 0
        self.posts = 0
        self.stop_event = threading.Event()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                path = self.path.split("?")[0]
                if path in stub.get_forever:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    try:
                        self.wfile.write(b'{"data": [')
                        while not stub.stop_event.wait(0.01):
                            self.wfile.write(b" " * 4096)
                            self.wfile.flush()
                    except OSError:
                        pass
                    self.close_connection = True
                elif path == "/v1/models":
                    self._send(200, json.dumps({"data": [{"id": "stub-model", "max_model_len": 4096}]}).encode())
                elif path == "/health":
                    self._send(200, b"")
                elif path == "/version":
                    self._send(200, b'{"version": "0.32.0"}')
                elif path == "/server_info" and stub.server_info is not False:
                    info = stub.server_info
                    self._send(200, info if isinstance(info, bytes) else json.dumps(info).encode())
                elif path == "/metrics" and stub.metrics_text is not None:
                    self._send(200, stub.metrics_text.encode(), "text/plain")
                elif path == "/metrics":
                    stub.scrapes += 1
                    counters = stub.counters(stub.finished, stub.output_len, stub.scrapes)
                    text = exposition(counters, stub.per_position(stub.finished, stub.output_len), stub.metrics_extra)
                    self._send(200, text.encode(), "text/plain")
                else:
                    self._send(404, b'{"detail":"Not Found"}')

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path == "/reset_prefix_cache":
                    self._send(200, b"")
                    return
                stub.posts += 1
                if stub.reject_key:
                    key = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
                    if stub.reject_template is not None:
                        self._send(401, stub.reject_template.format(key=key, escaped_key=key.replace("/", "\\/")).encode())
                        return
                    message = f"Incorrect API key provided: {key}. You can find your API key at https://example.invalid/keys."
                    self._send(401, json.dumps({"error": {"message": message, "type": "invalid_request_error"}}).encode())
                    return
                n = int(body.get("max_tokens") or stub.output_len)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                with contextlib.suppress(OSError):  # the client cut the stream off: the point of some cases
                    stub._stream(self.wfile, n)
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _stream(self, out, n: int) -> None:
        def chunk(text: str) -> bytes:
            return b"data: " + json.dumps({"choices": [{"index": 0, "text": text, "finish_reason": None}]}, separators=(",", ":")).encode() + b"\n\n"

        if self.stream in ("forever", "tokens-forever", "long-line"):
            out.write(chunk("x"))
            out.flush()
            while not self.stop_event.wait(0.01):
                if self.stream == "forever":
                    out.write(b": keep-alive\n\n")
                elif self.stream == "tokens-forever":
                    out.write(chunk("x"))
                else:
                    out.write(b"x" * 65536)
                out.flush()
            return
        for _ in range(n):
            out.write(chunk("x"))
        out.write(b"data: " + json.dumps({"choices": [], "usage": self.usage(n)}).encode() + b"\n\n")
        out.write(b"data: [DONE]\n\n")
        out.flush()
        self.finished += 1

    def __enter__(self) -> LyingEndpoint:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop_event.set()
        self.server.shutdown()
        self.server.server_close()
        time.sleep(0)
