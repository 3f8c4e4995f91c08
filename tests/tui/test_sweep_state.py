"""The live sweep model (specadvisor.app.live), folded from events without Textual: what the sweep screen shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from specadvisor.app.live import LOG_LINES_KEPT, SweepState, startup_message
from specadvisor.domain import (
    Arm,
    ArmFailed,
    ArmFinished,
    ArmQueued,
    ArmResult,
    ArmStatus,
    MeasurementWarning,
    MetricsSample,
    MetricsSampled,
    Progress,
    Recommendation,
    ServerLog,
    ServerStarting,
    SweepFinished,
)
from tui_fakes import RATES, arm_result

BASE = Arm(id="baseline", label="baseline")
NGRAM = Arm(id="ngram-n4", label="ngram N=4", method="ngram", n=4, speculative_config={"method": "ngram", "num_speculative_tokens": 4})


def started() -> SweepState:
    state = SweepState()
    for arm in (BASE, NGRAM):
        state.apply(ArmQueued(arm=arm))
    return state


def test_progress_counts_done_arms_and_the_current_arm():
    state = started()
    state.apply(ServerStarting(arm_id="baseline", command=["vllm", "serve"]))
    state.apply(Progress(arm_id="baseline", completed=4, total=8, output_throughput=9.5))
    assert state.progress_fraction() == 0.25
    state.apply(ArmFinished(result=arm_result("baseline", 8)))
    assert state.progress_fraction() == 0.5
    assert state.arms["baseline"].status == ArmStatus.ok and state.arms["baseline"].throughput == 10.0


def test_live_acceptance_comes_from_metric_deltas():
    state = started()
    state.apply(ServerStarting(arm_id="ngram-n4", command=["vllm"]))
    changed = state.apply(
        MetricsSampled(sample=MetricsSample(arm_id="ngram-n4", t=1, num_drafts=10, num_accepted_tokens=26, accepted_per_position=[9, 8, 6, 3]))
    )
    assert "chart" in changed
    assert state.rates == [0.9, 0.8, 0.6, 0.3]
    assert state.mean_acceptance_length == 3.6


def test_the_bracket_baseline_rerun_keeps_the_last_measured_acceptance():
    """Issue 25: the acceptance panel emptied while the bracket baseline re-ran ("waiting for the
    first speculative metrics..." after speculation had been measured)."""
    state = started()
    state.apply(ServerStarting(arm_id="ngram-n4", command=["vllm"]))
    state.apply(MetricsSampled(sample=MetricsSample(arm_id="ngram-n4", t=1, num_drafts=10, num_accepted_tokens=26, accepted_per_position=[9, 8, 6, 3])))
    state.apply(ArmFinished(result=arm_result("ngram-n4", 8)))
    shown = list(state.rates)
    assert shown and state.rates_arm == "ngram-n4"
    state.apply(ServerStarting(arm_id="baseline", command=["vllm"]))  # the bracket re-run
    state.apply(MetricsSampled(sample=MetricsSample(arm_id="baseline", t=2)))
    state.apply(ArmFinished(result=arm_result("baseline", 8)))
    assert state.rates == shown and state.rates_arm == "ngram-n4"


def test_samples_of_another_arm_stay_with_that_arm():
    """The big acceptance chart follows the current arm; another running arm's sample updates only
    its own live row (a parallel sweep runs several at once)."""
    state = started()
    state.apply(ServerStarting(arm_id="baseline", command=["vllm"]))
    assert state.apply(MetricsSampled(sample=MetricsSample(arm_id="ngram-n4", t=1, num_drafts=1, accepted_per_position=[1]))) == {"live"}
    assert state.rates == []
    assert state.arms["ngram-n4"].live_acceptance.rates == [1.0]


def test_warnings_and_failures_are_listed_with_the_arm():
    state = started()
    state.apply(MeasurementWarning(arm_id="ngram-n4", message="foreign traffic: 3 extra requests"))
    state.apply(ArmFailed(result=ArmResult(arm_id="ngram-n4", status=ArmStatus.failed, error="out of memory")))
    assert list(state.warnings) == ["[n-gram N=4] foreign traffic: 3 extra requests", "[n-gram N=4] failed: out of memory"]
    assert state.arms["ngram-n4"].phase == "failed"


def test_log_is_bounded_and_new_lines_are_tracked():
    state = started()
    for i in range(LOG_LINES_KEPT + 500):
        state.apply(ServerLog(arm_id="baseline", line=f"line {i}"))
    assert len(state.log) == LOG_LINES_KEPT and state.log_count == LOG_LINES_KEPT + 500
    shown = state.log_count
    state.apply(ServerLog(arm_id="baseline", line="fresh"))
    assert state.new_log_lines(shown) == [("baseline", "fresh")]
    assert len(state.new_log_lines(0)) == LOG_LINES_KEPT  # what fell out of the ring is gone


def test_finished_sweep_shows_the_recommended_arm():
    state = started()
    state.apply(ArmFinished(result=arm_result("ngram-n4", 8)))
    state.apply(ArmFinished(result=arm_result("baseline", 8)))
    state.rates = []
    state.apply(SweepFinished(recommendation=Recommendation(arm_id="ngram-n4")))
    assert state.finished and state.rates == RATES["ngram-n4"]


def test_throughput_points_put_baseline_first_with_predictions():
    state = started()
    state.apply(ArmFinished(result=arm_result("ngram-n4", 8)))
    points = state.throughput_points({"ngram-n4": 15.0})
    assert [p.label for p in points] == ["baseline", "n-gram N=4"]
    assert points[0].measured is None and points[1].measured == 15.4 and points[1].predicted == 15.0


def test_the_bar_counts_the_bracket_rerun_and_reads_100_only_at_the_end():
    """Issue 24: the bar read 100% while the bracket baseline still had two minutes to go."""
    from specadvisor.domain import SweepSettings

    clock = [100.0]
    state = SweepState(clock=lambda: clock[0])
    state.add_arms([BASE, NGRAM], SweepSettings(bracket=True))
    assert state.arms["baseline"].runs_expected == 2 and state.arms["ngram-n4"].runs_expected == 1
    for arm in ("baseline", "ngram-n4"):
        state.apply(ServerStarting(arm_id=arm, command=["vllm"]))
        state.apply(Progress(arm_id=arm, completed=8, total=8))
        state.apply(ArmFinished(result=arm_result(arm, 8)))
    assert state.progress_fraction() == 2 / 3
    # the bracket re-run starts on a row of its own: the last run's 8/8 must not count, and the phase says what this is
    state.apply(ServerStarting(arm_id="baseline", command=["vllm"]))
    state.apply(ServerLog(arm_id="baseline", line="INFO Loading weights took 41.2 s"))
    clock[0] = 142.4
    row = state.reruns["baseline · bracket re-run"]
    assert state.current_row() is row and row.label == "baseline · bracket"
    assert state.progress_fraction() == 2 / 3
    assert row.phase_text(state.clock()) == "bracket re-run: starting 42 s" and row.last_line == "Loading weights took 41.2 s"
    assert state.arms["baseline"].throughput == 10.0 and state.arms["baseline"].phase == "done", "the first run's row stays as it was measured"
    state.apply(Progress(arm_id="baseline", completed=4, total=8))
    assert state.progress_fraction() == 2.5 / 3 and row.phase_text() == "bracket re-run: measuring 4/8"
    state.apply(ArmFinished(result=arm_result("baseline", 8)))
    assert state.progress_fraction() == 0.99 and row.phase_text() == "done" and state.measuring_again == {}
    state.apply(ServerStarting(arm_id="baseline", command=["vllm"]))  # measured once more (a confirmation): one more row
    assert list(state.reruns) == ["baseline · bracket re-run", "baseline · run 3"] and state.reruns["baseline · bracket re-run"] is row
    state.apply(ArmFinished(result=arm_result("baseline", 8)))
    state.apply(SweepFinished(recommendation=Recommendation(arm_id="ngram-n4", reasons=["fastest"])))
    assert state.progress_fraction() == 1.0
    assert state.recommended_text() == "recommended: n-gram N=4"  # the one arm label, not the id "ngram-n4"


def test_a_second_trial_is_named_and_a_plan_without_settings_still_ends_at_100():
    from specadvisor.domain import SweepSettings

    state = SweepState()
    state.add_arms([BASE, NGRAM], SweepSettings(trials=2, bracket=False))
    state.apply(ServerStarting(arm_id="ngram-n4", command=["vllm"]))
    state.apply(ArmFinished(result=arm_result("ngram-n4", 8)))
    state.apply(ServerStarting(arm_id="ngram-n4", command=["vllm"]))
    assert state.reruns["ngram-n4 · trial 2"].label == "n-gram N=4 · trial 2" and state.progress_fraction() == 1 / 4
    bare = started()
    for arm in ("baseline", "ngram-n4"):
        bare.apply(ArmFinished(result=arm_result(arm, 8)))
    assert bare.progress_fraction() == 0.99
    bare.apply(SweepFinished(recommendation=None))
    assert bare.progress_fraction() == 1.0 and bare.recommended_text() == ""


ENGINE_LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "engine"


@pytest.mark.parametrize("log", ["cpu_kv_space.log", "h200_shared_gpu_kv_cache.log", "startup_timeout.log"])
def test_the_start_up_line_is_a_whole_message_never_a_log_fragment(log):
    """Issue 41: the live views showed raw vLLM lines while a server started ('warnings.warn(', 'ore pid=...'):
    a Python warning's echo, a record cut at its process tag. Real start-up logs (the CPU engine, an H200) give
    only whole messages: no process tag, level, time or source, no banner, continuation or route list."""
    lines = (ENGINE_LOGS / log).read_text(encoding="utf-8").splitlines()
    shown = [m for m in map(startup_message, lines) if m is not None]
    assert shown, "a start-up says something"
    for message in shown:
        assert "warnings.warn" not in message and "pid=" not in message and "Traceback" not in message, message
        assert not message[0].isspace() and not message.startswith(("INFO", "WARNING", "(")) and "█" not in message, message
        assert not re.match(r"\[[\w.]+:\d+\]|\d\d-\d\d \d\d:", message), message  # no source or time stamp
        assert not message.startswith("Route: ") and not message.endswith(":"), message
    assert startup_message("  warnings.warn(") is None
    assert startup_message("(EngineCore_DP0 pid=4242) INFO 12-03 23:43:27 [default_loader.py:501] Loading weights took 0.27 seconds") == (
        "Loading weights took 0.27 seconds"
    )
    assert (
        startup_message("Loading safetensors checkpoint shards:  50% Completed | 1/2 [00:01<00:01,  1.2it/s]")
        == "Loading safetensors checkpoint shards 50% (1/2)"
    )
    assert startup_message("Capturing CUDA graphs:  10%|█         | 1/10\rCapturing CUDA graphs:  50%|█████     | 5/10") == "Capturing CUDA graphs 50% (5/10)"


def test_a_fragment_leaves_the_last_start_up_message_in_place():
    state = started()
    state.apply(ServerStarting(arm_id="baseline", command=["vllm", "serve"]))
    state.apply(ServerLog(arm_id="baseline", line="(EngineCore_DP0 pid=4242) INFO 12-03 23:43:27 [cpu_model_runner.py:68] Starting to load model m..."))
    assert state.apply(ServerLog(arm_id="baseline", line="  warnings.warn(")) == {"log"}  # the log keeps it; nothing else changes
    assert state.arms["baseline"].last_line == "Starting to load model m..."
    assert list(state.log)[-1] == ("baseline", "  warnings.warn(")
