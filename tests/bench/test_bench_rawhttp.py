"""The raw HTTP/1.1 path on bodies vLLM does not send but proxies do: Content-Length and read-to-close."""

import asyncio
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specadvisor.bench.loadgen import send_one_raw
from specadvisor.bench.rawhttp import RawConnection

SSE = (
    b'data: {"choices":[{"index":0,"text":"a"}]}\n\n'
    b": keep-alive\n\n"
    b'data: {"choices":[{"index":0,"text":"bc"}]}\n\n'
    b'data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":3}}\n\n'
    b"data: [DONE]\n\n"
)


async def one_shot_server(framing: str):
    async def handle(reader, writer):
        await reader.readuntil(b"\r\n\r\n")
        if framing == "length":
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(SSE) + SSE)
        else:
            writer.write(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + SSE)
            await writer.drain()
            writer.close()
            return
        await writer.drain()
        await asyncio.sleep(0.2)
        writer.close()

    return await asyncio.start_server(handle, "127.0.0.1", 0)


@pytest.mark.parametrize("framing", ["length", "close"])
async def test_non_chunked_bodies(framing):
    server = await one_shot_server(framing)
    port = server.sockets[0].getsockname()[1]
    conn = RawConnection("127.0.0.1", port)
    try:
        rec = await send_one_raw(conn, "/v1/completions", b"{}", {}, expected_tokens=3)
    finally:
        conn.close()
        server.close()
        await server.wait_closed()
    assert rec.ok and rec.completion_tokens == 3 and rec.prompt_tokens == 3 and len(rec.itl_s) <= 1
    if framing == "close":
        assert conn.writer is None  # a read-to-close body never leaves a reusable connection


async def test_connection_refused_is_a_failed_record():
    rec = await send_one_raw(RawConnection("127.0.0.1", 9), "/v1/completions", b"{}", {}, expected_tokens=3)
    assert not rec.ok and "Connect" in rec.error


def test_sse_parser_reads_usage_on_a_content_chunk_and_spaced_json():
    from specadvisor.bench.sse import SSEStream

    sse = SSEStream()
    sse.feed(b'data: {"choices": [{"index": 0, "text": "x"}]}\n\ndata: {"choices":[{"text":"y"}],"usage":{"completion_tokens":2}}\n', 1.0)
    sse.feed(b"\ndata: [DONE]\n\n", 2.0)
    assert sse.first == 1.0 and sse.itl == [0.0] and sse.usage == {"completion_tokens": 2} and sse.done


async def test_stream_without_usage_is_flagged_unverified_not_clamped():
    from specadvisor.bench.loadgen import _record
    from specadvisor.bench.sse import SSEStream

    sse = SSEStream()
    sse.feed(b'data: {"choices":[{"text":"a"}]}\n\ndata: {"choices":[{"text":"b"}]}\n\ndata: [DONE]\n\n', 1.0)
    rec = _record(0.5, sse, "p", expected=16)
    assert rec.ok and rec.unverified and not rec.clamped and rec.completion_tokens == 2


_REAL = (__import__("pathlib").Path(__file__).resolve().parents[1] / "fixtures" / "bench" / "vllm032_chat_stream.sse").read_bytes()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, len(_REAL) - 1), max_size=40, unique=True))
def test_sse_parser_is_independent_of_how_reads_split_the_stream(cuts):
    from specadvisor.bench.sse import SSEStream

    bounds = [0, *sorted(cuts), len(_REAL)]
    pieces = [_REAL[a:b] for a, b in itertools.pairwise(bounds)]
    whole, split = SSEStream(), SSEStream()
    whole.feed(_REAL, 0.0)
    for i, piece in enumerate(pieces):
        split.feed(piece, float(i))
    assert split.usage == whole.usage == {"prompt_tokens": 39, "total_tokens": 55, "completion_tokens": 16}
    assert len(split.itl) == len(whole.itl) == _REAL.count(b'"choices":[{') - 1 and split.done
