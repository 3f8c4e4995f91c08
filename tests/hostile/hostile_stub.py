"""A misbehaving OpenAI-compatible server on 127.0.0.1 for the hostile-endpoint tests.

A fake at the network boundary only: specadvisor talks real HTTP to it. `mode` picks the failure:
500 bodies with terminal escapes, garbage SSE, a stream closed mid-response, a stall, hostile names.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ESCAPES = "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07\x1b[2J\x1b[H"


class _QuietServer(ThreadingHTTPServer):
    """A client that gives up on a stalled stream resets its connection: that is the case under
    test, not a server error, so it is not printed to the stderr the test reads (the traceback
    appeared there only when the reset raced the handler, a flaky second line on a loaded box)."""

    def handle_error(self, request, client_address) -> None:
        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)


class Stub:
    def __init__(self, mode: str, model: str = "stub-model", server_info: dict | None = None, models_status: int = 200, models_body: bytes | None = None):
        self.mode, self.model, self.server_info = mode, model, server_info
        self.models_status, self.models_body = models_status, models_body
        self.stop_event = threading.Event()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _send(self, status: int, body: bytes, ctype: str = "application/json", extra: dict | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for key, value in (extra or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                path = self.path.split("?")[0]
                if path == "/v1/models":
                    body = stub.models_body if stub.models_body is not None else json.dumps({"data": [{"id": stub.model, "max_model_len": 4096}]}).encode()
                    self._send(stub.models_status, body)
                elif path == "/health":
                    self._send(200, b"")
                elif path == "/version":
                    self._send(200, json.dumps({"version": "0.32.0" + ESCAPES}).encode())
                elif path == "/server_info" and stub.server_info is not None:
                    self._send(200, json.dumps(stub.server_info).encode())
                elif path == "/metrics":
                    self._send(200, b"# garbage metrics\nnot_a_metric{ 1\n", "text/plain")
                else:
                    self._send(404, b'{"detail":"Not Found"}')

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                if not self.path.startswith("/v1/"):
                    self._send(404, b'{"detail":"Not Found"}')
                    return
                mode = stub.mode
                if mode == "500":
                    self._send(500, ("Internal error " + ESCAPES + "[bold]x[/]").encode())
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                if mode == "garbage":
                    self.wfile.write(b"data: {not json\n\ndata: \xff\xfe\n\nevent: ???\n\n" + ESCAPES.encode() + b"\n\n")
                elif mode == "close":
                    chunk = {"choices": [{"index": 0, "text": "x", "finish_reason": None}]}
                    self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                    self.wfile.flush()
                    self.connection.shutdown(2)  # closed mid-stream, no [DONE]
                elif mode == "stall":
                    chunk = {"choices": [{"index": 0, "text": "x", "finish_reason": None}]}
                    self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                    self.wfile.flush()
                    stub.stop_event.wait(30)  # silent until the test ends
                self.close_connection = True

        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Stub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop_event.set()
        self.server.shutdown()
        self.server.server_close()
        time.sleep(0)
