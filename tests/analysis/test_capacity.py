"""Capacity answers read from stored goodput results: the sentence and the recommendation."""

from __future__ import annotations

from specadvisor.analysis.capacity import capacity_answer, recommend_capacity
from specadvisor.domain import ArmResult, RatePoint, SweepSettings
from specadvisor.sweep.plan import plan_from_methods


def _session(base: float | None, spec: float | None):
    plan = plan_from_methods("HuggingFaceTB/SmolLM2-135M-Instruct", [("ngram", {})], [2], SweepSettings(slo_tpot_ms=30, goodput=True))
    session = plan.session
    session.results = [
        ArmResult(arm_id="baseline", goodput_rps=base, rate_points=[RatePoint(rate=base or 1.0, meets_slo=base is not None)]),
        ArmResult(arm_id="ngram-n2", goodput_rps=spec, rate_points=[RatePoint(rate=spec or 1.0, meets_slo=spec is not None)]),
    ]
    return session


def test_the_answer_reads_in_capacity_terms():
    session = _session(9.0, 14.0)
    assert capacity_answer(session) == "at p99 TPOT <= 30 ms, n-gram N=2 sustains 14 req/s against 9 req/s without speculation"
    rec = recommend_capacity(session)
    assert rec.arm_id == "ngram-n2" and abs(rec.speedup - 14 / 9) < 1e-9 and "vllm serve" in rec.serve_command
    assert rec.reasons[0] == capacity_answer(session)


def test_no_gain_in_capacity_means_do_not_speculate():
    rec = recommend_capacity(_session(0.8, 0.6))
    assert rec.do_not_speculate and rec.arm_id is None and "serve without it" in rec.reasons[-1]
    assert "0.60 req/s against 0.80 req/s" in rec.reasons[0]
    assert capacity_answer(_session(0.5, None)).startswith("at p99 TPOT <= 30 ms, no speculative configuration met the target")
