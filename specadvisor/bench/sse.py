"""Incremental parser of an OpenAI-style SSE completion stream, shared by both HTTP paths.

Timestamps are taken by the caller when bytes arrive; the parser only decides which bytes were
content chunks (a TTFT/ITL event), which carried usage, and which were errors.
"""

from __future__ import annotations

import json
from typing import Any

_CONTENT_MARKER = b'"choices":[{'  # vLLM's compact JSON: a chunk carrying a choice, no need to parse it
_USAGE_MARKER = b'"usage":{'


class StreamError(RuntimeError):
    """The server reported an error inside a 200 stream (vLLM does this when the engine fails)."""


class SSEStream:
    def __init__(self) -> None:
        self.buffer = b""
        self.first: float | None = None
        self.last: float | None = None
        self.itl: list[float] = []
        self.usage: dict[str, Any] | None = None
        self.done = False

    def feed(self, raw: bytes, now: float) -> None:
        """Consume bytes received at `now`; several events in one read share that timestamp."""
        self.buffer += raw
        if b"\n" not in raw:
            return
        *lines, self.buffer = self.buffer.split(b"\n")
        for line in lines:
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
            self.last = now

    def _control(self, data: bytes) -> bool:
        """Parse a chunk that is not obviously content; True when it nevertheless carries a choice."""
        chunk = json.loads(data)
        if chunk.get("error") or chunk.get("object") == "error":
            err = chunk.get("error") or chunk
            raise StreamError(f"server error mid-stream: {err.get('message', err) if isinstance(err, dict) else err}")
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        return bool(chunk.get("choices"))
