"""The headless sweep's live display: a rich rendering of the sweep's live model.

The state is specadvisor.app.live.SweepState, the same fold of runner events the TUI's sweep
screen renders, and the charts are specadvisor.charts', so both front ends show the same numbers.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

from specadvisor import charts
from specadvisor.app.live import ArmRow, SweepState
from specadvisor.app.views import predictions, speedup_text
from specadvisor.domain import ArmFinished, ArmStatus, Session
from specadvisor.textsafe import line, markup
from specadvisor.vllm_command import shell_command, spec_config_json

CHART_WIDTH = 60


class LiveSweepView:
    """A rich Live table fed by runner events; predictions are re-fitted only when an arm finishes."""

    def __init__(self, session: Session, console: Console):
        self.session = session
        self.console = console
        self.state = SweepState()
        self.state.add_arms(session.arms, session.settings)
        for result in session.results:  # a resumed sweep shows what it already has
            if result.arm_id in self.state.arms:
                self.state.apply(ArmFinished(result=result))
        self.predictions = self._predict()
        self._live: Live | None = None

    def __enter__(self) -> LiveSweepView:
        self._live = Live(self.render(), console=self.console, refresh_per_second=4, transient=False)
        self._live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._live is not None:
            self._live.__exit__(*exc)

    def on_event(self, event: Any) -> None:
        changed = self.state.apply(event)
        if "throughput" in changed:  # an arm finished: the only event that changes the fit
            self.predictions = self._predict()
        if self._live is not None and changed:
            self._live.update(self.render())

    def _predict(self) -> dict[str, Any]:
        return dict(predictions(self.session.model_copy(update={"results": self.state.results()})))  # rough guesses are never shown

    def _status(self, row: ArmRow) -> str:
        if row.phase == "measuring":
            return f"{row.completed}/{row.total}"
        if row.result is not None and row.result.status == ArmStatus.failed:
            return f"failed: {line(row.result.error or '', 60)}"
        if row.result is not None:
            return row.result.status.value
        return row.phase

    def _acceptance(self, arm_id: str, row: ArmRow) -> tuple[float | None, list[float]]:
        if row.result is not None:
            return row.result.mean_acceptance_length, row.result.per_position_acceptance
        if arm_id == self.state.current:
            return self.state.mean_acceptance_length, self.state.rates
        return None, []

    def render(self) -> RenderableType:
        # Labels, errors and log lines may come from an endpoint: escaped, one line each (textsafe).
        table = Table(title=f"sweep {self.session.id[:8]}  {markup(self.session.model, 120)}", expand=False)
        for col in ("arm", "status", "tok/s", "load", "predicted", "AL", "per-position acceptance"):
            table.add_column(col)
        for key, row in self.state.rows():  # a re-run (trial 2, the bracket) is a row of its own
            arm_id = row.arm.id
            al, rates = self._acceptance(arm_id, row)
            pred = self.predictions.get(arm_id) if key == arm_id else None
            pred_text = (
                ""
                if pred is None
                else f"{pred.predicted_throughput:.1f}"
                + (f" ({pred.error_pct:+.0f}%)" if pred.error_pct is not None else (f" ±{pred.uncertainty_pct:.0f}%" if pred.uncertainty_pct else ""))
            )
            table.add_row(
                markup(row.label, 120),
                markup(self._status(row)),
                f"{row.throughput:.1f}" if row.throughput else "",
                row.load_text(),
                pred_text,
                f"{al:.2f}" if al else "",
                " ".join(charts.percent(r).strip() for r in rates[:8]),
            )
        parts: list[RenderableType] = [table]
        if self.state.rates:
            parts.append(Text(charts.acceptance_chart(self.state.rates, CHART_WIDTH)))
        if self.state.download_text():
            parts.append(Text(self.state.download_text(), style="cyan"))
        if self.state.warnings:
            parts.append(Text("\n".join(line(w, 300) for w in list(self.state.warnings)[-3:]), style="yellow"))
        if self.state.log:
            parts.append(Text(line(self.state.log[-1][1][-150:]), style="dim"))
        return Group(*parts)

    def print_summary(self, summary: dict[str, Any]) -> None:
        rec = summary.get("recommendation") or {}
        self.console.print()
        if rec.get("verdict"):
            self.console.print(f"[bold]verdict:[/bold] {markup(rec['verdict'])}")
        for reason in rec.get("reasons", []):
            self.console.print(f"- {markup(reason)}")
        if rec.get("speculative_config"):
            self.console.print(f"{markup(shell_command(['--speculative-config', spec_config_json(rec['speculative_config'])]))}")
        if rec.get("batch_size_schedule"):
            self.console.print(f"num_speculative_tokens_per_batch_size: {rec['batch_size_schedule']}")
        speedups = [
            f"{markup(arm['label'])} {speedup_text(arm['speedup'], arm.get('speedup_ci'))}"
            for arm in summary["arms"]
            if arm.get("speedup") is not None and arm.get("speculative_config")
        ]
        if speedups:
            self.console.print("speedup vs no speculation (the verdict's intervals): " + "; ".join(speedups), soft_wrap=True)
        for arm in summary["arms"]:
            if arm.get("prediction_withheld") and arm.get("output_throughput") is not None:
                self.console.print(f"no prediction for {arm['label']}: {arm['prediction_withheld']}")
            if arm.get("prediction_error_pct") is not None:
                self.console.print(
                    f"prediction for {markup(arm['label'])}: {arm['predicted_throughput']:.1f} tok/s vs measured "
                    f"{arm['output_throughput']:.1f} ({arm['prediction_error_pct']:+.1f}%)"
                )
        self._print_schedule(summary)
        self.console.print(f"launches: {summary['launches_used']} of {summary['launches_full_grid']} (full grid)")
        self.console.print(f"session {summary['session_id']}: specadvisor report {summary['session_id'][:8]} | specadvisor snippet {summary['session_id'][:8]}")

    def _print_schedule(self, summary: dict[str, Any]) -> None:
        """Baseline drift, the order runs happened in, every run of a repeated arm, early-stop savings."""
        drift = summary.get("drift")
        if drift:
            flag = " ABOVE the threshold" if drift["exceeded"] else ""
            self.console.print(
                f"baseline drift: {drift['change'] * 100:+.1f}% ({drift['first']:.1f} -> {drift['last']:.1f} tok/s over "
                f"{drift['measurements']} measurements; threshold {drift['threshold'] * 100:.0f}%{flag})"
            )
        order = summary.get("order") or []
        if len(order) > len(summary["arms"]) or (summary.get("settings") or {}).get("parallel", 1) > 1:
            self.console.print("run order (arm:role@wave): " + " ".join(order))
        for arm in summary["arms"]:
            runs = arm.get("runs") or []
            if len(runs) > 1 or any(r.get("placement") for r in runs):
                figures = ", ".join(
                    f"{r['output_throughput']:.1f}" + (f" [{r['placement']}]" if r.get("placement") else "") for r in runs if r.get("output_throughput")
                )
                ci = arm.get("output_throughput_ci")
                ci_text = f"; interval {ci[0]:.1f}-{ci[1]:.1f}" if ci else ""
                self.console.print(f"{arm['label']}: runs {figures} tok/s{ci_text}")
        if summary.get("requests_saved"):
            self.console.print(f"early stopping saved {summary['requests_saved']} requests, about {summary['seconds_saved']:.0f} s of measuring")
