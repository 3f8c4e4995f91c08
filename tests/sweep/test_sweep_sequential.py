"""Sequential measuring (--budget): the real runner and store look at the decision after each round and
add launches (or requests on a launch) while a level is undecided; fakes only at the process boundary."""

from __future__ import annotations

import math

from specadvisor.domain import ArmFinished, MeasurementWarning, Progress, RequestRecord, RunRecord, SweepSettings
from specadvisor.figures import MAX_LOOKS
from specadvisor.sweep.plan import plan_from_methods
from specadvisor.sweep.runner import SweepRunner
from specadvisor.sweep.slots import Slot
from sweep_fakes import FakeServer, no_prompts, spec_result

MACHINE = [1.0, 1.05, 0.97, 1.03, 0.99, 1.02, 0.98, 1.01, 1.0, 0.99, 1.02, 0.98] * 4  # launch-to-launch jitter


class Launches:
    """Recorded figures: launch i runs at true(arm) x MACHINE[i]; `jitter` > 0 adds per-request
    records (8 prompts of 400 ms at T=0) with that much per-request noise."""

    def __init__(self, speedup: float, jitter: float = 0.0):
        self.speedup, self.jitter, self.calls = speedup, jitter, []

    async def __call__(self, *, arm, settings, **kw):
        i = len(self.calls)
        self.calls.append(arm.id)
        value = (100.0 if arm.is_baseline else 100.0 * self.speedup) * MACHINE[i % len(MACHINE)]
        yield Progress(arm_id=arm.id, completed=8, total=8, output_throughput=value)
        result = spec_result(arm.id, arm.n, value)
        result.duration_s, result.completed = 10.0, 8
        if self.jitter:
            ms = 400.0 * 100.0 / value
            result.runs = [
                RunRecord(requests=[RequestRecord(index=j, latency_ms=ms * math.exp(self.jitter * math.sin(7.3 * (i + 1) * (j + 1)))) for j in range(8)])
            ]
        yield ArmFinished(result=result)


async def sweep(store, measure, slots=None, **settings):
    plan = plan_from_methods("m", [("ngram", {})], [2], SweepSettings(num_prompts=8, **settings))
    runner = SweepRunner(plan, store, server_factory=lambda arm, s: FakeServer(arm), measure=measure, prompt_loader=no_prompts, slots=slots)
    events = [e async for e in runner.events()]
    return store.get_session(plan.session.id), events


async def test_an_undecided_gain_gets_more_launches_until_decided(store):
    fixed, _ = await sweep(store, Launches(1.15))
    assert fixed.recommendation.decision == "undecided" and fixed.settings.looks == 1  # the fixed design stops here
    measure = Launches(1.15)
    session, events = await sweep(store, measure, budget_s=3600)
    rec = session.recommendation
    assert rec.verdict.startswith("speculate: ngram N=2; decided at look ") and session.settings.looks >= 2 and rec.looks == session.settings.looks
    assert session.provenance.stopped.code == "decided" and session.provenance.stopped.looks == session.settings.looks  # why it stopped, recorded
    assert measure.calls[:3] == ["baseline", "ngram-n2", "baseline"] and len(measure.calls) > 3
    # contenders launched together, the least recently launched first: after the bracket the arm goes
    # first, so the launch order stays balanced (b n b | n b n b ...) and a drift over it cancels
    assert measure.calls[3:] == ["ngram-n2", "baseline"] * ((len(measure.calls) - 3) // 2)
    trials = [run.trial for run in session.result_for("ngram-n2").runs]
    assert trials == list(range(1, len(trials) + 1))  # every added launch is a new trial
    assert any(isinstance(e, MeasurementWarning) and e.message.startswith("look 1, concurrency 1: undecided") for e in events)


async def test_the_budget_bounds_the_extra_measuring(store):
    measure = Launches(1.15)
    session, events = await sweep(store, measure, budget_s=20)  # one more round costs 2 x (1.5 s start-up + 10 s)
    assert measure.calls == ["baseline", "ngram-n2", "baseline"]
    assert session.recommendation.decision == "undecided" and session.recommendation.verdict.startswith("undecided after 3 launches")
    assert any(isinstance(e, MeasurementWarning) and "measuring budget spent" in e.message for e in events)


async def test_a_clear_case_stops_after_the_first_look(store):
    measure = Launches(1.6)
    session, _ = await sweep(store, measure, budget_s=3600)
    assert measure.calls == ["baseline", "ngram-n2", "baseline"] and session.settings.looks == 1
    assert session.recommendation.verdict == "speculate: ngram N=2; decided at look 1, 0.0 min of the 60 min budget spent"


async def test_within_run_noise_is_answered_with_more_requests_on_each_launch(store):
    measure = Launches(1.2, jitter=0.5)  # 50% per-request noise on 8 prompts: a 20% gain is what a few passes can decide
    session, _ = await sweep(store, measure, budget_s=400)  # a round or two
    repeats = [run.repeat for r in session.results for run in r.runs]
    assert max(repeats) > 1  # passes over the prompts on one running server
    assert session.recommendation.per_concurrency[0].comparison == "paired"


async def test_the_plan_takes_at_most_its_looks_and_the_last_one_spends_the_budget(store):
    """A gain that stays at the margin: the runner stops after MAX_LOOKS looks, having spent on the
    block before the last look what the budget still paid for (no later look could use it)."""
    measure = Launches(1.02)
    session, events = await sweep(store, measure, budget_s=600)  # a round costs 2 x (1.5 s + 10 s)
    assert session.settings.looks == MAX_LOOKS and session.recommendation.decision == "undecided"
    assert any(isinstance(e, MeasurementWarning) and e.message.startswith(f"the plan's {MAX_LOOKS} looks are taken") for e in events)
    spent = sum(run.startup_s + run.duration_s for r in session.results for run in r.runs)
    assert 600 - 23 < spent - 3 * 11.5 <= 600  # all but less than one round of the budget


async def test_the_budget_is_wall_clock_time_when_launches_run_in_parallel(store):
    """With two slots a round launches both contenders at once: it costs its slowest launch (1.5 s
    start-up + 10 s), not their sum (23 s), so a 20 s budget pays for one round that it would not
    pay for serially."""
    serial = Launches(1.15)
    await sweep(store, serial, budget_s=20)
    assert len(serial.calls) == 3  # one slot: the round's 23 s are over the budget
    measure = Launches(1.15)
    session, events = await sweep(store, measure, budget_s=20, slots=[Slot(index=0, cores=(0,)), Slot(index=1, cores=(1,))])
    assert session.settings.parallel == 2
    added = [(r.arm_id, run.wave) for r in session.results for run in r.runs if run.trial == 2]
    assert sorted(a for a, _ in added) == ["baseline", "ngram-n2"] and len({w for _, w in added}) == 1  # one round, in one wave
    assert len(measure.calls) == 6  # the planned two waves of two, the round, then the budget is spent
    assert any(isinstance(e, MeasurementWarning) and e.message.startswith("look 1, concurrency 1: undecided; measuring one more launch") for e in events)
    assert any(isinstance(e, MeasurementWarning) and e.message.startswith("measuring budget spent (0.2 of 0.3 min)") for e in events)


class Recorded:
    """Throughputs per arm, in launch order (the next one at each launch of that arm)."""

    def __init__(self, **values: list[float]):
        self.values, self.calls = {k.replace("_", "-"): list(v) for k, v in values.items()}, []

    async def __call__(self, *, arm, settings, **kw):
        self.calls.append(arm.id)
        value = self.values[arm.id].pop(0)
        yield Progress(arm_id=arm.id, completed=8, total=8, output_throughput=value)
        result = spec_result(arm.id, arm.n, value)
        result.duration_s, result.completed = 10.0, 8
        yield ArmFinished(result=result)


async def test_a_single_launch_on_a_noisy_machine_is_launched_again_before_any_answer(store):
    """h200-rename-live seed 48 (benchmarks/decision.py): the bracket pair spreads 10%, n-gram's one
    launch reads 0.76x; moderated toward the 7% prior that was "do not speculate". The runner now
    launches n-gram alone once more (the baseline has its two) before the look answers."""
    measure = Recorded(baseline=[515, 593, 560, 548, 571, 552], ngram_n2=[422, 700, 712, 695, 705, 690])
    session, events = await sweep(store, measure, budget_s=3600)
    assert measure.calls[:4] == ["baseline", "ngram-n2", "baseline", "ngram-n2"], measure.calls
    assert session.recommendation.decision != "do not speculate", session.recommendation.verdict
    assert any(isinstance(e, MeasurementWarning) and e.message.startswith("look 1, concurrency 1: undecided; measuring one more launch") for e in events)
