"""A minimal keep-alive HTTP/1.1 client for streamed POSTs to plain-http servers.

Why not httpx alone: per SSE chunk httpx -> httpcore -> h11 costs tens of microseconds of Python;
at 30,000 chunks/s on a 2-core machine that overhead, not the server, set the measured rate.
This path does only what a vLLM stream needs: one POST at a time per connection, status line,
headers, then chunked or content-length body. https URLs and custom clients use httpx. Reads are
at most 64 KB and lines at most 1 MiB whatever the server announces; the caller sets the deadlines.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from urllib.parse import urlsplit


class RawHTTPError(ConnectionError):
    pass


class RawConnection:
    """One reusable connection; reconnects after any error or a server-side close."""

    def __init__(self, host: str, port: int, connect_timeout: float = 30.0):
        self.host, self.port, self.connect_timeout = host, port, connect_timeout
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    @classmethod
    def for_url(cls, url: str) -> RawConnection:
        parts = urlsplit(url)
        return cls(parts.hostname or "127.0.0.1", parts.port or 80)

    async def _connect(self) -> None:
        self.reader, self.writer = await asyncio.wait_for(asyncio.open_connection(self.host, self.port, limit=1 << 20), self.connect_timeout)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None

    async def post_stream(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, AsyncIterator[bytes]]:
        """Send the POST; return (status, body iterator). The iterator must be drained before the next POST."""
        reused = self.writer is not None
        try:
            return await self._post(path, body, headers)
        except (ConnectionError, asyncio.IncompleteReadError):
            self.close()
            if not reused:
                raise
        return await self._post(path, body, headers)  # the idle keep-alive connection had been closed

    def _streams(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self.reader is None or self.writer is None:
            raise RawHTTPError("not connected")
        return self.reader, self.writer

    async def _post(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, AsyncIterator[bytes]]:
        if self.writer is None:
            await self._connect()
        reader, writer = self._streams()
        head = [f"POST {path} HTTP/1.1", f"Host: {self.host}:{self.port}", f"Content-Length: {len(body)}", "Accept: */*"]
        head += [f"{k}: {v}" for k, v in headers.items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
        status_line = await reader.readline()
        if not status_line:
            raise RawHTTPError("server closed the connection")
        parts = status_line.split(b" ", 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1."):
            raise RawHTTPError(f"not an HTTP response: {status_line[:60]!r}")
        status = int(parts[1])
        length, chunked, close = None, False, False
        while True:
            line = await reader.readline()
            if line in (b"\r\n", b"\n", b""):
                break
            name, _, value = line.partition(b":")
            name, value = name.strip().lower(), value.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding" and b"chunked" in value:
                chunked = True
            elif name == b"connection" and value == b"close":
                close = True
        return status, self._body(length, chunked, close)

    async def _body(self, length: int | None, chunked: bool, close: bool) -> AsyncIterator[bytes]:
        reader, _ = self._streams()
        try:
            if chunked:
                while True:
                    size = int((await reader.readline()).split(b";", 1)[0], 16)
                    if size < 0:
                        raise RawHTTPError("a negative chunk size")
                    if size == 0:
                        await reader.readline()  # trailer end
                        break
                    async for data in _exactly(reader, size):  # in pieces: a chunk header may announce gigabytes
                        yield data
                    await reader.readexactly(2)  # the CRLF after the chunk
            elif length is not None:
                async for data in _exactly(reader, length):
                    yield data
            else:
                close = True
                while data := await reader.read(1 << 16):
                    yield data
        except BaseException:
            self.close()
            raise
        if close:
            self.close()


async def _exactly(reader: asyncio.StreamReader, size: int) -> AsyncIterator[bytes]:
    """`size` bytes of the body in pieces of at most 64 KiB; a body that ends early is an error."""
    remaining = size
    while remaining > 0:
        data = await reader.read(min(remaining, 1 << 16))
        if not data:
            raise RawHTTPError("body ended early")
        remaining -= len(data)
        yield data
