"""Merging an arm's runs, and the early-stop rule on request records."""

from __future__ import annotations

from datetime import UTC, datetime

from specadvisor.bench.loadgen import RequestRecord
from specadvisor.domain import ArmResult, ArmStatus, LatencyStats, PositionStats
from specadvisor.sweep.runs import merge, run_record
from specadvisor.sweep.stopping import CiTarget, relative_halfwidth


def run(tput, completed=8, p99=10.0, accepted=(60, 30), drafts=100, ci=0.02):
    return ArmResult(
        arm_id="a",
        completed=completed,
        output_tokens=completed * 32,
        duration_s=completed * 32 / tput,
        output_throughput=tput,
        output_throughput_ci=(tput * (1 - ci), tput * (1 + ci)),
        tpot_ms=LatencyStats(mean=5.0, median=5.0, p90=8.0, p99=p99),
        num_drafts=drafts,
        num_draft_tokens=drafts * 2,
        num_accepted_tokens=sum(accepted),
        mean_acceptance_length=1 + sum(accepted) / drafts,
        per_position=[PositionStats(position=i, accepted=a, drafts=drafts, rate=a / drafts) for i, a in enumerate(accepted)],
        started_at=datetime(2026, 12, 1, tzinfo=UTC),
    )


def test_runs_pool_counts_and_take_the_worst_tail():
    merged = None
    for i, (tput, p99) in enumerate([(100.0, 10.0), (110.0, 30.0), (90.0, 12.0)]):
        r = run(tput, p99=p99, accepted=(60, 30) if i else (80, 40))
        merged = merge(merged, r, run_record(r, trial=i + 1, wave=i + 1))
    assert merged.completed == 24 and merged.output_tokens == 768
    assert merged.trials == [100.0, 110.0, 90.0] and merged.output_throughput == 100.0
    lo, hi = merged.output_throughput_ci
    assert lo < 90.0 and hi > 110.0  # three runs: a t interval on the runs covers their spread
    assert merged.tpot_ms.p99 == 30.0 and merged.tpot_ms.mean == 5.0
    assert merged.num_drafts == 300 and merged.per_position[0].accepted == 200
    assert abs(merged.per_position[0].rate - 200 / 300) < 1e-12 and merged.per_position[0].ci_low is not None
    assert abs(merged.mean_acceptance_length - (1 + 300 / 300)) < 1e-12
    assert [r.wave for r in merged.runs] == [1, 2, 3] and merged.wave == 3


def test_two_runs_count_their_difference_as_spread():
    a, b = run(100.0, ci=0.01), run(110.0, ci=0.01)
    merged = merge(merge(None, a, run_record(a)), b, run_record(b, role="bracket"))
    lo, hi = merged.output_throughput_ci
    assert hi - lo > 10.0 and hi - lo < 15.0  # ~ the difference, not a 12.7-sigma t interval


def test_a_failed_run_keeps_what_was_measured():
    good = run(100.0)
    bad = ArmResult(arm_id="a", status=ArmStatus.failed, error="server died")
    merged = merge(merge(None, good, run_record(good)), bad, run_record(bad, role="bracket"))
    assert merged.status == ArmStatus.ok and merged.output_throughput == 100.0
    assert [r.status for r in merged.runs] == ["ok", "failed"]
    assert any("bracket: server died" in w for w in merged.warnings)


def steady(n, gap=0.1, tokens=32, noise=0.0):
    out = []
    for i in range(n):
        start = i * gap
        itl = [gap / tokens * (1 + (noise if i % 2 else -noise))] * (tokens - 1)
        out.append(
            RequestRecord(ok=True, completion_tokens=tokens, ttft_s=0.001, itl_s=itl, start_s=start, end_s=start + 0.001 + sum(itl), latency_s=0.001 + sum(itl))
        )
    return out


def test_ci_target_stops_a_steady_arm_and_not_a_noisy_one():
    rule = CiTarget(0.03, concurrency=1)
    assert not rule(steady(4), 1.0)  # too few requests to judge
    assert rule(steady(20), 2.0) and rule.fired_halfwidth <= 0.03
    noisy = []
    for i in range(20):  # the server slows 4x half-way through: the windows disagree
        gap = 0.4 if i >= 10 else 0.1
        start = noisy[-1].end_s if noisy else 0.0
        itl = [gap / 32] * 31
        noisy.append(RequestRecord(ok=True, completion_tokens=32, ttft_s=0.001, itl_s=itl, start_s=start, end_s=start + 0.001 + sum(itl)))
    half = relative_halfwidth(noisy, windows=10)
    assert half is not None and half > 0.03
    assert not CiTarget(0.03)(noisy, 6.0)
