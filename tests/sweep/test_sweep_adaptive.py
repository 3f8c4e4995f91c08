"""--adaptive: early stop of an arm clearly behind the leader, never of a family's first arm."""

from __future__ import annotations

from specadvisor.domain import ArmStatus, Progress, SweepFinished, SweepSettings
from specadvisor.sweep.adaptive import AdaptivePolicy
from specadvisor.sweep.plan import plan_from_methods
from specadvisor.sweep.runner import SweepRunner
from sweep_fakes import FakeMeasure, FakeServer, no_prompts, spec_result


def plan():
    return plan_from_methods("m", [("ngram", {})], [2, 4], SweepSettings(num_prompts=8))


def test_policy_stops_only_a_clearly_losing_arm_of_a_known_family():
    s = plan().session
    arms = {a.id: a for a in s.arms}
    policy = AdaptivePolicy(s)
    slow = Progress(arm_id="ngram-n2", completed=4, total=8, output_throughput=30.0)
    s.results.append(spec_result("baseline", None, 100.0))
    assert policy.should_stop_early(arms["ngram-n4"], slow) is None  # family has no reference yet
    s.results.append(spec_result("ngram-n4", 4, 150.0))
    assert "stopped early after 4/8" in policy.should_stop_early(arms["ngram-n2"], slow)
    early = Progress(arm_id="ngram-n2", completed=2, total=8, output_throughput=30.0)
    assert policy.should_stop_early(arms["ngram-n2"], early) is None  # too soon to judge
    close = Progress(arm_id="ngram-n2", completed=4, total=8, output_throughput=130.0)
    assert policy.should_stop_early(arms["ngram-n2"], close) is None  # within the margin


async def test_runner_records_a_stopped_early_arm_and_moves_on(store):
    p = plan()
    measure = FakeMeasure(lambda arm: {None: 100.0, 2: 140.0, 4: 150.0}[arm.n], first_fraction=0.2)
    runner = SweepRunner(p, store, server_factory=lambda arm, s: FakeServer(arm), measure=measure, prompt_loader=no_prompts, adaptive=True)
    events = [e async for e in runner.events()]
    assert measure.calls == ["baseline", "ngram-n4", "ngram-n2", "baseline"]  # the last: the end-of-sweep bracket
    stored = store.get_session(p.session.id)
    n2 = stored.result_for("ngram-n2")
    assert n2.status == ArmStatus.stopped_early and "clearly below the leader" in n2.warnings[0]
    done = events[-1]
    assert isinstance(done, SweepFinished) and done.recommendation.arm_id == "ngram-n4"
    assert all(s.stopped for s in FakeServer.instances)
