"""More requests on running servers (issue 22): measuring sequentially side by side, the look after the
last wave happens while its servers are still up, and a step limited by within-run noise is more
passes over the prompts on those same servers, in lockstep, instead of a relaunch. The real runner,
scheduler, store and decision; fakes only at the process boundary (servers and the load generator)."""

from __future__ import annotations

import asyncio
import math

from specadvisor.domain import ArmFinished, MeasurementWarning, Progress, RequestRecord, RunRecord, SweepSettings
from specadvisor.figures import compare, estimate_noise, launches
from specadvisor.sweep.budget import wall_seconds
from specadvisor.sweep.plan import plan_from_methods
from specadvisor.sweep.runner import SweepRunner
from specadvisor.sweep.slots import Slot
from sweep_fakes import FakeServer, no_prompts, spec_result

SIDE_BY_SIDE = [Slot(index=0, cores=(0,)), Slot(index=1, cores=(1,))]
PROMPTS = 8


class NoisyRequests:
    """Passes over 8 prompts at T=0: each request's latency is its prompt's length x a per-request
    factor (`jitter` on the log scale, deterministic) / the arm's speed; a pass lasts `pass_s`. It
    records whether each pass overlapped the other arm's pass of the same number, to see the lockstep."""

    def __init__(self, speedup: float, jitter: float, pass_s: float = 10.0):
        self.speedup, self.jitter, self.pass_s = speedup, jitter, pass_s
        self.calls: list[str] = []
        self.started: dict[str, int] = {}  # passes started per arm
        self.lockstep: list[bool] = []  # per pass: the other arm started its pass of the same number meanwhile

    async def __call__(self, *, arm, settings, base_url, **kw):
        i = len(self.calls)
        self.calls.append(arm.id)
        mine = self.started[arm.id] = self.started.get(arm.id, 0) + 1
        other = "ngram-n4" if arm.is_baseline else "baseline"
        for _ in range(2000):  # up to ~2 s: the other server's pass of the same number starts meanwhile (lockstep)
            if self.started.get(other, 0) >= mine:
                break
            await asyncio.sleep(0.001)
        self.lockstep.append(self.started.get(other, 0) >= mine)
        speed = 1.0 if arm.is_baseline else self.speedup
        latencies = [400.0 * (1 + j / 4) * math.exp(self.jitter * math.sin(7.3 * (i + 1) * (j + 1))) / speed for j in range(PROMPTS)]
        value = 100.0 * speed
        yield Progress(arm_id=arm.id, completed=PROMPTS, total=PROMPTS, output_throughput=value)
        result = spec_result(arm.id, arm.n, value)
        result.duration_s, result.completed = self.pass_s, PROMPTS
        result.runs = [RunRecord(requests=[RequestRecord(index=j, latency_ms=ms) for j, ms in enumerate(latencies)])]
        yield ArmFinished(result=result)


async def sweep(store, measure, **settings):
    settings = {"bracket": False, **settings}
    plan = plan_from_methods("m", [("ngram", {})], [4], SweepSettings(num_prompts=PROMPTS, **settings))
    runner = SweepRunner(plan, store, server_factory=lambda arm, s, **kw: FakeServer(arm), measure=measure, prompt_loader=no_prompts, slots=SIDE_BY_SIDE)
    events = [e async for e in runner.events()]
    return store.get_session(plan.session.id), [e.message for e in events if isinstance(e, MeasurementWarning)]


async def test_within_run_noise_gets_more_requests_on_the_running_servers_not_a_relaunch(store):
    """One side-by-side wave, then the looks: the extra requests go to the two servers already up
    (no start-up paid again), as more passes of that same launch, both arms pass for pass."""
    measure = NoisyRequests(1.3, jitter=0.45)
    session, messages = await sweep(store, measure, budget_s=300)
    assert len(FakeServer.instances) == 2 and all(s.stopped for s in FakeServer.instances)  # no relaunch; both stopped at the end
    assert any(m.startswith("look 1, concurrency 1: undecided; measuring 1 more pass over the prompts on each contender's running server") for m in messages)
    base, ngram = session.result_for("baseline"), session.result_for("ngram-n4")
    assert len(base.runs) == len(ngram.runs) > 2  # lockstep: every pass on both servers
    assert {(r.trial, r.role, r.wave) for r in (*base.runs, *ngram.runs)} == {(1, "trial", 1)}  # the same launch
    assert [r.repeat for r in base.runs][1:] == list(range(2, len(base.runs) + 1))  # passes 2, 3, ... of the launch
    # each pass measured beside the other arm's pass of the same number (they start together, see the same host)
    assert all(measure.lockstep) and len(measure.lockstep) == 2 * len(base.runs)
    # a pass on a running server is not a launch: no launch-to-launch repeat is claimed from it
    assert [len(launches(r)) for r in (base, ngram)] == [1, 1] and estimate_noise(session).observed_df == 0
    assert estimate_noise(session).request_var is not None  # the passes separate the within-run noise
    assert wall_seconds(session) == 1.5 + 10.0 * len(base.runs)  # one start-up, then the passes
    assert session.recommendation.verdict.startswith("speculate: ngram N=4; decided at look "), session.recommendation.reasons


async def test_with_the_bracket_on_the_passes_go_to_the_confirmation_wave_held_for_the_look(store):
    """The defaults (`--budget` with the end-of-sweep bracket): side by side, the plan's last wave is
    the bracket's confirmation wave, a second launch of the baseline AND of the leader. That wave is
    the one held for the look, so the passes run on those two servers (no third launch of either)
    and are credited to that launch (role confirm, wave 2), never to trial 1: each arm has two
    launches, one of 1 pass and one of many. The comparison weighs each launch by its precision
    (figures.Side): with no launch-to-launch spread to speak of, every pass counts alike, so the
    passes narrow the arm's whole within-run share, not only the held launch's. Weighted equally, as
    before, the first launch's single pass was a floor (a quarter of one pass's share per side) that
    no number of passes lowered, and this sweep took 13 passes where 7 decide it now."""
    measure = NoisyRequests(1.3, jitter=0.45)
    session, messages = await sweep(store, measure, budget_s=300, bracket=True)
    assert "wave 2: baseline on cores 1, ngram N=4 on cores 0" in messages, messages  # the slots rotate (scheduler.rotated)
    assert len(FakeServer.instances) == 4 and all(s.stopped for s in FakeServer.instances)  # 2 waves of 2: no relaunch after the look
    looks = [m for m in messages if m.startswith("look ")]
    assert looks and all("on each contender's running server" in m for m in looks), messages
    base, ngram = session.result_for("baseline"), session.result_for("ngram-n4")
    for result in (base, ngram):
        first, *held = result.runs
        assert (first.trial, first.role, first.wave, first.repeat) == (1, "trial", 1, 1)
        assert {(r.trial, r.role, r.wave) for r in held} == {(1, "confirm", 2)} and [r.repeat for r in held] == list(range(1, len(held) + 1))
        assert [(x.passes, x.wave) for x in launches(result)] == [(1, 1), (len(held), 2)] and len(held) > 2
    noise = estimate_noise(session)
    assert noise.observed_df == 2 and noise.request_var is not None  # one repeat per arm; the passes separate the within-run noise
    comparison = compare(ngram_arm(session), ngram, base, noise, lambda df: 2.0)
    assert noise.launch_var == 0.0 and comparison.launch_var == 0.0
    one_pass = noise.request_var / PROMPTS
    assert math.isclose(comparison.within_var, 2 * one_pass / len(base.runs))  # every pass of the arm counts alike: no floor
    assert len(held) <= 8, len(held)
    assert wall_seconds(session) == 2 * 1.5 + 10.0 * len(base.runs)  # two waves (a start-up each), then the passes
    assert session.recommendation.verdict.startswith("speculate: ngram N=4; decided at look "), session.recommendation.reasons


def ngram_arm(session):
    return next(a for a in session.arms if a.id == "ngram-n4")


async def test_a_budget_that_pays_for_passes_but_not_for_a_relaunch_still_measures(store):
    """Passes of 1 s against a relaunch of 2.5 s (1.5 s start-up): a 2 s budget paid for nothing
    before (a relaunch was the only "more data"); on the running servers it pays for two passes,
    and never for more than it allows."""
    measure = NoisyRequests(1.3, jitter=0.45, pass_s=1.0)
    session, messages = await sweep(store, measure, budget_s=2.0)
    assert len(FakeServer.instances) == 2
    extra = wall_seconds(session) - (1.5 + 1.0)
    assert 0 < extra <= 2.0, messages
    assert len(session.result_for("baseline").runs) == len(session.result_for("ngram-n4").runs) == 3


async def test_launch_to_launch_spread_is_still_answered_with_a_relaunch(store):
    """No within-run noise (every request of a prompt takes the same time): after the pass that
    separates it, what limits the answer is the spread between launches, which passes on the same
    servers cannot narrow; the held servers are stopped before the next launches start."""
    running_at_start: list[int] = []

    def factory(arm, s, **kw):
        running_at_start.append(sum(1 for x in FakeServer.instances if x.running and x.arm.id == arm.id))  # its last launch still up?
        return FakeServer(arm)

    class Spread(NoisyRequests):
        async def __call__(self, *, arm, settings, base_url, **kw):
            async for event in super().__call__(arm=arm, settings=settings, base_url=base_url, **kw):
                if isinstance(event, ArmFinished):  # one factor per server launch: 6% apart
                    launch = sum(1 for x in FakeServer.instances if x.arm.id == arm.id)
                    event.result.output_throughput = (event.result.output_throughput or 0) * (1.06 if launch % 2 else 0.94)
                yield event

    plan = plan_from_methods("m", [("ngram", {})], [4], SweepSettings(num_prompts=PROMPTS, bracket=False, budget_s=120))
    runner = SweepRunner(plan, store, server_factory=factory, measure=Spread(1.06, jitter=0.0), prompt_loader=no_prompts, slots=SIDE_BY_SIDE)
    messages = [e.message async for e in runner.events() if isinstance(e, MeasurementWarning)]
    looks = [m for m in messages if m.startswith("look ")]
    assert looks[0].endswith("measuring 1 more pass over the prompts on each contender's running server"), messages  # separates the noise
    assert "more launch" in looks[1], messages  # then: the spread between launches limits it
    assert len(FakeServer.instances) > 2 and max(running_at_start) == 0  # held servers stopped first


async def test_a_cancel_during_the_extra_passes_stops_the_held_servers(store):
    """A user's cancel while the held servers measure more passes: both servers are stopped, the
    session is interrupted, and what was measured stays stored."""
    measure = NoisyRequests(1.3, jitter=0.45)
    plan = plan_from_methods("m", [("ngram", {})], [4], SweepSettings(num_prompts=PROMPTS, bracket=False, budget_s=300))
    runner = SweepRunner(plan, store, server_factory=lambda arm, s, **kw: FakeServer(arm), measure=measure, prompt_loader=no_prompts, slots=SIDE_BY_SIDE)
    async for event in runner.events():
        if isinstance(event, Progress) and len(measure.calls) >= 3:  # the first extra pass is measuring
            runner.cancel()
    session = store.get_session(plan.session.id)
    assert session.status == "interrupted" and len(FakeServer.instances) == 2
    assert all(s.stopped and not s.running for s in FakeServer.instances)
    assert session.result_for("baseline").output_throughput and session.result_for("ngram-n4").output_throughput


async def test_the_time_limit_cuts_the_extra_passes_and_stops_the_held_servers(store):
    """`--time-limit` fires while the running servers measure an extra pass (real seconds here; the
    passes' recorded durations are short, so the budget let them start): the pass in flight is
    stored as a stopped run with the requests it completed and the reason, both servers are stopped,
    and the sweep still ends with its answer from the full passes only."""

    class Slow(NoisyRequests):
        async def __call__(self, *, arm, settings, base_url, **kw):
            if len(self.calls) >= 2:  # the extra passes, after the planned wave: 3 requests done, then past the limit
                self.calls.append(arm.id)
                yield Progress(arm_id=arm.id, completed=3, total=PROMPTS, output_throughput=1000.0)
                await asyncio.sleep(1.5)
            async for event in super().__call__(arm=arm, settings=settings, base_url=base_url, **kw):
                yield event

    measure = Slow(1.3, jitter=0.45, pass_s=0.1)
    session, messages = await sweep(store, measure, budget_s=60, time_limit_s=1.0)
    assert any(m.startswith("time limit of") for m in messages), messages
    assert len(FakeServer.instances) == 2 and all(s.stopped and not s.running for s in FakeServer.instances)
    assert session.status == "finished" and session.recommendation is not None
    base, ngram = session.result_for("baseline"), session.result_for("ngram-n4")
    for result in (base, ngram):
        full, cut = result.runs  # the cut pass is stored, after the full one
        assert (full.status, full.repeat) == ("ok", 1)
        assert (cut.status, cut.repeat, cut.completed, cut.planned) == ("stopped", 2, 3, PROMPTS)
        assert (cut.trial, cut.role, cut.wave) == (full.trial, full.role, full.wave)  # a pass of the same launch
        assert cut.output_throughput is None and cut.duration_s and cut.duration_s > 0.5  # time spent (until the limit), no figure
        assert result.status.value == "ok" and result.output_throughput == full.output_throughput  # 1000 tok/s of the cut pass is nowhere
        assert [x.passes for x in launches(result)] == [1]
        assert any(w.startswith("trial 1, pass 2: stopped at the time limit (1 s) after 3 of 8 requests") for w in result.warnings), result.warnings
    assert sum(m.startswith("trial 1, pass 2: stopped at the time limit") for m in messages) == 2, messages
    assert any("2 pass(es) of measured arms cut, stored as stopped and not counted" in r for r in session.recommendation.reasons)
    assert wall_seconds(session) > 1.5 + 0.1 + 0.5  # the cut pass's time was spent: the budget counts it
