"""/metrics parsing and deltas, on text captured from a real vLLM 0.32 CPU server (ngram, K=4)."""

from pathlib import Path

import pytest

from fakeserver import FakeConfig, FakeServer
from specadvisor.bench.metrics import ACCEPTED, DRAFTS, acceptance, delta, parse_metrics, scrape
from specadvisor.errors import EngineError, InputError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "bench"


def real(name: str):
    return parse_metrics((FIXTURES / name).read_text())


def test_real_fresh_server_has_spec_counters_at_zero():
    snap = real("vllm032_ngram_k4_fresh.metrics.txt")
    assert snap.spec_enabled
    assert snap.get(DRAFTS) == 0.0
    assert snap.accepted_per_pos == {0: 0.0, 1: 0.0, 2: 0.0, 3: 0.0}
    assert not any(name.endswith("_created") for name in snap.values)


def test_real_delta_and_vllm_formulas():
    d = delta(real("vllm032_ngram_k4_fresh.metrics.txt"), real("vllm032_ngram_k4_after.metrics.txt"))
    assert (d.num_drafts, d.num_draft_tokens, d.num_accepted_tokens) == (40, 160, 78)
    assert d.accepted_per_position == [28, 19, 17, 14]
    assert d.generation_tokens == 224
    assert d.requests_succeeded == 7
    acc = acceptance(d)
    mean_al, rate, per_pos = acc.mean_length, acc.rate, acc.per_position
    assert mean_al == pytest.approx(1 + 78 / 40)
    assert rate == pytest.approx(78 / 160)
    assert [p.rate for p in per_pos] == pytest.approx([28 / 40, 19 / 40, 17 / 40, 14 / 40])
    assert all(p.ci_low < p.rate < p.ci_high for p in per_pos)
    assert per_pos[0].accepted == 28 and per_pos[0].drafts == 40


def test_real_gauges_are_read():
    snap = real("vllm032_ngram_k4_after.metrics.txt")
    assert snap.gauge("vllm:num_requests_running") == 0.0
    assert snap.gauge("vllm:kv_cache_usage_perc") is not None
    assert snap.success_by_reason["length"] == 7.0


def test_sums_over_engines_and_ignores_created():
    text = FakeServer(FakeConfig(num_spec_tokens=2)).metrics_text()
    server = FakeServer(FakeConfig(num_spec_tokens=2))
    server.state.drafts, server.state.accepted, server.state.per_pos = 10, 7, [5, 2]
    snap = parse_metrics(server.metrics_text())
    assert snap.get(DRAFTS) == 10.0  # split 3 + 7 over two engines in the text
    assert snap.get(ACCEPTED) == 7.0
    assert snap.accepted_per_pos == {0: 5.0, 1: 2.0}
    assert parse_metrics(text).get(DRAFTS) == 0.0


def test_baseline_has_no_acceptance():
    snap = parse_metrics(FakeServer(FakeConfig(num_spec_tokens=0)).metrics_text())
    assert not snap.spec_enabled
    acc = acceptance(delta(snap, snap))
    assert (acc.mean_length, acc.rate, acc.per_position) == (None, None, [])


def test_garbage_is_one_line_input_error():
    with pytest.raises(InputError) as err:
        parse_metrics("vllm:x{engine=0 oops\n")
    assert "\n" not in str(err.value)


async def test_scrape_live_server_and_unreachable():
    server = await FakeServer(FakeConfig(num_spec_tokens=3)).start()
    try:
        snap = await scrape(server.base_url)
        assert snap.spec_enabled and len(snap.accepted_per_pos) == 3
    finally:
        await server.stop()
    with pytest.raises(EngineError, match="cannot read"):
        await scrape(server.base_url)
