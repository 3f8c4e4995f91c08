"""Advice: ranked candidates with their reasons and evidence, the planned arms, the time it will take."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Collapsible, DataTable, Footer, Header, Static

from specadvisor.errors import InputError
from specadvisor.tui.format import candidate_details, candidate_title, duration
from specadvisor.tui.plan_edit import arm_request
from specadvisor.tui.screens.base import AppScreen
from specadvisor.sweep.live import short_label
from specadvisor.tui.widgets.modals import PromptModal


class AdviceScreen(AppScreen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("plus,a", "add_arm", "Add arm"),
        Binding("delete,d", "remove_arm", "Remove arm"),
        Binding("ctrl+s", "start", "Start sweep", priority=True),
    ]

    def compose(self) -> ComposeResult:
        advice = self.app.advice
        yield Header()
        yield Static(advice.verdict or "", id="verdict", markup=False)
        with Horizontal(id="advice-columns"):
            with VerticalScroll(id="candidates", classes="panel"):
                for rank, cand in enumerate(advice.candidates, start=1):
                    with Collapsible(title=candidate_title(rank, cand), collapsed=rank > 1):
                        yield Static("\n".join(candidate_details(cand)), markup=False, classes="details")
                if advice.warnings:
                    yield Static("\n".join(f"! {w}" for w in advice.warnings), classes="warnings", markup=False)
                if not advice.candidates:
                    yield Static("No speculative method applies here; the sweep measures the baseline only.", markup=False)
            with Vertical(id="plan", classes="panel"):
                yield DataTable(id="arms", cursor_type="row", zebra_stripes=True)
                yield Static("", id="estimate", markup=False)
                yield Button("Start sweep ▶", id="start", variant="success")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#candidates").border_title = "Candidates (Enter expands)"
        self.query_one("#plan").border_title = "Planned arms"
        table = self.query_one("#arms", DataTable)
        table.add_columns("arm", "N", "conc.")
        self.refresh_plan()
        table.focus()

    def refresh_plan(self) -> None:
        plan = self.app.plan
        session = plan.session
        table = self.query_one("#arms", DataTable)
        table.clear()
        for arm in session.arms:
            table.add_row(short_label(arm), str(arm.n or "-"), str(arm.concurrency), key=arm.id)
        seconds = plan.estimate_seconds()
        self.query_one("#estimate", Static).update(
            f"{len(session.arms)} arms × {session.settings.num_prompts} requests × {session.settings.output_len} tokens\n"
            f"estimated {duration(seconds)}"
        )

    def action_add_arm(self) -> None:
        def added(text: str | None) -> None:
            if not text:
                return
            try:
                method, n, extra = arm_request(self.app.advice, text)
                if not self.app.plan.add_arm(method, n, extra):
                    raise InputError(f"{text!r} is already planned", hint="pick another N")
            except InputError as err:
                self.app.show_error("Cannot add that arm", err)
                return
            self.refresh_plan()

        first = self.app.advice.candidates[0].id if self.app.advice.candidates else "method"
        self.app.push_screen(PromptModal("Add an arm: candidate and N", placeholder=f"{first} 6"), added)

    def action_remove_arm(self) -> None:
        table = self.query_one("#arms", DataTable)
        if table.row_count == 0:
            return
        row_key, _ = table.coordinate_to_cell_key(table.cursor_coordinate)
        arm = next((a for a in self.app.plan.arms if a.id == row_key.value), None)
        try:
            if arm is not None and arm.is_baseline:
                raise InputError("the baseline arm cannot be removed", hint="every speedup is measured against it")
            self.app.plan.remove_arm(row_key.value)
        except InputError as err:
            self.app.show_error("Cannot remove that arm", err)
            return
        self.refresh_plan()

    @on(Button.Pressed, "#start")
    def action_start(self) -> None:
        self.app.start_sweep(self.app.plan.session)
