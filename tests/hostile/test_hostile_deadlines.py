"""No end in sight (issue 20, class 5): every wait on an endpoint is bounded in total, not only in
silence. Bounds are passed in small (or set through SPECADVISOR_STALL_TIMEOUT_S); the tests assert
what happened (which request failed, with which reason, how many were sent), never how long it took."""

from __future__ import annotations

import pytest
from hostile_helpers import assert_one_line_error
from hostile_stub import Stub
from lying_stub import LyingEndpoint

from specadvisor.bench import loadgen
from specadvisor.bench.loadgen import Deadlines, RequestRecord, run_load
from specadvisor.bench.metrics import scrape
from specadvisor.bench.prompts import Prompt, PromptSet
from specadvisor.bench.sse import MAX_LINE_BYTES, SSEStream, StreamError
from specadvisor.engine import Endpoint, attach
from specadvisor.errors import EngineError
from specadvisor.physics import ImplausibleFigures
from specadvisor.store import Store

SMALL = Deadlines(stall_s=0.5, prior_token_s=0.1)  # a request of 4 tokens may take 0.5 + 0.4 s in all


def prompts(n: int) -> PromptSet:
    return PromptSet(source="test", prompts=[Prompt(id=f"p{i}", text=f"prompt {i}") for i in range(n)])


async def load(url: str, n: int = 1, *, concurrency: int = 1, deadlines: Deadlines = SMALL, client=None):
    return await run_load(
        base_url=url,
        model_name="m",
        prompts=prompts(n),
        output_len=4,
        temperature=0.0,
        seed=0,
        concurrency=concurrency,
        deadlines=deadlines,
        client=client,
    )


@pytest.mark.parametrize("path", ["raw", "httpx"])
async def test_a_stream_that_never_stops_is_cut_at_its_total_deadline(path):
    """A keep-alive comment every 10 ms: never silent, never done. The stall timer alone never fires."""
    import httpx

    with LyingEndpoint(stream="forever") as stub:
        client = httpx.AsyncClient() if path == "httpx" else None
        try:
            result = await load(stub.url, client=client)
        finally:
            if client is not None:
                await client.aclose()
    (rec,) = result.records
    assert not rec.ok and rec.timed_out
    assert rec.error.startswith("the stream did not end within") and "cut off" in rec.error


async def test_a_line_without_end_fails_the_request_with_bounded_memory():
    """64 KB pieces without a newline: the request fails when a line passes 1 MiB, not when memory does."""
    with LyingEndpoint(stream="long-line") as stub:
        result = await load(stub.url, deadlines=Deadlines(stall_s=5.0, prior_token_s=60.0))
    (rec,) = result.records
    assert not rec.ok and not rec.timed_out  # ended by the line limit, well before any deadline
    assert "SSE line longer than 1 MiB" in rec.error


def test_sse_buffer_is_bounded():
    sse = SSEStream()
    with pytest.raises(StreamError, match="longer than 1 MiB"):
        for _ in range(10_000):
            sse.feed(b"x" * 65536, 0.0)
            assert len(sse.buffer) <= MAX_LINE_BYTES + 65536
    sse = SSEStream()
    with pytest.raises(StreamError, match="longer than 1 MiB"):  # a huge line that does end
        sse.feed(b"data: " + b"x" * (MAX_LINE_BYTES + 1) + b"\n", 0.0)


async def test_stalled_endpoint_stops_the_load_after_a_few_timeouts():
    """32 prompts to an endpoint that goes silent: 3 requests time out, the other 29 are never sent."""
    with Stub("stall") as stub:
        result = await load(stub.url, 32, deadlines=Deadlines(stall_s=0.3, prior_token_s=60.0))
    assert len(result.records) == loadgen.TIMEOUTS_IN_A_ROW == 3
    assert all(r.timed_out and "sent nothing for" in r.error for r in result.records)


def test_the_total_deadline_follows_the_measured_token_rate():
    limits = Deadlines(stall_s=2.0, prior_token_s=1.0, slowdown=10.0)
    assert limits.total_s(100) == pytest.approx(2.0 + 100 * 1.0)  # before any request finished
    limits.observe(RequestRecord(ok=True, completion_tokens=100, latency_s=2.0, expected_tokens=100))
    assert limits.total_s(100) == pytest.approx(2.0 + 100 * 10 * 0.02)  # 10x the measured 20 ms per token
    limits.observe(RequestRecord(ok=False, completion_tokens=0, latency_s=99.0))
    limits.observe(RequestRecord(ok=True, error="no usage chunk: output length not verified", completion_tokens=100, latency_s=99.0))
    assert limits.total_s(100) == pytest.approx(22.0)  # failures and unverified counts teach it nothing


def test_an_endpoint_cannot_teach_itself_a_longer_deadline():
    """Round three: a slow first request claiming 1 token (70 s per token measured) made every later
    request's deadline 10x that per token; what is measured only ever tightens the prior."""
    limits = Deadlines(stall_s=180.0, prior_token_s=1.0, slowdown=10.0)
    before = limits.total_s(128)
    limits.observe(RequestRecord(ok=True, completion_tokens=1, latency_s=70.0, expected_tokens=128))
    assert limits.total_s(128) == pytest.approx(before) == pytest.approx(180.0 + 128)
    limits.observe(RequestRecord(ok=True, completion_tokens=128, latency_s=1.28, expected_tokens=128))
    assert limits.total_s(128) <= before


def test_default_stall_is_minutes_and_the_variable_is_checked(monkeypatch):
    monkeypatch.delenv("SPECADVISOR_STALL_TIMEOUT_S", raising=False)
    assert 60 <= loadgen.stall_timeout_s() <= 300
    for bad in ("nan", "inf", "-1", "0", "soon"):
        monkeypatch.setenv("SPECADVISOR_STALL_TIMEOUT_S", bad)
        assert loadgen.stall_timeout_s() == loadgen.DEFAULT_STALL_TIMEOUT_S


@pytest.mark.parametrize("limit, refusal", [(32 * 1024, "over 0 MiB"), (1 << 30, "did not finish answering within")], ids=["size", "time"])
async def test_metrics_that_never_end_are_refused(monkeypatch, limit, refusal):
    """/metrics streamed forever (4 KB every 10 ms): refused at the size limit or at the deadline,
    whichever comes first; never read on and on."""
    from specadvisor.bench import metrics

    monkeypatch.setattr(metrics, "SCRAPE_DEADLINE_S", 0.5)
    monkeypatch.setattr(metrics, "MAX_METRICS_BYTES", limit)
    with LyingEndpoint(get_forever=("/metrics",)) as stub, pytest.raises((ImplausibleFigures, EngineError), match=refusal):
        await scrape(stub.url)


async def test_endpoint_identity_that_never_ends_is_one_error(monkeypatch):
    monkeypatch.setattr(attach, "DEADLINE_S", 0.5)
    with LyingEndpoint(get_forever=("/v1/models",)) as stub, pytest.raises(EngineError, match="/v1/models did not answer within"):
        await Endpoint(stub.url).info()


@pytest.mark.parametrize("mode", ["forever", "stall"])
def test_sweep_against_an_endpoint_that_never_finishes_ends_in_one_line(tmp_path, cli, monkeypatch, mode):
    """Through the CLI: the warmups time out, the arm is not measured, the session finishes (exit 4)."""
    monkeypatch.setenv("SPECADVISOR_STALL_TIMEOUT_S", "0.5")
    db = tmp_path / "s.db"
    with LyingEndpoint(stream="forever") if mode == "forever" else Stub("stall") as stub:
        argv = ["--db", str(db), "sweep", "--endpoint", stub.url, "--num-prompts", "8", "--output-len", "2", "--warmup", "2"]
        code, _out, err = cli(argv)
        posts = getattr(stub, "posts", None)
    assert_one_line_error(code, err, 4)
    assert "did not answer the warmup requests in time" in err
    if posts is not None:
        assert posts == 2  # the two warmups; none of the 8 prompts was sent after them
    with Store.open(db) as store:
        (summary,) = store.list_sessions()
        assert summary.status == "finished"
