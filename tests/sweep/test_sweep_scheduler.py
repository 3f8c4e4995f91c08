"""The scheduler through the real runner and a real SQLite store; fakes only at the process boundary."""

from __future__ import annotations

import asyncio
from typing import ClassVar

from specadvisor.domain import ArmFinished, Progress, SweepFinished, SweepSettings
from specadvisor.sweep.plan import plan_from_methods
from specadvisor.sweep.runner import SweepRunner
from specadvisor.sweep.slots import cpu_slots
from sweep_fakes import FakeMeasure, FakeServer, no_prompts, spec_result


def tput(arm):
    return {None: 100.0, 2: 150.0, 4: 140.0, 6: 120.0, 8: 110.0}[arm.n]


def make_plan(n_values=(2, 4), **settings):
    return plan_from_methods("m", [("ngram", {})], list(n_values), SweepSettings(num_prompts=8, **settings))


async def run(plan, store, measure, **kw):
    factory = kw.pop("factory", None) or (lambda arm, session: FakeServer(arm))
    runner = SweepRunner(plan, store, server_factory=factory, measure=measure, prompt_loader=no_prompts, **kw)
    return runner, [e async for e in runner.events()]


async def test_trials_interleave_and_the_baseline_is_bracketed(store):
    plan = make_plan(trials=3)
    measure = FakeMeasure(tput)
    runner, events = await run(plan, store, measure)
    # trial k of every arm before trial k+1 of any, then the baseline again
    assert measure.calls == ["baseline", "ngram-n2", "ngram-n4"] * 3 + ["baseline"]
    stored = store.get_session(plan.session.id)
    base = stored.result_for("baseline")
    assert [(r.role, r.trial) for r in base.runs] == [("trial", 1), ("trial", 2), ("trial", 3), ("bracket", 3)]
    assert [r.wave for r in base.runs] == [1, 4, 7, 10]
    n2 = stored.result_for("ngram-n2")
    assert len(n2.runs) == 3 and n2.trials == [150.0, 150.0, 150.0] and n2.completed == 24
    assert runner.launches_used == 10 == events[-1].launches_full_grid
    assert stored.settings.trials == 3  # each measure call ran one trial; the session keeps the plan's count


async def test_every_measure_call_is_one_trial(store):
    plan = make_plan(trials=2)
    seen = []

    class Spy(FakeMeasure):
        async def __call__(self, *, settings, **kw):
            seen.append(settings.trials)
            async for e in super().__call__(settings=settings, **kw):
                yield e

    await run(plan, store, Spy(tput))
    assert seen and set(seen) == {1}


async def test_parallel_waves_pin_slots_and_keep_the_baseline_beside_its_arms(store):
    plan = make_plan(n_values=(2, 4, 6, 8))
    placements = []

    def factory(arm, session, placement=None):
        placements.append((arm.id, placement))
        return FakeServer(arm)

    live = {"now": 0, "max": 0}

    class Overlap(FakeMeasure):
        async def __call__(self, **kw):
            live["now"] += 1
            live["max"] = max(live["max"], live["now"])
            await asyncio.sleep(0.02)
            try:
                async for e in super().__call__(**kw):
                    yield e
            finally:
                live["now"] -= 1

    slots = cpu_slots([0, 1, 2], 3)
    _runner, events = await run(plan, store, Overlap(tput), factory=factory, slots=slots)
    assert live["max"] == 3  # three servers measured at the same time
    waves: dict[int, list[str]] = {}
    stored = store.get_session(plan.session.id)
    for r in stored.results:
        for run_ in r.runs:
            waves.setdefault(run_.wave, []).append((r.arm_id, run_.role, run_.placement))
    # wave 1: baseline + 2 arms; wave 2: the baseline again beside the next 2; wave 3: confirmation
    assert sorted(a for a, _, _ in waves[1]) == ["baseline", "ngram-n2", "ngram-n4"]
    assert sorted(a for a, _, _ in waves[2]) == ["baseline", "ngram-n6", "ngram-n8"]
    assert sorted(a for a, _, _ in waves[3]) == ["baseline", "ngram-n2", "ngram-n4"]  # the top two re-measured
    assert {role for a, role, _ in waves[3]} == {"confirm"}
    assert {p for w in waves.values() for _, _, p in w} == {"cores 0", "cores 1", "cores 2"}
    ports = [p.port for _, p in placements]
    assert all(ports) and len(set(ports[:3])) == 3  # servers side by side never share a port
    assert placements[0][1].slot.server_env() == {"VLLM_CPU_OMP_THREADS_BIND": "0"}
    assert stored.result_for("ngram-n2").wave == 3 and stored.result_for("ngram-n6").placement in {"cores 1", "cores 2"}
    assert stored.recommendation.arm_id == "ngram-n2"
    assert isinstance(events[-1], SweepFinished)


async def test_no_bracket_measures_each_configuration_once(store):
    plan = make_plan(bracket=False)
    measure = FakeMeasure(tput)
    await run(plan, store, measure)
    assert measure.calls == ["baseline", "ngram-n2", "ngram-n4"]
    assert store.get_session(plan.session.id).recommendation.drift is None


class Drifting(FakeMeasure):
    """Recorded figures with drift injected: launch i runs at true(arm) x machine[i] (or 1 + step x i)."""

    def __init__(self, true, step=0.0, machine=None):
        super().__init__(true)
        self.true, self.step, self.machine, self.launch = true, step, machine, 0

    async def __call__(self, *, arm, settings, **kw):
        self.calls.append(arm.id)
        factor = self.machine[self.launch] if self.machine else 1 + self.step * self.launch
        value = self.true(arm) * factor
        self.launch += 1
        total = settings.num_prompts
        yield Progress(arm_id=arm.id, completed=total, total=total, output_throughput=value)
        yield ArmFinished(result=spec_result(arm.id, arm.n, value))


def one_arm(**settings):
    return plan_from_methods("m", [("ngram", {})], [2], SweepSettings(num_prompts=8, **settings))


async def test_a_fake_speedup_from_drift_is_not_recommended(store):
    # ngram N=2 is truly no faster than the baseline; the machine gets 20% faster per launch.
    same = lambda arm: 100.0  # noqa: E731
    plan = one_arm()
    measure = Drifting(same, step=0.2)
    await run(plan, store, measure)
    rec = store.get_session(plan.session.id).recommendation
    assert measure.calls == ["baseline", "ngram-n2", "baseline"]
    assert rec.drift is not None and abs(rec.drift.change - 0.4) < 1e-9 and rec.drift.exceeded
    assert rec.arm_id is None and rec.decision == "undecided"  # not recommended: 120 sits between 100 and 140
    assert rec.per_concurrency[0].speedup_ci[0] < 1 < rec.per_concurrency[0].speedup_ci[1]
    assert any("the baseline moved +40.0%" in r and "drift alone could produce it" in r for r in rec.reasons)


async def test_a_speedup_within_the_drift_is_undecided_and_drift_is_named(store):
    # recorded: baseline 100, the arm (truly equal) while the machine ran 18% fast, the bracket at +12%
    plan = one_arm()
    await run(plan, store, Drifting(lambda arm: 100.0, machine=[1.0, 1.18, 1.12]))
    rec = store.get_session(plan.session.id).recommendation
    assert rec.arm_id is None and rec.decision == "undecided" and not rec.do_not_speculate and not rec.withheld
    assert rec.verdict.startswith("undecided after 3 launches over 2 arm(s)") and "launch" in rec.verdict
    line = next(r for r in rec.reasons if "baseline moved" in r)
    assert "+12.0%" in line and "the gap is +11.5%" in line and "drift alone could produce it" in line


async def test_interleaved_trials_cancel_a_steady_drift(store):
    plan = one_arm(trials=3)
    measure = Drifting(lambda arm: 100.0, step=0.05)  # 7 launches: the machine ends 30% faster
    await run(plan, store, measure)
    stored = store.get_session(plan.session.id)
    assert measure.calls == ["baseline", "ngram-n2"] * 3 + ["baseline"]
    rec = stored.recommendation
    assert rec.arm_id is None and rec.drift.exceeded
    n2 = stored.result_for("ngram-n2")
    lo, hi = n2.output_throughput_ci
    assert lo <= min(n2.trials) and hi >= max(n2.trials)  # the interval covers the repeat-run spread


async def test_a_real_speedup_survives_small_drift(store):
    plan = one_arm()
    measure = Drifting(lambda arm: 100.0 if arm.is_baseline else 140.0, step=0.01)
    await run(plan, store, measure)
    rec = store.get_session(plan.session.id).recommendation
    assert rec.arm_id == "ngram-n2" and rec.verdict == "speculate: ngram N=2"
    assert not rec.drift.exceeded and any("baseline moved +2.0%" in r and "drift cannot explain it" in r for r in rec.reasons)
    lo, hi = rec.speedup_ci
    assert 1.0 < lo < hi


async def test_two_slots_fill_waves_with_arms_and_confirm_beside_the_baseline(store):
    plan = make_plan(n_values=(2, 4, 6))
    measure = FakeMeasure(tput)
    await run(plan, store, measure, slots=cpu_slots([0, 1], 2))
    stored = store.get_session(plan.session.id)
    waves: dict[int, set] = {}
    for r in stored.results:
        for run_ in r.runs:
            waves.setdefault(run_.wave, set()).add((r.arm_id, run_.role))
    assert waves == {
        1: {("baseline", "trial"), ("ngram-n2", "trial")},
        2: {("ngram-n4", "trial"), ("ngram-n6", "trial")},  # no slot spent on a second baseline
        3: {("baseline", "confirm"), ("ngram-n2", "confirm")},  # the leader re-measured beside the baseline
    }
    assert stored.recommendation.arm_id == "ngram-n2" and stored.recommendation.drift is not None


async def test_ci_target_is_handed_to_the_measurement_and_savings_are_reported(store):
    from specadvisor.analysis.summary import session_summary

    plan = make_plan(ci_target=0.03, bracket=False)
    stops = []

    class Stopping(FakeMeasure):
        async def __call__(self, *, arm, settings, stop=None, **kw):
            stops.append(stop)
            self.calls.append(arm.id)
            yield Progress(arm_id=arm.id, completed=3, total=8, output_throughput=self.throughput(arm))
            r = spec_result(arm.id, arm.n, self.throughput(arm))
            r.completed, r.duration_s = 3, 3.0  # stopped after 3 of the 8 prompts
            yield ArmFinished(result=r)

    class EightPrompts:
        prompts: ClassVar[list[int]] = list(range(8))

    runner = SweepRunner(plan, store, server_factory=lambda arm, s: FakeServer(arm), measure=Stopping(tput), prompt_loader=lambda s: EightPrompts())
    [e async for e in runner.events()]
    assert len(stops) == 3 and all(s is not None and s.target == 0.03 for s in stops)
    summary = session_summary(store.get_session(plan.session.id))
    assert summary["requests_saved"] == 15 and summary["seconds_saved"] == 15.0
    assert summary["arms"][0]["runs"][0]["planned"] == 8


async def test_the_drift_line_names_what_the_baseline_gpus_did(store):
    from specadvisor.domain import GpuState, GpuTelemetry

    plan = one_arm()
    await run(plan, store, Drifting(lambda arm: 100.0, machine=[1.0, 0.92, 0.85]))
    session = store.get_session(plan.session.id)
    base = session.result_for("baseline")
    base.telemetry = GpuTelemetry(
        source="nvml",
        gpus=[0],
        start=[GpuState(gpu=0, sm_clock_mhz=1980, temperature_c=41)],
        end=[GpuState(gpu=0, sm_clock_mhz=1740, temperature_c=83, throttle=["sw_thermal_slowdown"])],
    )
    from specadvisor.analysis.recommend import recommend

    rec = recommend(session)
    assert rec.drift.exceeded and abs(rec.drift.change + 0.15) < 1e-9
    assert rec.drift.machine == "SM clock 1980 -> 1740 MHz (-12%); temperature 41 -> 83 C; throttling: sw_thermal_slowdown"
    assert any("the GPUs: SM clock 1980 -> 1740 MHz" in r and "baseline moved -15.0%" in r for r in rec.reasons)


async def test_servers_sharing_a_gpu_start_one_at_a_time_and_measure_together(store):
    """Two slots on one GPU (`--parallel 2` on a one-GPU machine). vLLM profiles free GPU memory
    while it starts; two start-ups at once broke one server's KV-cache sizing on a real H200. So
    the second server starts only once the first is ready, and neither measures before both are."""
    from specadvisor.sweep.slots import plan_slots

    plan = make_plan(n_values=(4,), bracket=False)
    timeline: list[tuple[str, str]] = []

    class SlowStart(FakeServer):
        async def start(self):
            timeline.append(("start", self.arm.id))
            await super().start()

        async def wait_ready(self):
            await asyncio.sleep(0.05)
            timeline.append(("ready", self.arm.id))
            return await super().wait_ready()

    class Record(FakeMeasure):
        async def __call__(self, *, arm, **kw):
            timeline.append(("measure", arm.id))
            async for e in super().__call__(arm=arm, **kw):
                yield e

    slots = plan_slots("2", gpus=[0], tp=1)
    assert len(slots) == 2 and all(s.shared for s in slots)
    await run(plan, store, Record(tput), factory=lambda arm, session, placement=None: SlowStart(arm), slots=slots)
    first_wave = timeline[:6]
    kinds = [k for k, _ in first_wave]
    assert kinds == ["start", "ready", "start", "ready", "measure", "measure"], first_wave
    assert {a for _, a in first_wave} == {"baseline", "ngram-n4"}


async def test_a_failed_start_does_not_hold_the_rest_of_its_wave(store):
    plan = make_plan(n_values=(4,), bracket=False)
    measure = FakeMeasure(tput)
    factory = lambda arm, session, placement=None: FakeServer(arm, fail_start=arm.id == "ngram-n4")  # noqa: E731
    await asyncio.wait_for(run(plan, store, measure, factory=factory, slots=cpu_slots([0, 1], 2)), timeout=10)
    assert "baseline" in measure.calls


async def test_side_by_side_the_slots_rotate_so_no_arm_keeps_one_slot(store):
    """Two slots, three trials and the bracket's confirmation wave: each configuration runs on both
    slots, the baseline first in its wave yet on core 0 in odd waves and core 1 in even ones. Filled
    in the same order every wave, the baseline always had core 0 (which on a 2-core box also carries
    the client) and that core's speed was read as the n-gram arm's gain."""
    plan = make_plan(n_values=(4,), trials=3)
    await run(plan, store, FakeMeasure(tput), slots=cpu_slots([0, 1], 2))
    stored = store.get_session(plan.session.id)
    placed = {r.arm_id: [(run_.wave, run_.placement) for run_ in r.runs] for r in stored.results}
    assert placed["baseline"][:3] == [(1, "cores 0"), (2, "cores 1"), (3, "cores 0")]
    assert placed["ngram-n4"][:3] == [(1, "cores 1"), (2, "cores 0"), (3, "cores 1")]
    for runs in placed.values():
        assert {p for _, p in runs} == {"cores 0", "cores 1"}
    assert all(len({p for w, p in runs_ if w == wave}) == 1 for runs_ in placed.values() for wave in {w for w, _ in runs_})
