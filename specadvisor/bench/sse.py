"""Incremental parser of an OpenAI-style SSE completion stream, shared by both HTTP paths.

Timestamps are taken by the caller when bytes arrive; the parser only decides which bytes were
content chunks (a TTFT/ITL event), which carried usage, and which were errors. The endpoint is not
trusted: a line is at most MAX_LINE_BYTES (64 KB pieces without a newline must not grow memory),
and a stream carries at most `max_events` content chunks (vLLM sends one per step, each with at
least one token, so a stream longer than its max_tokens is not vLLM's).
"""

from __future__ import annotations

import json
from typing import Any

_CONTENT_MARKER = b'"choices":[{'  # vLLM's compact JSON: a chunk carrying a choice, no need to parse it
_USAGE_MARKER = b'"usage":{'
MAX_LINE_BYTES = 1 << 20


class StreamError(RuntimeError):
    """The server reported an error inside a 200 stream (vLLM does this when the engine fails), or
    sent something that is not an SSE completion stream. `str()` is one line in our words."""


class ImplausibleStream(StreamError):
    """A stream no vLLM server could send for this request (more content chunks than tokens asked)."""


class SSEStream:
    def __init__(self, max_events: int | None = None) -> None:
        self.buffer = bytearray()
        self.max_events = max_events
        self.first: float | None = None
        self.last: float | None = None
        self.itl: list[float] = []
        self.usage: dict[str, Any] | None = None
        self.done = False

    def feed(self, raw: bytes, now: float) -> None:
        """Consume bytes received at `now`; several events in one read share that timestamp."""
        self.buffer += raw
        if b"\n" not in raw:
            self._bounded()
            return
        *lines, tail = self.buffer.split(b"\n")
        self.buffer = tail
        self._bounded()
        for line in lines:
            if len(line) > MAX_LINE_BYTES:
                self._bounded(line)
            if not line.startswith(b"data:"):
                continue  # blank separators, ":" comments, event:/id: fields
            data = line[5:].strip()
            if data == b"[DONE]":
                self.done = True
                continue
            if _CONTENT_MARKER in data:
                if _USAGE_MARKER in data:  # some servers put usage on the last content chunk
                    self._control(data)
            elif not self._control(data):
                continue
            if self.first is None:
                self.first = now
            elif self.last is not None:  # always set once `first` is
                self.itl.append(now - self.last)
                if self.max_events is not None and len(self.itl) >= self.max_events:
                    raise ImplausibleStream(f"the endpoint streamed more than {self.max_events} content chunks for this request's max_tokens; arm not measured")
            self.last = now

    def _bounded(self, line: bytes | bytearray | None = None) -> None:
        if len(self.buffer if line is None else line) > MAX_LINE_BYTES:
            raise StreamError(f"the endpoint sent an SSE line longer than {MAX_LINE_BYTES >> 20} MiB: not a completion stream")

    def _control(self, data: bytes | bytearray) -> bool:
        """Parse a chunk that is not obviously content; True when it nevertheless carries a choice."""
        try:
            chunk = json.loads(data)
        except (ValueError, RecursionError) as exc:  # not JSON, not UTF-8, or nested beyond the parser
            raise StreamError("the endpoint sent an SSE data line that is not JSON") from exc
        if not isinstance(chunk, dict):
            raise StreamError("the endpoint sent an SSE data line that is not a JSON object")
        if chunk.get("error") or chunk.get("object") == "error":
            err = chunk.get("error") or chunk
            raise StreamError(f"server error mid-stream: {err.get('message', err) if isinstance(err, dict) else err}")
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        return bool(chunk.get("choices"))
