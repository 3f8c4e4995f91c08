"""The load generator over real HTTP against the fake SSE server, and on real captured vLLM streams."""

from pathlib import Path

import httpx
import pytest

from fakeserver import FakeConfig, FakeServer
from specadvisor.bench.loadgen import run_load, send_one
from specadvisor.bench.prompts import Prompt, PromptSet

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "bench"


def text_set(n: int, words: int = 5) -> PromptSet:
    return PromptSet(source="t", prompts=[Prompt(text=" ".join(["w"] * words), id=f"p{i}") for i in range(n)])


@pytest.fixture
async def server(request):
    cfg = getattr(request, "param", FakeConfig())
    srv = await FakeServer(cfg).start()
    yield srv
    await srv.stop()


async def load(server, prompts, **kw):
    args = dict(base_url=server.base_url, model_name="m", prompts=prompts, output_len=16, temperature=0.0, seed=7, concurrency=4)
    args.update(kw)
    return await run_load(**args)


async def test_sends_fixed_length_requests_and_times_them(server):
    result = await load(server, text_set(12))
    assert result.completed == 12 and result.failed == 0
    assert result.output_tokens == 12 * 16
    body = server.state.requests[0]
    assert body["max_tokens"] == 16 and body["ignore_eos"] is True and body["stream"] is True
    assert body["temperature"] == 0.0 and body["seed"] == 7
    assert body["stream_options"] == {"include_usage": True}
    rec = result.records[0]
    assert rec.prompt_tokens == 5 and rec.completion_tokens == 16 and not rec.clamped
    assert 0 < rec.ttft_s <= rec.latency_s
    assert len(rec.itl_s) == 15  # 16 one-token chunks; ":" comment lines are not chunks
    assert rec.tpot_s == pytest.approx((rec.latency_s - rec.ttft_s) / 15)


@pytest.mark.parametrize("server", [FakeConfig(num_spec_tokens=4)], indirect=True)
async def test_counts_tokens_from_usage_when_chunks_carry_several(server):
    result = await load(server, text_set(3), output_len=40)
    for rec in result.records:
        assert rec.completion_tokens == 40
        assert len(rec.itl_s) + 1 < 40  # fewer chunks than tokens under speculation


async def test_chat_prompts_go_to_chat_endpoint(server):
    ps = PromptSet(source="c", chat=True, prompts=[Prompt(messages=[{"role": "user", "content": "hi there"}])])
    result = await load(server, ps)
    assert result.completed == 1 and server.state.requests[0]["messages"][0]["content"] == "hi there"


@pytest.mark.parametrize("server", [FakeConfig(max_model_len=20)], indirect=True)
async def test_clamped_output_is_detected(server):
    result = await load(server, text_set(2, words=10), output_len=16)
    assert all(r.ok and r.clamped and r.completion_tokens == 10 for r in result.records)


async def test_failures_are_records_not_exceptions(server):
    ps = PromptSet(source="f", prompts=[Prompt(text="FAIL500 now"), Prompt(text="MIDERR later"), Prompt(text="fine")])
    result = await load(server, ps)
    errors = sorted(r.error for r in result.records if not r.ok)
    assert result.completed == 1 and result.failed == 2
    assert errors[0].startswith("HTTP 500") and "engine died" in errors[1]


async def test_unreachable_server_fails_every_request():
    result = await run_load(base_url="http://127.0.0.1:9", model_name="m", prompts=text_set(2), output_len=4, temperature=0.0, seed=0, concurrency=2)
    assert result.failed == 2 and "Connect" in result.records[0].error


@pytest.mark.parametrize("server", [FakeConfig(chunk_delay_s=0.01)], indirect=True)
async def test_concurrency_limit_is_respected(server):
    seen = []
    orig = server._spec_step

    def spy(remaining):
        seen.append(server.state.running)
        return orig(remaining)

    server._spec_step = spy
    done = []
    result = await load(server, text_set(10), concurrency=3, on_done=done.append)
    assert max(seen) == 3 and len(done) == 10 and result.completed == 10


async def test_poisson_rate_is_reported_as_achieved(server):
    result = await load(server, text_set(60, words=1), output_len=2, request_rate=100.0, concurrency=60)
    assert result.requested_rate == 100.0
    assert 50 < result.achieved_rate < 200  # exponential gaps: 60 arrivals give a wide but bounded estimate
    starts = sorted(r.start_s for r in result.records)
    assert starts[-1] - starts[0] > 0.2  # not sent all at once


@pytest.mark.parametrize(
    "fixture,endpoint,tokens",
    [
        ("vllm032_completions_stream.sse", "/v1/completions", 24),
        ("vllm032_chat_stream.sse", "/v1/chat/completions", 16),
    ],
)
async def test_real_vllm_streams_parse(fixture, endpoint, tokens):
    payload = (FIXTURES / fixture).read_bytes()

    async def pieces():  # odd-sized reads: events split across network reads must be reassembled
        for i in range(0, len(payload), 37):
            yield payload[i : i + 37]

    transport = httpx.MockTransport(lambda req: httpx.Response(200, content=pieces(), headers={"content-type": "text/event-stream"}))
    async with httpx.AsyncClient(transport=transport) as client:
        rec = await send_one(client, "http://x" + endpoint, b"{}", {}, expected_tokens=tokens)
    chunks = payload.count(b'"choices":[{')
    assert rec.ok and rec.completion_tokens == tokens and not rec.clamped
    assert len(rec.itl_s) == chunks - 1
    assert chunks < tokens or endpoint.endswith("chat/completions")  # ngram speculation: several tokens per chunk


@pytest.mark.parametrize("server", [FakeConfig(num_spec_tokens=3)], indirect=True)
async def test_httpx_client_path_matches_raw_path(server):
    from specadvisor.bench.loadgen import make_client

    raw = await load(server, text_set(6), output_len=20)
    async with make_client(4) as client:
        via_httpx = await load(server, text_set(6), output_len=20, client=client)
    for result in (raw, via_httpx):
        assert result.completed == 6
        assert [r.completion_tokens for r in result.records] == [20] * 6
    assert sum(len(r.itl_s) for r in raw.records) == sum(len(r.itl_s) for r in via_httpx.records)


@pytest.mark.parametrize("server", [FakeConfig(close_after_response=True)], indirect=True)
async def test_reconnects_when_server_drops_idle_connections(server):
    result = await load(server, text_set(8), concurrency=2)
    assert result.completed == 8 and result.failed == 0


@pytest.mark.parametrize("server", [FakeConfig(path_prefix="/proxy")], indirect=True)
async def test_server_behind_a_path_prefix(server):
    result = await run_load(base_url=server.base_url + "/proxy/", model_name="m", prompts=text_set(2), output_len=4, temperature=0.0, seed=0, concurrency=2)
    assert result.completed == 2
