"""The richer live view: per running arm (two at once in a parallel sweep) a throughput sparkline,
latency percentiles so far, acceptance per position with its interval, GPU readings when recorded."""

from __future__ import annotations

import asyncio

from conftest import settle
from textual.widgets import Static

from specadvisor.app.live import SweepState
from specadvisor.charts import sparkline
from specadvisor.domain import Arm, MetricsSample, MetricsSampled, Progress, ServerStarting
from specadvisor.tui.format import gpu_line, live_arm_lines

BASE = Arm(id="baseline", label="baseline")
NGRAM = Arm(id="ngram-n4", label="n-gram N=4", method="ngram", n=4, speculative_config={"method": "ngram", "num_speculative_tokens": 4})


def two_running() -> SweepState:
    state = SweepState()
    state.add_arms([BASE, NGRAM])
    for arm in (BASE, NGRAM):
        state.apply(ServerStarting(arm_id=arm.id, command=["vllm", "serve"]))
    for i in range(1, 6):
        state.apply(
            Progress(arm_id="baseline", completed=i, total=8, output_throughput=10.0 + i, ttft_p50_ms=100, ttft_p99_ms=150, tpot_p50_ms=90, tpot_p99_ms=120)
        )
        state.apply(
            Progress(arm_id="ngram-n4", completed=i, total=8, output_throughput=14.0 + i, ttft_p50_ms=110, ttft_p99_ms=170, tpot_p50_ms=60, tpot_p99_ms=80)
        )
    state.apply(
        MetricsSampled(
            sample=MetricsSample(arm_id="ngram-n4", t=5, num_drafts=100, num_draft_tokens=400, num_accepted_tokens=250, accepted_per_position=[90, 70, 55, 35])
        )
    )
    return state


def test_each_running_arm_keeps_its_own_live_figures():
    state = two_running()
    assert [r.arm.id for r in state.running()] == ["baseline", "ngram-n4"]
    ngram = state.arms["ngram-n4"]
    assert list(ngram.history) == [15.0, 16.0, 17.0, 18.0, 19.0] and ngram.latency["tpot_p99_ms"] == 80
    assert [round(p.rate, 2) for p in ngram.live_acceptance.per_position] == [0.9, 0.7, 0.55, 0.35]
    lines = live_arm_lines(ngram, 40)
    assert lines[0] == "n-gram N=4 · measuring 5/8 · 19.0 tok/s"
    assert lines[1].startswith("  tok/s ") and lines[1].endswith("▁▃▅▆█")  # min to max: the ramp from 15 to 19 tok/s shows
    assert lines[2] == "  TTFT p50/p99 110/170 ms · TPOT p50/p99 60/80 ms"
    assert "1:90% [83-94%]" in lines[3] and "AL 3.50" in lines[3]
    assert len(live_arm_lines(state.arms["baseline"], 40)) == 3  # no acceptance without speculation


def test_sparkline_shows_change_and_keeps_a_steady_series_flat():
    assert sparkline([1, 2, 4, 8], 10) == "▁▂▄█"  # min to max over eight levels, rounded
    assert sparkline([5, 5.05, 5], 2) == "▄▄" and sparkline([], 5) == "" and sparkline([0, 0], 5) == "▄▄"


def test_gpu_readings_show_when_present():
    class Reading:
        def __init__(self, gpu, mem, util, power):
            self.gpu, self.memory_used_mib, self.utilization_pct, self.power_w = gpu, mem, util, power

    class Telemetry:
        def __init__(self, samples):
            self.samples = samples

    assert (
        gpu_line(Telemetry([Reading(0, 10240, 50, 300), Reading(0, 20480, 97, 650), Reading(1, 1024, 5, 80)]))
        == "GPU0 20.0 GiB 97% 650 W · GPU1 1.0 GiB 5% 80 W"
    )
    assert gpu_line(None) == ""


async def test_the_sweep_screen_shows_the_running_arm_live(make_app):
    from textual.widgets import Input

    from tui_fakes import MODEL

    hold = asyncio.Event()
    app = make_app(hold=hold, hold_arm="ngram-n4")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.screen.query_one("#model", Input).value = MODEL.id
        await pilot.press("f5")
        await settle(pilot)
        await pilot.press("ctrl+s")
        for _ in range(60):
            await pilot.pause(0.05)
            row = app.state.sweep_state.arms.get("ngram-n4")
            if row is not None and row.completed == 3 and row.live_acceptance is not None:
                break
        await pilot.pause(0.2)
        text = str(app.screen.query_one("#live-arms", Static).render())
        assert "n-gram N=4 · measuring 3/8" in text and "tok/s ▁" not in text.splitlines()[0]
        assert "TTFT p50/p99 120/180 ms" in text and "accepted 1:92%" in text and "[" in text
        assert app.screen.query_one("#live-arms", Static).border_title == "Running: 1 arm"
        hold.set()
        await settle(pilot)
