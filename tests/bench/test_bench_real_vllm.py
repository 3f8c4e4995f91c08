"""The bench layer against the real CPU build of vLLM (SmolLM2, ngram K=4): the parts the engine's
e2e test does not cover — chat prompts through the model's template, /tokenize fitting, clamped
outputs, several trials with prefix-cache resets, and live samples that add up to the final result.
"""

from __future__ import annotations

import pytest
import pytest_asyncio

from specadvisor.bench.loadgen import run_load
from specadvisor.bench.measure import measure_arm
from specadvisor.bench.metrics import acceptance, delta, scrape
from specadvisor.bench.prompts import Prompt, PromptSet, fit_prompts, load_prompts
from specadvisor.domain import Arm, ArmFinished, ArmStatus, MetricsSampled, SweepSettings
from specadvisor.engine import ServerSpec, VllmServer
from specadvisor.engine.cpu import ensure_cpu_engine

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.timeout(1200)]

SERVED = "smollm2"
NGRAM = {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_min": 2, "prompt_lookup_max": 4}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(tmp_path_factory):
    engine = ensure_cpu_engine(progress=lambda line: print(f"[cpu-engine] {line}", flush=True))
    spec = ServerSpec(
        model=str(engine.model_dir),
        engine_cmd=engine.engine_cmd,
        extra_args=engine.server_args,
        env=engine.env,
        speculative_config=NGRAM,
        served_model_name=SERVED,
        log_path=tmp_path_factory.mktemp("vllm") / "server.log",
        ready_timeout_s=900,
    )
    async with VllmServer(spec) as srv:
        yield srv


@pytest.mark.asyncio(loop_scope="module")
async def test_chat_prompts_fit_and_measure_with_trials(server):
    base = server.base_url
    ps = load_prompts("math", 4, seed=1)
    fitted = await fit_prompts(ps, base_url=base, model_name=SERVED, output_len=24, max_model_len=2048)
    assert fitted.dropped == 0 and all(p.tokens and p.tokens > 20 for p in fitted.prompts)  # chat template counted

    settings = SweepSettings(output_len=24, temperature=0.0, warmup=1, trials=3)
    events = [
        e
        async for e in measure_arm(
            base_url=base, model_name=SERVED, arm=Arm(id="ngram-n4", label="ngram", concurrency=2), settings=settings, prompts=fitted, sample_interval_s=0.5
        )
    ]
    final = events[-1]
    assert isinstance(final, ArmFinished)
    r = final.result
    assert r.status == ArmStatus.ok, r.error
    assert r.completed == 12 and r.output_tokens == 12 * 24 and r.vllm_version == "0.32.0"
    # three trials give an interval (two give none: a t-interval on one degree of freedom says nothing)
    assert len(r.trials) == 3 and r.output_throughput_ci is not None
    assert not [w for w in r.warnings if "foreign" in w or "clamped" in w or "prefix cache" in w], r.warnings
    assert r.num_drafts > 0 and 1.0 <= r.mean_acceptance_length <= 5.0 and len(r.per_position) == 4
    rates = [p.rate for p in r.per_position]
    assert rates == sorted(rates, reverse=True)  # unconditional per-position counts never increase
    last = [e.sample for e in events if isinstance(e, MetricsSampled)][-1]
    assert last.num_drafts == r.num_drafts and last.generation_tokens == r.output_tokens  # warmup excluded


@pytest.mark.asyncio(loop_scope="module")
async def test_fit_drops_overlong_prompt_and_server_clamps_unfitted_one(server):
    base = server.base_url
    long_text = "def f(x):\n    return x\n" * 250  # about 2,000 tokens: leaves < 64 for the output
    ps = PromptSet(source="t", prompts=[Prompt(text=long_text, id="long"), Prompt(text="def g(y):", id="short")])
    fitted = await fit_prompts(ps, base_url=base, model_name=SERVED, output_len=64, max_model_len=2048)
    assert fitted.dropped == 1 and [p.id for p in fitted.prompts] == ["short"]

    before = await scrape(base)
    clamped = PromptSet(source="t", prompts=[Prompt(text=long_text[: len(long_text) - 200], id="almost")])
    result = await run_load(base_url=base, model_name=SERVED, prompts=clamped, output_len=200, temperature=0.0, seed=0, concurrency=1)
    rec = result.records[0]
    after = await scrape(base)
    if rec.ok:  # vLLM 0.32 clamps max_tokens to the room left; other versions reject with HTTP 400
        assert rec.clamped and rec.completion_tokens < 200
    else:
        assert rec.error.startswith("HTTP 400")
    d = delta(before, after)
    mean_al = acceptance(d).mean_length
    assert d.requests_succeeded == (1 if rec.ok else 0)
    assert (mean_al is None) == (d.num_drafts == 0)
