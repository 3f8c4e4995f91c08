"""The runner with the REAL measure_arm and prompt loader over real HTTP; only the vLLM process is
replaced, by the bench tests' OpenAI-compatible fake server (one per arm, speculating at the arm's N)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from fakeserver import FakeConfig, FakeServer
from specadvisor.domain import ArmStatus, MetricsSampled, SweepFinished, SweepSettings
from specadvisor.sweep.plan import plan_from_methods
from specadvisor.sweep.runner import SweepRunner


class HttpFakeHandle:
    def __init__(self, arm):
        self.fake = FakeServer(FakeConfig(num_spec_tokens=arm.n or 0, chunk_delay_s=0.002))
        self.command = ["fake-vllm", arm.id]
        self.base_url = ""
        self.running = False
        self.port = None
        self.diagnosis = None
        self.log_path = None

    def subscribe(self, cb):
        return None

    def tail(self, n=40):
        return []

    async def start(self):
        await self.fake.start()
        self.base_url = self.fake.base_url
        self.running = True

    async def wait_ready(self):
        return 0.0

    async def stop(self):
        await self.fake.stop()
        self.running = False


async def test_runner_with_real_measurement_over_http(store):
    settings = SweepSettings(prompt_source="humaneval", num_prompts=4, output_len=16, warmup=1)
    plan = plan_from_methods("fake-model", [("ngram", {})], [2, 4], settings)
    handles = []

    def factory(arm, session):
        handles.append(HttpFakeHandle(arm))
        return handles[-1]

    events = [e async for e in SweepRunner(plan, store, server_factory=factory, sample_interval_s=0.05).events()]
    assert isinstance(events[-1], SweepFinished)
    stored = store.get_session(plan.session.id)
    for arm_id, n in (("baseline", 0), ("ngram-n2", 2), ("ngram-n4", 4)):
        r = stored.result_for(arm_id)
        assert r.status == ArmStatus.ok, r.error
        runs = len(r.runs)  # the baseline is measured twice: first and as the end-of-sweep bracket
        assert runs == (2 if arm_id == "baseline" else 1)
        assert r.completed == 4 * runs and r.output_tokens == 64 * runs
        assert len(r.per_position) == n
        assert all(sorted(q.index for q in run.requests) == [0, 1, 2, 3] for run in r.runs)  # stored per request, per run
    assert stored.result_for("ngram-n4").mean_acceptance_length > 1
    assert any(isinstance(e, MetricsSampled) for e in events) or stored.samples
    assert not any(h.running for h in handles)


async def test_ci_target_stops_the_real_load_early_and_counts_the_savings(store):
    from specadvisor.analysis.summary import session_summary

    settings = SweepSettings(prompt_source="humaneval", num_prompts=40, output_len=16, warmup=0, ci_target=0.5, bracket=False)
    plan = plan_from_methods("fake-model", [("ngram", {})], [2], settings)
    events = [e async for e in SweepRunner(plan, store, server_factory=lambda arm, s: HttpFakeHandle(arm), sample_interval_s=0.05).events()]
    assert isinstance(events[-1], SweepFinished)
    stored = store.get_session(plan.session.id)
    for arm_id in ("baseline", "ngram-n2"):
        r = stored.result_for(arm_id)
        assert r.status == ArmStatus.ok and r.failed == 0
        assert 8 <= r.completed < 40  # stopped once the interval was narrow enough, in-flight requests finished
        assert r.runs[0].planned == 40 and r.runs[0].seconds_saved > 0
        assert any("met the 50% target" in w for w in r.warnings)
    summary = session_summary(stored)
    assert summary["requests_saved"] == 80 - sum(stored.result_for(a).completed for a in ("baseline", "ngram-n2"))
