"""What an undecided verdict asks for is priced as what it would cost where it would run (issue 22).

After a sweep its servers are down: "more requests" means one more launch of each contender with
some passes over the prompts, start-up included, and the verdict says so in those words. Between
looks the runner's own step runs on servers still up (sweep/held.py): passes only, no start-up."""

from __future__ import annotations

import math
import sys
from pathlib import Path

from specadvisor.analysis.costs import passes_seconds, round_seconds
from specadvisor.analysis.decision import decide_level, estimate_noise, step_on_running_servers
from specadvisor.domain import RequestRecord, RunRecord, SweepSettings
from specadvisor.sweep.plan import plan_from_methods

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sweep"))  # the shared fakes
from sweep_fakes import spec_result

PROMPTS = 8
STARTUP_S, PASS_S = 50.0, 10.0


def records(jitter: float, seed: int, speed: float) -> list[RequestRecord]:
    return [RequestRecord(index=j, latency_ms=200.0 * math.exp(jitter * math.sin(7.3 * seed * (j + 1))) / speed) for j in range(PROMPTS)]


def within_run_limited():
    """Two launches of each side, 8 prompts at 60% per-request noise, a 15% gain: undecided, and the
    within-run noise limits it (tests/analysis/test_sweep_recommend.py has the same layout)."""
    session = plan_from_methods("m", [("ngram", {})], [2], SweepSettings(num_prompts=PROMPTS, budget_s=600)).session
    for arm in session.arms:
        speed = 1.0 if arm.is_baseline else 1.15
        result = spec_result(arm.id, arm.n, 100.0 * speed)
        result.runs = [
            RunRecord(
                trial=t, wave=t, output_throughput=100.0 * speed + t * 0.2, completed=PROMPTS, duration_s=PASS_S, startup_s=STARTUP_S,
                requests=records(0.6, t + (2 if speed > 1 else 0), speed),
            )
            for t in (1, 2)
        ]  # fmt: skip
        session.results.append(result)
    return session


def test_an_undecided_verdict_prices_more_requests_as_a_relaunch_with_its_passes():
    session = within_run_limited()
    level = decide_level(session, 1, estimate_noise(session), looks=1, sequential=True)
    step = level.next_step
    assert level.decision == "undecided" and level.limited_by == "within-run" and step is not None
    assert step.kind == "requests" and not step.running and step.passes >= 2
    # start-up and every pass of one more launch of each contender (serially: one after the other)
    assert step.seconds == round_seconds(session.result_for, step.arm_ids, step.passes) == 2 * (STARTUP_S + step.passes * PASS_S)
    assert f"measuring one more launch of each of no speculation, ngram N=2 with {step.passes} passes over the prompts" in level.verdict
    assert "(start-up included) would likely decide it" in level.verdict, level.verdict
    assert "servers" not in level.verdict  # no server is up to take "more requests" once the sweep is over


def test_the_runners_step_on_running_servers_is_priced_as_passes_only():
    session = within_run_limited()
    level = decide_level(session, 1, estimate_noise(session), looks=1, sequential=True)
    step = step_on_running_servers(session, level, confidence=0.95, looks=1)
    assert step is not None and step.kind == "requests" and step.running
    assert step.seconds == passes_seconds(session.result_for, step.arm_ids, step.passes) == step.passes * PASS_S  # no start-up
    assert step.amount == step.passes * PROMPTS
    text = step.text("no speculation, ngram N=2")
    assert text.startswith(
        f"measuring {step.passes} pass{'es' if step.passes > 1 else ''} over the prompts more on each of no speculation, ngram N=2's running servers"
    )
    assert "(no start-up) would likely decide it" in text
