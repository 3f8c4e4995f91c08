"""The headless live view renders the same live model as the TUI and re-fits predictions only on finishes."""

from __future__ import annotations

import io

from rich.console import Console

from specadvisor.app.live import SweepState
from specadvisor.cli import live_view
from specadvisor.cli.live_view import LiveSweepView
from specadvisor.domain import (
    Arm,
    ArmFinished,
    ArmResult,
    MetricsSample,
    MetricsSampled,
    Progress,
    Recommendation,
    ServerStarting,
    Session,
)

ARMS = [
    Arm(id="baseline", label="baseline"),
    Arm(id="ngram-n4", label="ngram N=4", method="ngram", n=4, speculative_config={"num_speculative_tokens": 4, "method": "ngram"}),
]
EVENTS = [
    ServerStarting(arm_id="baseline", command=["vllm", "serve"]),
    Progress(arm_id="baseline", completed=4, total=8, output_throughput=9.0),
    ArmFinished(result=ArmResult(arm_id="baseline", output_throughput=10.0, output_throughput_ci=(9.5, 10.5))),
    ServerStarting(arm_id="ngram-n4", command=["vllm", "serve"]),
    MetricsSampled(
        sample=MetricsSample(arm_id="ngram-n4", t=1, num_drafts=10, num_draft_tokens=40, num_accepted_tokens=26, accepted_per_position=[9, 8, 6, 3])
    ),
]


def _view(monkeypatch) -> tuple[LiveSweepView, list[int], io.StringIO]:
    fits: list[int] = []
    real = live_view.predictions
    monkeypatch.setattr(live_view, "predictions", lambda s: fits.append(len(s.results)) or real(s))
    out = io.StringIO()
    return LiveSweepView(Session(model="m", arms=ARMS), Console(file=out, width=120)), fits, out


def test_the_cli_shows_what_the_tui_model_holds(monkeypatch):
    view, _, out = _view(monkeypatch)
    tui = SweepState()
    tui.add_arms(ARMS)
    for event in EVENTS:
        view.on_event(event)
        tui.apply(event)
    assert view.state.rates == tui.rates == [0.9, 0.8, 0.6, 0.3]
    assert view.state.mean_acceptance_length == tui.mean_acceptance_length == 3.6
    view.console.print(view.render())
    text = out.getvalue()
    assert "90.0% 80.0% 60.0% 30.0%" in text and "3.60" in text  # the row, from the live model
    assert "pos 1" in text and "100%" in text  # the acceptance chart from specadvisor.charts


def test_predictions_are_refitted_only_when_an_arm_finishes(monkeypatch):
    view, fits, _ = _view(monkeypatch)
    for event in EVENTS:
        view.on_event(event)
    assert fits == [0, 1]  # once at start, once after the baseline finished; not per event


def test_summary_prints_the_config_in_the_canonical_order(monkeypatch):
    view, _, out = _view(monkeypatch)
    rec = Recommendation(arm_id="ngram-n4", speculative_config={"num_speculative_tokens": 4, "method": "ngram"})
    view.print_summary({"recommendation": rec.model_dump(), "arms": [], "launches_used": 2, "launches_full_grid": 2, "session_id": "abcdef123456"})
    assert """--speculative-config '{"method":"ngram","num_speculative_tokens":4}'""" in out.getvalue()


def test_the_load_column_shows_requests_in_flight_then_the_achieved_load(monkeypatch):
    from specadvisor.domain import AchievedLoad

    view, _, out = _view(monkeypatch)
    arm = Arm(id="c4", label="c4", concurrency=4)
    view.state.add_arms([arm])
    view.on_event(ServerStarting(arm_id="c4", command=["vllm"]))
    view.on_event(Progress(arm_id="c4", completed=2, total=16, in_flight=3, concurrency=4))
    view.console.print(view.render())
    assert "3/4 in flight" in out.getvalue()
    view.on_event(ArmFinished(result=ArmResult(arm_id="c4", output_throughput=5.0, achieved_load=AchievedLoad(asked=4, achieved=3.62))))
    view.console.print(view.render())
    assert "3.6/4 in flight" in out.getvalue()
