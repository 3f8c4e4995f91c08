"""Results: the arms compared, the recommendation with its reasoning, and ways to take it away."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Footer, Header, Static

from specadvisor import textsafe
from specadvisor.app.live import short_label
from specadvisor.app.reports import placeholder_note
from specadvisor.app.views import (
    MAX_SHOWN_REASONS,
    all_speedups,
    arm_label,
    capacity_answer,
    deciding_step,
    recommended_config,
    shown_reasons,
    speedup_text,
    tabled_arms,
)
from specadvisor.domain import ArmResult, ArmStatus, Recommendation, Session
from specadvisor.errors import InputError
from specadvisor.fileio import output_target, write_atomic
from specadvisor.tui.format import result_row, verdict_headline, workload_tag
from specadvisor.tui.screens.base import AppScreen
from specadvisor.tui.widgets.charts import AcceptanceChart
from specadvisor.tui.widgets.modals import PromptModal
from specadvisor.vllm_command import shell_script, spec_config_json

# The terminal decides whether an OSC 52 write lands (tmux needs set-clipboard on): never claim "Copied".
CLIPBOARD_SENT = (
    "Sent {what} to the terminal's clipboard (OSC 52). If nothing pastes, your terminal or tmux did not accept it "
    "(tmux: set -g set-clipboard on); s saves it to a file instead."
)
COLUMNS = ("arm", "status", "tok/s", "speedup [CI]", "AL", "acc.", "TTFT p50/99 ms", "TPOT p50/99 ms", "load")


NOT_MEASURED = "Not measured yet: this plan has not run, so there is no verdict."
# The panel lists at most this many reasons (a verdict over 100,000 measured arms has a line per arm: 9 MB
# of text for the terminal to wrap); the rest are counted and `sessions show ID --json` has them all.
MAX_PANEL_REASONS = MAX_SHOWN_REASONS


def measured(session: Session) -> bool:
    """Whether any arm has a result: a plan saved (or exported for a GPU machine) has none."""
    return any(r.status != ArmStatus.pending for r in session.results)


def recommendation_text(session: Session, rec: Recommendation | None, command: str) -> str:
    """The panel's text, one safe line per piece: each piece (labels, reasons, the command, any of
    them from a bundle) is escaped by `textsafe.line` before the pieces are joined, so a bundle's
    newline shows as `\\n` instead of forging a line in the panel."""
    return "\n".join(textsafe.line(piece) for piece in _recommendation_pieces(session, rec, command))


def _recommendation_pieces(session: Session, rec: Recommendation | None, command: str) -> list[str]:
    if not measured(session):
        where = f" It was planned for {session.hardware.gpu_label}: run it there." if session.hardware.hypothetical else " r in Sessions runs it."
        return [NOT_MEASURED + where]
    if rec is None:
        return ["No recommendation yet: the sweep has not measured enough arms."]
    capacity = capacity_answer(session) if any(r.rate_points for r in session.results) else None
    if capacity:  # a capacity sweep answers in request rates under the latency target
        head = ("Capacity: " + capacity) if not rec.do_not_speculate else f"Do NOT speculate here: {capacity}"
        rows = [f"• {arm_label(a)}: {_goodput(session.result_for(a.id))}" for a in session.arms if session.result_for(a.id)]
        return [head, *rows, *[f"• {r}" for r in rec.reasons[1:]], *_command_lines(session, command)]
    arm = next((a for a in session.arms if a.id == rec.arm_id), None)
    speed = speedup_text(rec.speedup, rec.speedup_ci) if rec.speedup else ""
    head = verdict_headline(rec, short_label(arm) if arm else None, speed)
    reasons, more = shown_reasons(session, rec)
    lines = [head, *[f"• {r}" for r in reasons], *([more] if more else []), *_command_lines(session, command)]
    step = deciding_step(session, rec)  # undecided: nothing to serve, and what would decide it
    if step is not None:
        lines += ["", f"To decide it: {step.command} ({step.note})" if step.command else f"To decide it: {step.note}"]
    return lines


def _command_lines(session: Session, command: str) -> list[str]:
    """The command, and for an imported session what its placeholder MODEL stands for."""
    if not command:
        return []
    note = placeholder_note(session)
    return ["", command, *([f"({note})"] if note else [])]


def _goodput(result: ArmResult | None) -> str:
    if result is None or not result.rate_points:
        return "not measured"
    best = f"{result.goodput_rps:.2f} req/s" if result.goodput_rps else "no rate met the target"
    return f"goodput {best} ({len(result.rate_points)} rates measured)"


class ResultsScreen(AppScreen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("c", "copy_command", "Copy command"),
        Binding("j", "copy_json", "Copy JSON"),
        Binding("s", "save_snippet", "Save snippet"),
        Binding("e", "export_report", "Report"),
        Binding("b", "export_bundle", "Bundle"),
    ]

    def __init__(self, session: Session):
        super().__init__()
        self.session = session
        self.recommendation: Recommendation | None = None
        self.command = ""

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="results-body"):
            yield DataTable(id="results", cursor_type="row", zebra_stripes=True, classes="panel")
            with Horizontal(id="results-lower"):
                with VerticalScroll(id="recommendation", classes="panel"):
                    yield Static("", id="recommendation-text", markup=False)
                yield AcceptanceChart(id="best-acceptance")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        session = self.session
        self.sub_title = textsafe.line(f"{session.model} · {workload_tag(session)} · c={session.concurrency} · T={session.temperature:g}", 200)
        table = self.query_one("#results", DataTable)
        table.border_title = f"Arms measured ({textsafe.tui_markup(session.name or session.id[:8], 80)})"  # Textual markup: Rich's escape is not enough
        table.add_columns(*COLUMNS)
        self.recommendation = self.state.services.recommend(session) if measured(session) else None  # a plan has no verdict
        chosen = self.recommendation.arm_id if self.recommendation else None
        speedups = all_speedups(session)  # the verdict's own figures: one interval per arm, everywhere
        # Over the report's row cap (100,000 arms took minutes to list) the table keeps what the report and
        # `sessions show` keep, and says what it left out.
        listed, left_out = tabled_arms(session)
        for arm in listed:
            label = ("★ " if arm.id == chosen else "  ") + short_label(arm)
            table.add_row(*(textsafe.markup(cell) for cell in result_row(label, session.result_for(arm.id), speedups.get(arm.id))), key=arm.id)
        if left_out:
            table.border_subtitle = f"{len(listed)} of {len(session.arms)} arms (see below)"
        if self.recommendation is not None and self.recommendation.speculative_config:
            self.command = self.state.services.serve_command(session, self.recommendation)
        self.query_one("#recommendation").border_title = "Recommendation"
        text = recommendation_text(session, self.recommendation, self.command)
        self.query_one("#recommendation-text", Static).update(text + ("\n\n" + textsafe.line(left_out) if left_out else ""))
        self.show_acceptance()
        table.focus()

    def show_acceptance(self) -> None:
        """The recommended arm's per-position acceptance (or the best measured speculative arm's)."""
        chart = self.query_one("#best-acceptance", AcceptanceChart)
        if not measured(self.session):
            chart.empty_text = "not measured yet"
            return
        chart.empty_text = "no speculative arm measured"
        arm_id = self.recommendation.arm_id if self.recommendation else None
        result = self.session.result_for(arm_id) if arm_id else None
        if result is None:
            spec = [r for r in self.session.results if r.per_position and r.output_throughput]
            result = max(spec, key=lambda r: r.output_throughput or 0.0, default=None)
        if result is not None:
            chart.rates = tuple(result.per_position_acceptance)
            chart.mean_length = result.mean_acceptance_length

    # ------------------------------------------------------------------ take it away

    def _config(self) -> dict[str, Any] | None:
        """What to copy or save: an imported session's config only as the allow-list lets it cross."""
        return recommended_config(self.session, self.recommendation)

    def action_copy_command(self) -> None:
        if not self.command:
            self.notify("Nothing to copy: no speculative configuration is recommended.", severity="warning")
            return
        self.app.copy_to_clipboard(self.command)
        self.notify(CLIPBOARD_SENT.format(what="the vllm serve command"), markup=False, timeout=8)

    def action_copy_json(self) -> None:
        config = self._config()
        if not config:
            self.notify("Nothing to copy: no speculative configuration is recommended.", severity="warning")
            return
        self.app.copy_to_clipboard(spec_config_json(config))
        self.notify(CLIPBOARD_SENT.format(what="the --speculative-config JSON"), markup=False, timeout=8)

    def _ask_path(self, question: str, default: str, then: Callable[[str, str], object]) -> None:
        def answered(text: str | None) -> None:
            if text:
                then(text, default)  # the worker checks the path: its errors reach the app's one handler

        self.app.push_screen(PromptModal(question, value=default), answered)

    def _target(self, text: str, default: str) -> Path:
        """The CLI's rule for every `-o` (specadvisor.fileio.output_target): a folder gets the default
        name, an existing file is never replaced from here, the sessions database never."""
        target = output_target(text, default_name=default, protected=[self.state.store.path])
        if target is None:
            raise InputError("- (stdout) is not a file the TUI can write", hint="give a file name")
        return target

    def action_save_snippet(self) -> None:
        if not self.command:
            self.notify("Nothing to save: no speculative configuration is recommended.", severity="warning")
            return
        self._ask_path("Save the serve command to:", f"specadvisor-{self.session.id[:8]}.sh", self.write_snippet)

    def action_export_report(self) -> None:
        self._ask_path("Write the report (.md, or .html for a self-contained page) to:", f"specadvisor-{self.session.id[:8]}.md", self.write_report)

    def action_export_bundle(self) -> None:
        self._ask_path("Write the session bundle to:", f"specadvisor-{self.session.id[:8]}.json", self.write_bundle)

    @work(thread=True, group="export", exit_on_error=False)
    def write_snippet(self, text: str, default: str) -> None:
        written = write_atomic(self._target(text, default), shell_script(self.command), mode=0o755)
        self.app.call_from_thread(self.notify, f"Saved {written}", markup=False)

    @work(thread=True, group="export", exit_on_error=False)
    def write_report(self, text: str, default: str) -> None:
        """Markdown, or self-contained HTML when the name ends in .html."""
        path = self._target(text, default)
        services = self.state.services
        render = services.report_html if path.suffix.lower() in (".html", ".htm") else services.report_markdown
        written = write_atomic(path, render(self.session))
        self.app.call_from_thread(self.notify, f"Wrote {written}", markup=False)

    @work(thread=True, group="export", exit_on_error=False)
    def write_bundle(self, text: str, default: str) -> None:
        written = self.state.services.export_bundle(self.session, self._target(text, default))
        self.app.call_from_thread(self.notify, f"Wrote {written}", markup=False)
