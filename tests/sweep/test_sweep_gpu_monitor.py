"""The runner's GPU hook with NVML faked at the process boundary; store, runner and plan are real."""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import replace
from itertools import pairwise
from pathlib import Path

from sweep_fakes import FakeMeasure, FakeServer, no_prompts

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hardware"))
from datetime import UTC

from hw_fakes import FakeGpu, FakeNvml
from specadvisor.domain import ArmFailed, ArmFinished, ArmStatus, GpuMemoryWait, MeasurementWarning, SweepSettings
from specadvisor.sweep.monitor import GpuMonitor, world_size
from specadvisor.sweep.plan import plan_from_methods
from specadvisor.sweep.runner import SweepRunner
from specadvisor.telemetry.gpus import NvmlReader


def tput(arm):
    return {None: 100.0, 2: 150.0}[arm.n]


class SlowMeasure(FakeMeasure):
    """Takes `seconds` per arm, so the sampler gets several readings."""

    def __init__(self, seconds=0.3):
        super().__init__(tput)
        self.seconds = seconds

    async def __call__(self, **kwargs):
        await asyncio.sleep(self.seconds)
        async for event in super().__call__(**kwargs):
            yield event


def plan(**settings):
    return plan_from_methods("m", [("ngram", {})], [2], SweepSettings(num_prompts=8, **settings))


def monitor(session, gpus, env=None, **kw):
    nvml = FakeNvml(gpus)
    return GpuMonitor(session, env or {}, reader_factory=lambda: NvmlReader(nvml), interval_s=0.05, poll_s=0.05, **kw), nvml


async def collect(runner):
    return [e async for e in runner.events()]


def test_world_size_reads_parallel_flags():
    assert world_size([]) == 1
    assert world_size(["--tensor-parallel-size", "4"]) == 4
    assert world_size(["-tp=2", "--pipeline-parallel-size", "2"]) == 4


async def test_every_arm_carries_its_gpu_telemetry_and_energy_per_token(store):
    p = plan()
    gpu = FakeGpu(0, util=98, power_mw=500_000, sm_clock=1980, throttle=0, used_mib=615.0)
    mon, _ = monitor(p.session, [gpu])
    runner = SweepRunner(p, store, server_factory=lambda arm, s: FakeServer(arm), measure=SlowMeasure(), prompt_loader=no_prompts, monitor=mon)
    await collect(runner)
    stored = store.get_session(p.session.id)
    for result in stored.results:
        t = result.telemetry
        assert t is not None and t.source == "nvml" and t.gpus == [0]
        assert len(t.samples) >= 4 and all(s.power_w == 500.0 and s.gpu == 0 for s in t.samples)
        assert t.start[0].sm_clock_mhz == 1980.0 and t.end[0].power_limit_w == 700.0
        # the baseline runs twice (its end-of-sweep bracket): one timeline, energies summed over the runs
        times = [s.t for s in t.samples]
        assert times == sorted(times)
        segments, start = [], times[0]
        for before, after in pairwise(times):
            if after - before > 0.2:  # the gap between two runs of the arm
                segments.append(before - start)
                start = after
        segments.append(times[-1] - start)
        assert len(segments) == len(result.runs)
        assert abs(t.energy_j - 500.0 * sum(segments)) < 1e-3
        # spec_result has no duration: the whole span stands in for it; 512 output tokens
        assert t.energy_per_output_token_j is not None and t.energy_per_output_token_j > 0
    row = store.db.execute("SELECT count(*) FROM gpu_samples WHERE session_id = ?", [p.session.id]).fetchone()[0]
    assert row == sum(len(r.telemetry.samples) for r in stored.results)
    energy_column = store.db.execute("SELECT energy_per_output_token_j FROM arm_results WHERE session_id = ?", [p.session.id]).fetchall()
    assert all(v[0] and v[0] > 0 for v in energy_column)


async def test_throttling_during_an_arm_becomes_a_warning(store):
    p = plan()
    gpu = FakeGpu(0, util=98, power_mw=700_000, sm_clock=1980, throttle=0x4)
    mon, _ = monitor(p.session, [gpu])
    runner = SweepRunner(p, store, server_factory=lambda arm, s: FakeServer(arm), measure=SlowMeasure(0.15), prompt_loader=no_prompts, monitor=mon)
    events = await collect(runner)
    warnings = [e.message for e in events if isinstance(e, MeasurementWarning)]
    assert any("sw_power_cap" in w for w in warnings)
    assert any("sw_power_cap" in w for w in store.get_session(p.session.id).results[0].warnings)


async def test_a_stranger_holding_the_gpu_fails_the_arm_naming_it_and_nothing_launches(store):
    p = plan()
    gpu = FakeGpu(0, used_mib=100_000.0, processes=[(os.getpid(), 100_000 * 2**20)])
    mon, _ = monitor(p.session, [gpu], foreign_grace_s=0.1)
    launched = []
    runner = SweepRunner(
        p, store, server_factory=lambda arm, s: launched.append(arm) or FakeServer(arm), measure=SlowMeasure(0), prompt_loader=no_prompts, monitor=mon
    )
    events = await collect(runner)
    failed = [e.result for e in events if isinstance(e, ArmFailed)]
    assert [r.arm_id for r in failed] == ["baseline", "ngram-n2"] and launched == []
    assert f"held by another process: pid {os.getpid()} " in failed[0].error and "on GPU 0" in failed[0].error
    assert "CUDA_VISIBLE_DEVICES" in failed[0].error
    assert any(isinstance(e, GpuMemoryWait) for e in events)  # it waited the grace period, with progress


async def test_the_previous_servers_memory_is_waited_for(store):
    p = plan()
    gpu = FakeGpu(0, used_mib=615.0)

    class ServerHoldingMemory(FakeServer):
        """Its memory comes back a little after it stops, as with a real vLLM."""

        pid = 999_999_991

        async def start(self):
            await super().start()
            gpu.used_mib, gpu.processes = 120_000.0, [(self.pid, 120_000 * 2**20)]

        async def stop(self):
            await super().stop()
            asyncio.get_running_loop().call_later(0.2, lambda: setattr(gpu, "used_mib", 615.0) or setattr(gpu, "processes", []))

    mon, _ = monitor(p.session, [gpu])
    runner = SweepRunner(p, store, server_factory=lambda arm, s: ServerHoldingMemory(arm), measure=SlowMeasure(0.05), prompt_loader=no_prompts, monitor=mon)
    events = await collect(runner)
    waits = [e for e in events if isinstance(e, GpuMemoryWait)]
    assert waits and waits[0].arm_id == "ngram-n2" and waits[0].holders == ["pid 999999991 ? (120000 MiB on GPU 0)"]
    first_done = next(i for i, e in enumerate(events) if isinstance(e, ArmFinished))
    assert events.index(waits[0]) > first_done  # the first launch found the GPU free
    assert [r.status for r in store.get_session(p.session.id).results] == [ArmStatus.ok, ArmStatus.ok]
    assert any("waited" in e.message and "GPU memory" in e.message for e in events if isinstance(e, MeasurementWarning))


def test_visible_devices_and_tensor_parallel_pick_the_sampled_gpus():
    p = plan(server_args=["--tensor-parallel-size", "2"])
    mon, _ = monitor(p.session, [FakeGpu(i) for i in range(4)], env={"CUDA_VISIBLE_DEVICES": "3,1,0"})
    assert mon.gpus_for(p.session.arms[0]) == [3, 1]


def test_cpu_engine_opens_no_gpu_library():
    p = plan()
    p.session.hardware = replace(p.session.hardware, engine=replace(p.session.hardware.engine, platform="cpu"))
    opened = []
    mon = GpuMonitor(p.session, {}, reader_factory=lambda: opened.append(1))
    assert mon.gpus_for(p.session.arms[0]) == [] and mon.watch(p.session.arms[0]) is None and opened == []


async def test_serve_argv_is_recorded_redacted_in_the_event_stream(store):
    from specadvisor.domain import ArmFinished

    class KeyedServer(FakeServer):
        def __init__(self, arm):
            super().__init__(arm)
            self.command = ["vllm", "serve", "m", "--api-key", "sk-abcdefabcdefabcdef12", "--port", "8123"]

    p = plan()
    runner = SweepRunner(p, store, server_factory=lambda arm, s: KeyedServer(arm), measure=SlowMeasure(0), prompt_loader=no_prompts)
    events = await collect(runner)
    argv = [e.result.serve_argv for e in events if isinstance(e, ArmFinished)]
    assert argv and all(a == ["vllm", "serve", "m", "--api-key", "<redacted>", "--port", "8123"] for a in argv)


def test_tui_state_shows_the_memory_wait():
    from specadvisor.app.live import SweepState

    state = SweepState()
    state.add_arms(plan().session.arms)
    changed = state.apply(GpuMemoryWait(arm_id="baseline", waited_s=4, timeout_s=120, need_mib=1000, holders=["pid 7 python (10 MiB on GPU 0)"]))
    assert "progress" in changed and state.arms["baseline"].phase == "waiting for GPU memory 4/120 s"


def test_a_pinned_slot_is_sampled_and_checked_on_its_own_gpus():
    from specadvisor.sweep.slots import Slot

    p = plan()
    busy = FakeGpu(0, used_mib=140_000.0, processes=[(os.getpid(), 2**30)])
    mon, _ = monitor(p.session, [busy, FakeGpu(1), FakeGpu(2), FakeGpu(3)], env={"CUDA_VISIBLE_DEVICES": "0"})
    arm = p.session.arms[0]
    slot = Slot(index=1, gpus=(2, 3))
    assert mon.gpus_for(arm, slot) == [2, 3] and mon.gpus_for(arm) == [0]
    asyncio.run(mon.before_launch(arm, lambda e: None, slot))  # GPUs 2 and 3 are free: no wait, no error
    asyncio.run(mon.before_launch(arm, lambda e: None, Slot(index=0, gpus=(0,), shared=True)))  # shared on purpose: not checked
    server = FakeServer(arm)
    mon.launched(server, slot)
    sampler = mon.watch(arm, server)
    assert sampler is not None and sampler.gpus == [2, 3]
    mon.close()


def test_runs_of_one_arm_share_a_timeline_and_their_energy():
    from datetime import datetime, timedelta

    from specadvisor.analysis.power import merge_telemetry
    from specadvisor.domain import ArmResult, GpuReading, GpuTelemetry

    t0 = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)

    def run(start_s, power, jpt, tokens):
        samples = [GpuReading(t=i, gpu=0, power_w=power) for i in range(3)]
        return ArmResult(arm_id="baseline", started_at=t0 + timedelta(seconds=start_s), output_tokens=tokens,
                         telemetry=GpuTelemetry(gpus=[0], samples=samples, energy_j=2 * power, energy_per_output_token_j=jpt))  # fmt: skip

    merged = merge_telemetry(run(0, 100, 1.0, 100), run(60, 300, 3.0, 300))
    assert [s.t for s in merged.samples] == [0, 1, 2, 60, 61, 62]
    assert merged.energy_j == 800 and merged.mean_power_w == 200 and merged.energy_per_output_token_j == 2.5


def test_mean_power_of_three_runs_ignores_the_pauses_between_them():
    """The H200 baseline read 34 W and 7 W while its samples read 121-153 W: once an arm had three
    runs, the merged record's sample span (minutes of other arms in between) divided its energy."""
    from datetime import datetime, timedelta

    from specadvisor.analysis.power import merge_telemetry
    from specadvisor.domain import ArmResult, GpuReading, GpuTelemetry

    t0 = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)

    def run(start_s, power):  # 20 one-second readings at a constant power, as the sampler records them
        samples = [GpuReading(t=i, gpu=0, power_w=power) for i in range(21)]
        return ArmResult(arm_id="baseline", started_at=t0 + timedelta(seconds=start_s), output_tokens=1000,
                         telemetry=GpuTelemetry(gpus=[0], samples=samples, energy_j=20 * power, mean_power_w=power))  # fmt: skip

    merged = run(0, 121.0)
    for start, power in ((300, 153.0), (600, 140.0), (900, 130.0)):
        merged = ArmResult(arm_id="baseline", started_at=t0, output_tokens=1000, telemetry=merge_telemetry(merged, run(start, power)))
    t = merged.telemetry
    assert t.energy_j == 20 * (121 + 153 + 140 + 130)
    assert t.mean_power_w == (121 + 153 + 140 + 130) / 4  # equal spans: the plain mean of the four runs
    readings = [s.power_w for s in t.samples]
    assert min(readings) <= t.mean_power_w <= max(readings)
    assert t.samples[-1].t == 920  # the timeline still shows the pauses
