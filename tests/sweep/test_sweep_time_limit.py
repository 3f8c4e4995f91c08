"""The sweep's hard time limit (`--time-limit`): the arm in flight is stopped, no launch starts after
it, and the session is stored complete with a verdict that names the limit.

The limit runs on the event loop's clock; the tests move that clock forward (by more than the limit)
from inside the hanging arm, so they decide nothing by real elapsed time and pass the same on a
loaded box."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time

import pytest
from pydantic import ValidationError

from specadvisor.domain import ArmFailed, ArmStatus, MeasurementWarning, SweepFinished, SweepSettings
from specadvisor.sweep.plan import plan_from_methods
from specadvisor.sweep.runner import SweepRunner
from sweep_fakes import FakeMeasure, FakeServer, no_prompts

LIMIT_S = 600.0  # far beyond what the fakes take: only the jump below reaches it


def tput(arm):
    return {None: 100.0, 2: 150.0, 4: 140.0}[arm.n]


def make_plan(**settings):
    return plan_from_methods("m", [("ngram", {"prompt_lookup_min": 2})], [2, 4], SweepSettings(num_prompts=8, time_limit_s=LIMIT_S, **settings))


@pytest.fixture
async def clock():
    """The running loop's clock, with a jump the test triggers (the limit's timer reads this clock)."""
    loop = asyncio.get_running_loop()
    real = loop.time
    offset = [0.0]
    loop.time = lambda: real() + offset[0]  # type: ignore[method-assign]
    yield offset
    del loop.time


def jumping(measure: FakeMeasure, offset: list[float], at: str):
    """The fake load, which moves the clock past the limit when arm `at` starts (and then hangs there)."""

    async def run(**kwargs):
        if kwargs["arm"].id == at:
            offset[0] += LIMIT_S + 1
        async for event in measure(**kwargs):
            yield event

    return run


async def collect(runner):
    """The events; a guard on real time (the loop's clock jumps), as the old runner hangs on the arm forever."""
    task = asyncio.create_task(_events(runner))
    started = time.monotonic()
    while not task.done():
        if time.monotonic() - started > 120:
            task.cancel()
            pytest.fail("the sweep did not stop at its time limit")
        await asyncio.sleep(0.01)
    return task.result()


async def _events(runner):
    return [e async for e in runner.events()]


async def test_the_limit_stops_the_arm_in_flight_and_launches_nothing_after_it(store, clock):
    plan = make_plan()
    measure = FakeMeasure(tput, hang={"ngram-n4"})
    runner = SweepRunner(plan, store, server_factory=lambda arm, s: FakeServer(arm), measure=jumping(measure, clock, "ngram-n4"), prompt_loader=no_prompts)
    events = await collect(runner)

    assert measure.calls == ["baseline", "ngram-n2", "ngram-n4"]  # the bracket after it never starts
    assert [s.arm.id for s in FakeServer.instances] == ["baseline", "ngram-n2", "ngram-n4"]
    assert all(s.stopped for s in FakeServer.instances)
    stored = store.get_session(plan.session.id)
    assert stored.status == "finished"
    cut = stored.result_for("ngram-n4")
    assert cut.status == ArmStatus.failed and cut.error.startswith("stopped at the time limit (10 min)")
    assert "\n" not in cut.error
    assert [(run.status, run.output_throughput) for run in cut.runs] == [("stopped", None)]  # stored as the run the limit cut
    assert [e.result.arm_id for e in events if isinstance(e, ArmFailed)] == ["ngram-n4"]
    assert stored.result_for("ngram-n2").status == ArmStatus.ok and stored.result_for("baseline").status == ArmStatus.ok
    assert [run.role for run in stored.result_for("baseline").runs] == ["trial"]  # no bracket run
    rec = stored.recommendation
    assert any("time limit of 10 min" in r and "1 arm(s) stopped mid-run" in r for r in rec.reasons)
    assert rec.decision in ("speculate", "do not speculate", "undecided")
    assert rec.decision != "undecided" or "time limit" in rec.verdict
    assert isinstance(events[-1], SweepFinished) and events[-1].recommendation.reasons == rec.reasons
    assert any(isinstance(e, MeasurementWarning) and "time limit of 10 min reached" in e.message for e in events)


async def test_arms_never_launched_are_stored_with_the_reason_and_the_verdict_is_undecided(store, clock):
    plan = make_plan()
    measure = FakeMeasure(tput, hang={"baseline"})
    runner = SweepRunner(plan, store, server_factory=lambda arm, s: FakeServer(arm), measure=jumping(measure, clock, "baseline"), prompt_loader=no_prompts)
    await collect(runner)

    assert len(FakeServer.instances) == 1 and FakeServer.instances[0].stopped
    stored = store.get_session(plan.session.id)
    assert stored.status == "finished"
    assert stored.result_for("baseline").error.startswith("stopped at the time limit")
    for arm_id in ("ngram-n2", "ngram-n4"):
        result = stored.result_for(arm_id)
        assert result.status == ArmStatus.skipped and result.warnings == ["not launched: the sweep reached its time limit (10 min)"]
    rec = stored.recommendation
    assert rec.decision == "undecided" and rec.arm_id is None
    assert "time limit of 10 min (1 arm(s) stopped mid-run, 2 not launched)" in rec.verdict


async def test_without_a_limit_nothing_changes(store):
    plan = plan_from_methods("m", [("ngram", {"prompt_lookup_min": 2})], [2, 4], SweepSettings(num_prompts=8))
    events = await collect(SweepRunner(plan, store, server_factory=lambda arm, s: FakeServer(arm), measure=FakeMeasure(tput), prompt_loader=no_prompts))
    rec = events[-1].recommendation
    assert not any("time limit" in r for r in rec.reasons) and "time limit" not in rec.verdict
    assert len(FakeServer.instances) == 4  # with the bracket


class ProcessServer(FakeServer):
    """A fake server with a real process group behind it (a sleeping child), killed the way
    VllmServer kills its group, so the test can see nothing is left running."""

    def __init__(self, arm):
        super().__init__(arm)
        self.proc: subprocess.Popen | None = None

    async def start(self):
        await super().start()
        self.proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"], start_new_session=True)

    async def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            await asyncio.to_thread(self.proc.wait, 30)
        await super().stop()


async def test_no_server_process_is_left_behind(store, clock):
    plan = make_plan()
    measure = FakeMeasure(tput, hang={"ngram-n2"})
    runner = SweepRunner(plan, store, server_factory=lambda arm, s: ProcessServer(arm), measure=jumping(measure, clock, "ngram-n2"), prompt_loader=no_prompts)
    await collect(runner)
    procs = [s.proc for s in FakeServer.instances]
    assert len(procs) == 2 and all(p is not None and p.poll() is not None for p in procs)  # reaped: none running
    assert store.get_session(plan.session.id).result_for("ngram-n4").status == ArmStatus.skipped


@pytest.mark.parametrize("minutes", [0.0, -1.0, float("nan"), float("inf"), 7 * 1440 + 1])
def test_the_limit_has_bounds(minutes):
    with pytest.raises(ValidationError):
        SweepSettings(time_limit_s=minutes * 60)
