"""Sweep (live): the arm queue, the current arm, acceptance per position, throughput vs N, warnings, log.

The screen only renders the SweepState it is given (specadvisor.app.live). Updates are coalesced: counters redraw a few times a
second and the charts about once a second, so a sweep of thousands of requests stays smooth.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Collapsible, DataTable, Footer, Header, Input, ProgressBar, RichLog, Static

from specadvisor import textsafe
from specadvisor.app.live import STATUS_ICONS, SweepState, short_label
from specadvisor.domain import ArmStatus
from specadvisor.tui.format import live_arm_lines
from specadvisor.tui.messages import SweepUpdated
from specadvisor.tui.screens.base import AppScreen
from specadvisor.tui.widgets.charts import AcceptanceChart, ThroughputChart
from specadvisor.tui.widgets.modals import ConfirmModal

# The top bar and the Running panel read the same rows (phase, start-up seconds, the last start-up message):
# both redraw on the fast tick, so neither lags the other; only the two charts wait for the slow one.
FAST_PARTS = {"queue", "progress", "log", "warnings", "live"}
CHART_PARTS = {"chart", "throughput"}


class SweepScreen(AppScreen):
    BINDINGS = [
        Binding("l", "toggle_log", "Server log"),
        Binding("slash", "search_log", "Search log"),
        Binding("x", "stop", "Stop sweep"),
        Binding("r", "results", "Results"),
        Binding("escape", "back", "Back", show=False),
    ]

    def __init__(self, state: SweepState) -> None:
        super().__init__()
        self.live = state  # the app's live model of this sweep, folded from the runner's events
        self.dirty: set[str] = set(FAST_PARTS | CHART_PARTS)
        self.log_shown = 0

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="sweep-status"):
            yield ProgressBar(total=1.0, show_eta=False, id="overall")
            yield Static("", id="current", markup=False)
        with Horizontal(id="sweep-columns"):
            with Vertical(id="queue-panel", classes="panel"):
                yield DataTable(id="queue", cursor_type="row", show_header=False)
            with VerticalScroll(id="charts"):
                yield Static("", id="live-arms", classes="panel", markup=False)
                yield AcceptanceChart(id="acceptance")
                yield ThroughputChart(id="throughput")
                yield Static("", id="warnings", markup=False)
        with Collapsible(title="Server log", collapsed=True, id="log-box"):
            filter_input = Input(placeholder="filter the log (substring)", id="log-filter", compact=True)
            filter_input.cursor_blink = self.app.cursor_blink
            yield filter_input
            yield RichLog(id="log", max_lines=2000, wrap=False, markup=False, highlight=False)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#queue-panel").border_title = "Arms"
        table = self.query_one("#queue", DataTable)
        table.add_columns("", "arm", "state")
        self.set_interval(self.app.refresh_interval, self.redraw_fast)
        self.set_interval(self.app.chart_interval, self.redraw_charts)
        self.redraw_fast()
        self.redraw_charts()

    # ------------------------------------------------------------------ updates

    def on_sweep_updated(self, message: SweepUpdated) -> None:
        self.dirty |= message.changed
        if "warnings" in message.changed and self.live.warnings and self.is_current:
            self.notify(textsafe.line(self.live.warnings[-1], 300), title="measurement warning", severity="warning", timeout=8, markup=False)
        if "done" in message.changed or "stopped" in message.changed:
            self.dirty |= FAST_PARTS | CHART_PARTS
            self.redraw_fast()
            self.redraw_charts()
            if "done" in message.changed:
                self.notify("Sweep finished: press r for the results.", title="specadvisor")

    def redraw_fast(self) -> None:
        parts, self.dirty = self.dirty & FAST_PARTS, self.dirty - FAST_PARTS
        if any(r.phase == "starting" for r in self.live.arms.values()):
            parts |= {"queue", "progress"}  # the start-up's elapsed seconds tick without events
        if "queue" in parts:
            self.draw_queue()
        if parts & {"progress", "live", "queue"}:  # a phase change reaches both at once
            now = self.live.clock()
            self.draw_progress(now)
            self.draw_live_arms(now)
        if "warnings" in parts:
            self.draw_warnings()
        if "log" in parts and not self.query_one("#log-box", Collapsible).collapsed:
            self.draw_log()

    def redraw_charts(self) -> None:
        parts, self.dirty = self.dirty & CHART_PARTS, self.dirty - CHART_PARTS
        if "chart" in parts:
            chart = self.query_one("#acceptance", AcceptanceChart)
            chart.rates = tuple(self.live.rates)
            chart.mean_length = self.live.mean_acceptance_length
        if "throughput" in parts:
            self.query_one("#throughput", ThroughputChart).points = tuple(self.live.throughput_points(self.predictions()))

    def draw_live_arms(self, now: float) -> None:
        """Each running arm (several in a parallel sweep): its phase and start-up message as the top bar
        reads them at `now`, sparkline, latency so far, acceptance with intervals."""
        box = self.query_one("#live-arms", Static)
        rows = self.live.running()
        width = max(20, box.content_size.width or 60)
        lines = [line for row in rows for line in live_arm_lines(row, width, now)]
        box.update(textsafe.lines("\n".join(lines)))
        box.border_title = f"Running: {len(rows)} arm{'s' if len(rows) != 1 else ''}"
        box.display = bool(rows)

    def predictions(self) -> dict[str, float]:
        """The sweep predictor's throughput for each arm, from the arms measured so far."""
        session = self.state.session
        results = self.live.results()
        if session is None or not results:
            return {}
        try:
            return self.state.services.predict(session.model_copy(update={"results": results}))
        except Exception:  # noqa: BLE001 - a prediction is decoration; never stop the live view for it
            return {}

    def draw_queue(self) -> None:
        table = self.query_one("#queue", DataTable)
        table.clear()
        now = self.live.clock()
        for key, row in self.live.rows():  # a re-run (trial 2, the bracket) is a row of its own
            state = row.phase_text(now).split(": ")[-1]  # the queue is narrow: the label names the re-run
            if row.phase == "measuring" and row.total:
                state = f"{row.completed}/{row.total}"
            elif row.phase == "starting" and row.started_at is not None:
                state = f"start {max(0, now - row.started_at):.0f}s"  # the queue column is ten cells wide
            elif row.status == ArmStatus.ok and row.throughput:
                state = f"{row.throughput:.1f} tok/s"
            elif row.status not in (ArmStatus.pending, ArmStatus.running):
                state = row.status.value
            chosen = self.live.recommendation is not None and self.live.recommendation.arm_id == key
            icon = "★" if chosen else "↻" if row.rerun and row.phase in ("starting", "ready", "warmup", "measuring") else STATUS_ICONS[row.status]
            table.add_row(icon, textsafe.markup(row.label, 80), textsafe.markup(state), key=key)

    def draw_progress(self, now: float) -> None:
        state = self.live
        self.query_one("#overall", ProgressBar).update(total=1.0, progress=state.progress_fraction())
        row = state.current_row()
        if state.finished:
            text = "finished" + (f" · {state.recommended_text()}" if state.recommendation else "")
        elif self.state.runner is None and not state.finished:
            text = "stopped: finished arms are saved; resume from Sessions"
        elif row is None:
            text = state.download_text() or "preparing…"
        else:
            bits = [short_label(row.arm), row.phase_text(now)]  # the phase names a re-run
            if row.phase == "starting" and row.last_line:
                bits.append(textsafe.line(row.last_line, 70))
            if row.throughput:
                bits.append(f"{row.throughput:.1f} tok/s")
            if row.load_text():
                bits.append(row.load_text())
            if state.mean_acceptance_length and not row.arm.is_baseline:
                bits.append(f"AL {state.mean_acceptance_length:.2f}")
            text = " · ".join(bits)
        self.query_one("#current", Static).update(textsafe.lines(text))

    def draw_warnings(self) -> None:
        box = self.query_one("#warnings", Static)
        warnings = list(self.live.warnings)[-6:]
        box.update("\n".join(f"⚠ {textsafe.line(w, 300)}" for w in warnings))
        box.display = bool(warnings)

    def draw_log(self, rebuild: bool = False) -> None:
        log = self.query_one("#log", RichLog)
        needle = self.query_one("#log-filter", Input).value.strip().lower()
        if rebuild:
            log.clear()
            self.log_shown = self.live.log_count - len(self.live.log)
        for arm_id, line in self.live.new_log_lines(self.log_shown):
            if not needle or needle in line.lower():
                log.write(textsafe.line(f"[{arm_id}] {line}"))
        self.log_shown = self.live.log_count

    # ------------------------------------------------------------------ actions

    def action_toggle_log(self) -> None:
        box = self.query_one("#log-box", Collapsible)
        box.collapsed = not box.collapsed

    @on(Collapsible.Expanded, "#log-box")
    def log_opened(self) -> None:
        self.draw_log(rebuild=True)

    def action_search_log(self) -> None:
        self.query_one("#log-box", Collapsible).collapsed = False
        self.query_one("#log-filter", Input).focus()

    @on(Input.Changed, "#log-filter")
    def filter_changed(self) -> None:
        self.draw_log(rebuild=True)

    def action_stop(self) -> None:
        if self.state.runner is None:
            self.notify("No sweep is running.")
            return

        def answered(stop: bool | None) -> None:
            if stop:
                self.app.stop_sweep()
                self.dirty |= FAST_PARTS
                self.redraw_fast()

        self.app.push_screen(ConfirmModal("Stop the sweep and the vLLM server? Finished arms stay saved.", yes="Stop"), answered)

    def action_results(self) -> None:
        from specadvisor.tui.screens.results import ResultsScreen

        if self.state.runner is not None:
            self.notify("The sweep is still running; results appear when it finishes.", severity="warning")
            return
        session = self.app.finished_session()
        if session is not None:
            self.app.switch_screen(ResultsScreen(session))

    def action_back(self) -> None:
        if self.state.runner is not None:
            self.notify("A sweep is running: stop it with x first.", severity="warning")
            return
        self.app.pop_screen()
