"""Sessions: browse saved sessions, open one, compare two, import/export bundles, delete (confirmed),
re-judge one (the current decision rule on its stored measurements, beside the stored verdict).

The list loads in a worker with its own store connection (one SQL query, no samples); opening or
deleting one session stays on the UI thread's connection (a millisecond query).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Footer, Header, Input, Static

from specadvisor.app.sessions import compare_loaded, is_imported, refuse_imported
from specadvisor.domain import Recommendation, Session
from specadvisor.errors import InputError
from specadvisor.fileio import output_target
from specadvisor.textsafe import line, markup, tui_markup
from specadvisor.tui.format import session_columns, summary_cells
from specadvisor.tui.messages import SweepRequested
from specadvisor.tui.screens.base import AppScreen
from specadvisor.tui.screens.results import ResultsScreen
from specadvisor.tui.session_list import IMPORTED_MARK, SessionView, summary_imported
from specadvisor.tui.widgets.modals import ConfirmModal, PromptModal

if TYPE_CHECKING:  # the store (sqlite-utils) is imported when first opened, not at TUI start-up
    from specadvisor.app.sessions import SessionSummary

ROWS_PER_FRAME = 200  # rows added to the sessions table per frame


class SessionsScreen(AppScreen):
    BINDINGS = [
        Binding("enter", "open", "Open", show=True),
        Binding("slash", "filter", "Filter", tooltip="Filter (words in any column)"),
        Binding("s", "sort", "Sort", tooltip="Sort by the next column"),
        Binding("S", "reverse_sort", "Reverse", show=False, tooltip="Reverse the sort"),
        Binding("space", "mark", "Mark"),
        Binding("c", "compare", "Compare 2"),
        Binding("r", "resume", "Resume"),
        Binding("v", "rejudge", "Re-judge"),
        Binding("i", "import_bundle", "Import"),
        Binding("e", "export_bundle", "Export"),
        Binding("delete,d", "delete", "Delete"),
        Binding("escape", "back", "Back", tooltip="Back (clears the filter first)"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.marked: list[str] = []
        self.summaries: list[SessionSummary] = []  # every session in the store
        self.shown: list[SessionSummary] = []  # those listed: filtered and sorted by self.view
        self.view = SessionView()
        self.columns: list[str] = []

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="sessions-body"):
            filter_input = Input(placeholder="filter: words in any column (Enter keeps it, Esc clears it)", id="sessions-filter", compact=True)
            filter_input.cursor_blink = self.app.cursor_blink
            filter_input.display = False
            yield filter_input
            yield DataTable(id="sessions", cursor_type="row", zebra_stripes=True, classes="panel")
            yield Static("", id="sessions-hint", markup=False)
            yield Static("", id="sessions-verdict", classes="panel", markup=False)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        table = self.query_one("#sessions", DataTable)
        table.border_title = "Saved sessions"
        table.tooltip = "Sort: s the next column, S the other way, or click a column's header"
        self.set_columns()
        self.reload()
        table.focus()

    def reload(self) -> None:
        """List the summaries off the UI thread: one SQL query on a connection of the worker's own
        (a SQLite connection belongs to its thread), so a store of thousands opens without a stall."""
        self.query_one("#sessions-hint", Static).update("loading sessions…")
        self.load_summaries()

    @work(thread=True, exclusive=True, group="store", exit_on_error=False)
    def load_summaries(self) -> None:
        store = self.state.services.open_store()
        try:
            summaries = store.list_sessions()
        finally:
            store.close()
        self.app.call_from_thread(self.show_summaries, summaries)

    def set_columns(self) -> bool:
        """The columns this width holds (id and status first; see format.session_columns); True when they changed."""
        table = self.query_one("#sessions", DataTable)
        columns = session_columns(table.size.width or self.app.size.width)
        if columns == self.columns:
            return False
        self.columns = columns
        table.clear(columns=True)
        table.add_columns(" ", *columns)
        return True

    def on_resize(self) -> None:
        if self.set_columns() and self.summaries:
            self.show_summaries(self.summaries)

    def show_summaries(self, summaries: list[SessionSummary]) -> None:
        """List the store's sessions as the filter and the sort say."""
        self.summaries = summaries
        self.shown = self.view.apply(summaries)
        table = self.query_one("#sessions", DataTable)
        table.border_title = tui_markup(self.view.title(len(self.shown), len(summaries)), 200)
        self._cursor = table.cursor_coordinate
        table.clear()
        self.fill(self.shown, 0)

    def fill(self, summaries: list[SessionSummary], start: int) -> None:
        """Fill the table in batches, one per frame, so a store of thousands never freezes the UI."""
        if summaries is not self.shown:
            return  # a newer filter or sort took over
        table = self.query_one("#sessions", DataTable)
        for summary in summaries[start : start + ROWS_PER_FRAME]:
            mark = ("●" if summary.id in self.marked else " ") + (IMPORTED_MARK if summary_imported(summary) else " ")
            cells = summary_cells(summary)
            table.add_row(mark, *(markup(cells[name]) for name in self.columns), key=summary.id)
        if start + ROWS_PER_FRAME < len(summaries):
            self.set_timer(0.001, lambda: self.fill(summaries, start + ROWS_PER_FRAME))
            return
        if table.row_count and self._cursor.row < table.row_count:
            table.cursor_coordinate = self._cursor
        hint = "Enter opens · / filters · s sorts (S reverses) · space marks two to compare · v re-judges · i imports a bundle · d deletes"
        if any(summary_imported(s) for s in summaries):
            hint += f" · {IMPORTED_MARK} imported (read-only evidence)"
        if not self.summaries:
            hint = "No saved sessions yet: run a sweep from Setup (F2), or import a bundle with i."
        elif not summaries:
            hint = f'No session matches "{line(self.view.filter, 60)}": Esc clears the filter.'
        self.query_one("#sessions-hint", Static).update(hint)

    # ------------------------------------------------------------------ filter and sort (k9s / lazygit style)

    def action_filter(self) -> None:
        box = self.query_one("#sessions-filter", Input)
        box.display = True
        box.focus()

    @on(Input.Changed, "#sessions-filter")
    def filter_changed(self, event: Input.Changed) -> None:
        self.view = SessionView(event.value.strip(), self.view.column, self.view.descending)
        self.show_summaries(self.summaries)

    @on(Input.Submitted, "#sessions-filter")
    def filter_kept(self) -> None:
        box = self.query_one("#sessions-filter", Input)
        box.display = bool(box.value.strip())
        self.query_one("#sessions", DataTable).focus()

    def action_back(self) -> None:
        """Esc clears a filter first (k9s), then leaves."""
        box = self.query_one("#sessions-filter", Input)
        if box.display or box.value:
            box.value = ""  # Input.Changed lists every session again
            box.display = False
            self.query_one("#sessions", DataTable).focus()
            return
        self.app.pop_screen()

    def action_sort(self) -> None:
        self.resort(self.view.next_column(self.columns))

    def action_reverse_sort(self) -> None:
        self.resort(self.view.reversed())

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        """A click on a column's header sorts by it (again: the other way)."""
        column = str(event.label).strip()
        if column in self.columns:
            self.resort(self.view.sorted_by(column))

    def resort(self, view: SessionView) -> None:
        self.view = view
        self.show_summaries(self.summaries)

    def selected_id(self) -> str | None:
        table = self.query_one("#sessions", DataTable)
        if table.row_count == 0:
            return None
        row_key, _ = table.coordinate_to_cell_key(table.cursor_coordinate)
        return row_key.value

    def load(self, session_id: str) -> Session | None:
        try:
            return self.state.store.get_session(session_id)
        except Exception as err:  # noqa: BLE001
            self.app.show_error("Cannot open the session", err)
            return None

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open()

    def action_open(self) -> None:
        session_id = self.selected_id()
        session = self.load(session_id) if session_id else None
        if session is not None:
            self.app.push_screen(ResultsScreen(session))

    def action_mark(self) -> None:
        session_id = self.selected_id()
        if session_id is None:
            return
        if session_id in self.marked:
            self.marked.remove(session_id)
        else:
            self.marked = [*self.marked, session_id][-2:]
        self.reload()

    def action_resume(self) -> None:
        """Continue an interrupted sweep: the runner skips the arms already stored."""
        session_id = self.selected_id()
        session = self.load(session_id) if session_id else None
        if session is None:
            return
        if is_imported(session):
            try:
                refuse_imported(session)
            except InputError as err:
                self.app.show_error("Cannot resume an imported session", err)
            return
        if session.status == "finished":
            self.notify("That session is finished; nothing to resume.", severity="warning")
            return
        self.post_message(SweepRequested(session))

    def action_rejudge(self) -> None:
        """Re-derive the selected session's verdict with this version's code (what `sessions show
        --recompute` prints); it computes on the stored data, runs nothing and stores nothing."""
        session_id = self.selected_id()
        session = self.load(session_id) if session_id else None
        if session is None:
            return
        panel = self.query_one("#sessions-verdict", Static)
        panel.border_title = f"Re-judging {session.id[:8]}…"
        panel.update("")
        panel.add_class("shown")
        self.rejudge(session)

    @work(thread=True, exclusive=True, group="rejudge", exit_on_error=False)
    def rejudge(self, session: Session) -> None:
        try:
            rec = self.state.services.rejudge(session)
        except Exception as err:  # noqa: BLE001
            self.app.call_from_thread(self.app.show_error, "Cannot re-judge the session", err)
            return
        self.app.call_from_thread(self.show_rejudged, session, rec)

    def show_rejudged(self, session: Session, rec: Recommendation) -> None:
        stored = session.recommendation.headline if session.recommendation is not None else "none"
        panel = self.query_one("#sessions-verdict", Static)
        panel.border_title = f"Verdict of {session.id[:8]}"
        panel.update(f"re-judged now: {line(rejudged_text(rec))}\nstored:        {line(stored)}")

    def action_compare(self) -> None:
        if len(self.marked) != 2:
            self.notify("Mark two sessions with space first.", severity="warning")
            return
        first, second = (self.load(i) for i in self.marked)
        if first is not None and second is not None:
            self.app.push_screen(CompareScreen(first, second))

    def action_delete(self) -> None:
        session_id = self.selected_id()
        if session_id is None:
            return

        def answered(yes: bool | None) -> None:
            if not yes:
                return
            try:
                self.state.store.delete_session(session_id)
            except Exception as err:  # noqa: BLE001
                self.app.show_error("Cannot delete the session", err)
                return
            self.marked = [m for m in self.marked if m != session_id]
            self.reload()
            self.notify("Session deleted.")

        self.app.push_screen(ConfirmModal(f"Delete session {session_id[:8]} and all its results? This cannot be undone.", yes="Delete"), answered)

    def action_import_bundle(self) -> None:
        def answered(text: str | None) -> None:
            if not text:
                return
            try:
                session, added = self.state.services.import_bundle(self.state.store, Path(text).expanduser())
            except Exception as err:  # noqa: BLE001
                self.app.show_error("Import failed", err)
                return
            self.reload()
            name = f"{session.id[:8]}" + (f" ({line(session.name, 60)})" if session.name else "")
            if added:
                self.notify(f"Imported session {name} (read-only evidence).", markup=False)
            else:
                self.notify(f"Session {name} is already in the database; nothing imported.", markup=False, severity="warning")

        self.app.push_screen(PromptModal("Import a session bundle from:", placeholder="path/to/bundle.json"), answered)

    def action_export_bundle(self) -> None:
        session_id = self.selected_id()
        session = self.load(session_id) if session_id else None
        if session is None:
            return

        default = f"specadvisor-{session.id[:8]}.json"

        def answered(text: str | None) -> None:
            if not text:
                return
            try:
                target = output_target(text, default_name=default, protected=[self.state.store.path])  # the CLI's -o rule
                if target is None:
                    raise InputError("- (stdout) is not a file the TUI can write", hint="give a file name")
                written = self.state.services.export_bundle(session, target)
            except Exception as err:  # noqa: BLE001
                self.app.show_error("Export failed", err)
                return
            self.notify(f"Wrote {line(written)}", markup=False)

        self.app.push_screen(PromptModal("Write the bundle to:", value=default), answered)


def rejudged_text(rec: Recommendation) -> str:
    """The verdict with the speedup it rests on (only a speculating verdict has one)."""
    if rec.speedup is None:
        return rec.headline
    interval = f", interval {rec.speedup_ci[0]:.2f}-{rec.speedup_ci[1]:.2f}x" if rec.speedup_ci else ""
    return f"{rec.headline} ({rec.speedup:.2f}x{interval})"


class CompareScreen(AppScreen):
    """Two sessions per arm, one line each (tok/s, speedup with its interval, acceptance length), and what
    differs between them, from the same comparison the `sessions compare` command prints."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    def __init__(self, left: Session, right: Session):
        super().__init__()
        self.pair = (left, right)

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="compare-body"):
            yield Static("", id="compare-sessions", classes="panel", markup=False)
            yield DataTable(id="compare", cursor_type="row", zebra_stripes=True, classes="panel")
            yield Static("", id="compare-differences", markup=False)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        comparison = compare_loaded(list(self.pair))
        lines = []
        for tag, col in zip("AB", comparison.sessions, strict=False):
            if col.best_arm == "undecided":
                best = "undecided"
            else:
                best = f"best {col.best_arm} {col.best_speedup:.2f}x" if col.best_arm and col.best_speedup else "no speculative win"
            lines.append(
                line(
                    f"{tag}  {col.name or col.short_id} · {col.model} · {col.gpu} · vLLM {col.vllm_version or '?'} · {col.workload} ({col.request_format}) · {best}"
                )
            )
        panel = self.query_one("#compare-sessions", Static)
        panel.border_title = "Sessions compared"
        panel.update("\n".join(lines))
        table = self.query_one("#compare", DataTable)
        table.border_title = "Per arm: each session on its own line"
        # one line per arm and session (A above B): the speedup with the verdict's interval, as `sessions compare`
        # prints it, fits 80 columns, and the two figures of an arm read one above the other
        table.add_columns("arm", "", "tok/s", "speedup [95% interval]", "AL")
        for row in comparison.arms:
            for tag, cell in zip("AB", row.cells, strict=False):
                table.add_row(
                    markup(row.label) if tag == "A" else "",
                    tag,
                    f"{cell.output_throughput:.1f}" if cell.output_throughput is not None else "-",
                    cell.speedup_text(),
                    f"{cell.mean_acceptance_length:.2f}" if cell.mean_acceptance_length is not None else "-",
                    key=f"{row.arm_id}/{tag}",
                )
        notes = comparison.differences
        self.query_one("#compare-differences", Static).update(
            "\n".join(f"⚠ {line(n)}" for n in notes) if notes else "Same hardware, vLLM, workload and settings: the numbers compare directly."
        )
