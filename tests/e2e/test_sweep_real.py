"""A real sweep on the CPU build of vLLM: baseline + ngram at N=2 and N=4 on HumanEval prompts,
stored in a real SQLite file, recommended, exported, and the N=2 prediction checked against its
measurement (N=2 can only be predicted through the baseline and N=4: a rough guess across regimes,
kept for --adaptive and withheld from the report with the reason)."""

from __future__ import annotations

import json
import math

import pytest

from specadvisor.analysis.predict import predict_throughput
from specadvisor.domain import ArmStatus, SweepFinished, SweepSettings
from specadvisor.report import html, markdown, serve_params
from specadvisor.store import Store
from specadvisor.sweep.plan import plan_from_methods
from specadvisor.sweep.runner import SweepRunner, VllmServerFactory

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.timeout(1500)]

NGRAM = {"prompt_lookup_min": 2, "prompt_lookup_max": 4}


async def test_real_sweep_stores_recommends_exports_and_predicts(cpu_engine, tmp_path):
    settings = SweepSettings(
        prompt_source="humaneval",
        num_prompts=6,
        output_len=64,
        warmup=1,
        engine_cmd=list(cpu_engine.engine_cmd),
        server_args=list(cpu_engine.server_args),
    )
    plan = plan_from_methods(str(cpu_engine.model_dir), [("ngram", NGRAM)], [2, 4], settings)
    launched = []
    real_factory = VllmServerFactory(env=dict(cpu_engine.env), ready_timeout_s=600)

    def factory(arm, session):
        server = real_factory(arm, session)
        launched.append(server)
        return server

    db = tmp_path / "sweep.db"
    store = Store.open(db)
    events = [e async for e in SweepRunner(plan, store, server_factory=factory).events()]
    store.close()

    assert isinstance(events[-1], SweepFinished)
    assert events[-1].launches_used == 4  # three configurations, then the baseline again (the bracket)
    assert launched and not any(s.running for s in launched), "every server is stopped after its arm"

    session = Store.open(db).get_session(plan.session.id)
    assert session.status == "finished"
    results = {r.arm_id: r for r in session.results}
    assert set(results) == {"baseline", "ngram-n2", "ngram-n4"}
    for arm_id, r in results.items():
        assert r.status == ArmStatus.ok, (arm_id, r.error)
        runs = 2 if arm_id == "baseline" else 1
        assert len(r.runs) == runs and r.completed == 6 * runs and r.output_throughput > 0
        assert r.ttft_ms.p99 is not None and r.tpot_ms.p99 is not None
    assert results["baseline"].per_position == []
    for n in (2, 4):
        r = results[f"ngram-n{n}"]
        assert len(r.per_position_acceptance) == n
        assert all(0.0 <= x <= 1.0 for x in r.per_position_acceptance)
        assert r.per_position_acceptance == sorted(r.per_position_acceptance, reverse=True)  # unconditional rates
        assert r.mean_acceptance_length >= 1.0

    rec = session.recommendation
    assert rec is not None and rec.reasons
    assert rec.drift is not None and rec.drift.measurements == 2 and rec.drift.first > 0 and rec.drift.last > 0
    # one of the three answers, each whole: a chosen arm with its command, or none with the reason
    assert rec.decision in ("speculate", "do not speculate", "undecided"), rec.verdict
    if rec.decision == "speculate":
        assert rec.arm_id in {"ngram-n2", "ngram-n4"} and rec.serve_command
    else:
        assert rec.arm_id is None and rec.speculative_config is None
        assert rec.do_not_speculate == (rec.decision == "do not speculate")
        if rec.decision == "undecided":  # says what measuring would decide it
            assert "would likely decide it" in rec.verdict or "might not decide it" in rec.verdict, rec.verdict

    pred = predict_throughput(session)["ngram-n2"]
    assert pred.measured_throughput == results["ngram-n2"].output_throughput
    assert pred.error_pct is not None and math.isfinite(pred.error_pct)
    assert not pred.confident and pred.withheld  # a line through the baseline (or contradicted): never shown
    print(
        f"\nREAL rough guess N=2: {pred.predicted_throughput:.2f} tok/s, measured "
        f"{pred.measured_throughput:.2f} tok/s, error {pred.error_pct:+.1f}% (withheld from views)"
    )

    md = markdown(session)
    print("\n".join(line for line in md.splitlines() if line.startswith("| ")))
    assert "n-gram N=2" in md and "withheld: n-gram N=2" in md and f"{pred.error_pct:+.1f}%" not in md
    page = html(session)
    # throughput vs N, one acceptance chart per speculative arm (2), the Pareto chart, TTFT and TPOT distributions
    assert page.count("<svg") == 6 and "<script" not in page
    params = serve_params(session)
    assert [p.get("speculative_config", {}).get("num_speculative_tokens") for p in params] == [None, 2, 4]
    json.dumps(params)
