"""Advice: ranked candidates with their reasons and evidence, and the plan that will run.

The plan lists one readable label per arm (`P-EAGLE N=5 · speculator.peagle`), grouped by candidate in
the order the runner follows; it is edited per candidate (add or remove N), sized by a time budget,
and on a CPU-only host says what cannot be measured here and exports the full plan for a GPU machine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Collapsible, DataTable, Footer, Header, Static

from specadvisor import textsafe
from specadvisor.app.capacity import for_capacity
from specadvisor.app.running import parallel_choice
from specadvisor.app.views import arm_label, candidate_family, family_key
from specadvisor.domain import Advice, Arm, Session
from specadvisor.errors import EngineError, InputError
from specadvisor.quantities import parse_count_list, parse_duration
from specadvisor.tui.format import candidate_details, candidate_title, over_budget_line, plan_estimate_lines, plan_warnings, rough_duration
from specadvisor.tui.messages import SweepRequested
from specadvisor.tui.plan_edit import arm_request, family_of
from specadvisor.tui.protocols import PlanLike
from specadvisor.tui.screens.base import AppScreen
from specadvisor.tui.state import required
from specadvisor.tui.widgets.modals import ConfirmModal, InfoModal, PromptModal

if TYPE_CHECKING:
    from specadvisor.app.plan import ExportedPlan


class AdviceScreen(AppScreen):
    # The footer shows them in this order, then the app's ^q and f1: short words so that all of them fit
    # 80 columns (the palette and F1 help give each its full name, the tooltip; F2/F3 are in both, the
    # plan's +/- in its panel's title, where they act).
    BINDINGS = [
        Binding("ctrl+s", "start", "Start", priority=True, tooltip="Start sweep"),
        Binding("plus,a", "add_arm", "Add N", show=False),
        Binding("minus,delete,d", "remove_arm", "Remove", show=False),
        Binding("b", "budget", "Time", tooltip="Plan within a time"),
        Binding("x", "export_plan", "Export", tooltip="Export plan"),
        Binding("g", "capacity", "Capacity"),
        Binding("p", "parallel", "Parallel"),
        Binding("t", "train", "Train", tooltip="Train a drafter"),  # only when the advice calls for one (check_action)
        Binding("escape", "app.pop_screen", "Back"),
        Binding("f2", "app.go_setup", "Setup", show=False),
        Binding("f3", "app.sessions", "Sessions", show=False),
    ]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """`t` (train a drafter) is offered only where the advice calls for training, on this machine."""
        if action == "train":
            return self.training_reason() is not None and not self.plan.planned_for
        return True

    def training_reason(self) -> str | None:
        from specadvisor.tui.screens.train import train_reason

        return train_reason(self.state)

    def action_train(self) -> None:
        reason = self.training_reason()
        if reason is None or self.plan.planned_for:
            return
        from specadvisor.tui.screens.train import TrainScreen

        self.app.push_screen(TrainScreen(reason))

    @property
    def advice(self) -> Advice:
        return required(self.state.advice, "advice")

    @property
    def plan(self) -> PlanLike:
        """The state's plan: a re-plan (budget) replaces it there, and this screen shows the new one."""
        return required(self.state.plan, "plan")

    def compose(self) -> ComposeResult:
        advice = self.advice
        yield Header()
        yield Static(advice.verdict or "", id="verdict", markup=False)
        with Horizontal(id="advice-columns"):
            with VerticalScroll(id="candidates", classes="panel"):
                if advice.assumed:  # what the ranking assumed, atop it: full width it took the plan's rows at 80x24
                    yield Static(textsafe.line(f"Advice {advice.assumed}", 400), id="assumed", markup=False)
                for rank, cand in enumerate(advice.candidates, start=1):
                    with Collapsible(title=textsafe.tui_markup(candidate_title(rank, cand, self.state.model_ref), 120), collapsed=rank > 1):
                        yield Static(textsafe.lines("\n".join(candidate_details(cand))), markup=False, classes="details")
                if advice.warnings:
                    yield Static("\n".join(f"! {w}" for w in advice.warnings), classes="warnings", markup=False)
                reason = self.training_reason()
                if reason is not None and not self.plan.planned_for:
                    yield Static(f"{reason} t trains one here and measures it.", id="train-offer", classes="warnings", markup=False)
                if not advice.candidates:
                    yield Static("No speculative method applies here; the sweep measures the baseline only.", markup=False)
            with Vertical(id="plan", classes="panel"):
                yield Static("", id="host-note", markup=False)
                yield DataTable(id="arms", cursor_type="row", zebra_stripes=True)
                yield Static("", id="estimate", markup=False)
                yield Button("Start sweep ▶", id="start", variant="success", compact=True)
        yield Footer(compact=True, show_command_palette=False)  # ^p still opens it (F1 says so): room for the keys

    def on_mount(self) -> None:
        planned = self.state.planned_hardware
        if planned is not None:
            self.sub_title = f"advice for {planned.gpu_label} (planned, not this machine)"
        self.query_one("#candidates").border_title = "Candidates (Enter expands)"
        self.query_one("#plan").border_title = "Plan: + adds N, - removes"
        table = self.query_one("#arms", DataTable)
        table.add_columns("#", "arm")
        self.refresh_plan()
        table.focus()

    # ------------------------------------------------------------------ rendering

    def group_ranks(self) -> dict[str, int]:
        """Configuration family -> the rank of the candidate it came from (its group number)."""
        ranks: dict[str, int] = {}
        for rank, cand in enumerate(self.advice.candidates, start=1):
            ranks.setdefault(candidate_family(cand), rank)
        return ranks

    def refresh_plan(self) -> None:
        plan = self.plan
        session = plan.session
        note = self.query_one("#host-note", Static)
        planned_for = plan.planned_for
        lines = [f"Planned for {planned_for}, not this machine: x exports it for that machine."] if planned_for else []
        # what fails first (memory, time), at the top: a panel at 80x24 cuts its bottom first; memory as figures
        # short enough for 80 columns, its sentences (the arithmetic, what to do) in the tooltip and when Start asks
        over = over_budget_line(plan)
        lines += [f"⚠ {w}" for w in plan.host_headlines or plan.host_warnings] + ([f"⚠ {over}"] if over else []) + [plan.host_note]
        text = "\n".join(line for line in lines if line)
        note.update(textsafe.lines(text))
        note.display = bool(text)
        note.tooltip = textsafe.lines("\n".join(f"⚠ {w}" for w in plan.host_warnings)) if plan.host_warnings else None
        table = self.query_one("#arms", DataTable)
        cursor = table.cursor_row
        table.clear()
        ranks = self.group_ranks()
        last_group = None
        for arm in session.arms:
            group = "" if arm.is_baseline else f"#{ranks[family_key(arm)]}" if family_key(arm) in ranks else "+"
            shown = group if group != last_group else ""
            last_group = group
            table.add_row(shown, textsafe.markup(arm_label(arm, self.state.model_ref), 80), key=arm.id)
        if table.row_count:
            table.move_cursor(row=min(cursor, table.row_count - 1))
        self.query_one("#estimate", Static).update(textsafe.lines(self.estimate_text()))

    def estimate_text(self) -> str:
        return "\n".join(plan_estimate_lines(self.plan))

    # ------------------------------------------------------------------ editing

    def highlighted_arm(self) -> Arm | None:
        table = self.query_one("#arms", DataTable)
        if table.row_count == 0:
            return None
        row_key, _ = table.coordinate_to_cell_key(table.cursor_coordinate)
        return next((a for a in self.plan.arms if a.id == row_key.value), None)

    def fixed_plan(self) -> bool:
        """A running server's plan (Setup's Endpoint) measures it as it runs: nothing to add, remove or size;
        says so and returns True."""
        if not self.plan.session.settings.endpoint:
            return False
        self.notify("This plan measures a running server as it is: clear Endpoint in Setup (F2) to plan launches.", severity="warning", markup=False)
        return True

    def action_add_arm(self) -> None:
        if self.fixed_plan():
            return
        arm = self.highlighted_arm()
        family = None if arm is None or arm.is_baseline else family_of(arm)

        def added(text: str | None) -> None:
            if not text:
                return
            try:
                if family is not None and text.strip()[:1].isdigit():
                    method, extra = family
                    requests = [(method, n, extra) for n in parse_count_list(text, "N")]
                else:
                    requests = [arm_request(self.advice, text)]
                new = [a for method, n, extra in requests for a in self.plan.add_arm(method, n, extra)]
                if not new:
                    raise InputError(f"{text!r} is already planned", hint="pick another N")
            except InputError as err:
                self.app.show_error("Cannot add that arm", err)
                return
            self.refresh_plan()

        if arm is not None and family is not None:  # a family is only found on a highlighted arm
            name = arm_label(arm, self.state.model_ref, with_concurrency=False).split(" N=")[0]
            self.app.push_screen(PromptModal(f"Add N to {name} (e.g. 6 or 6,8):", placeholder="6"), added)
        else:
            first = self.advice.candidates[0].id if self.advice.candidates else "method"
            self.app.push_screen(PromptModal("Add an arm: candidate and N", placeholder=f"{first} 6"), added)

    def action_remove_arm(self) -> None:
        if self.fixed_plan():
            return
        arm = self.highlighted_arm()
        if arm is None:
            return
        try:
            if arm.is_baseline:
                raise InputError("the baseline arm cannot be removed", hint="every speedup is measured against it")
            self.plan.remove_arm(arm.id)
        except InputError as err:
            self.app.show_error("Cannot remove that arm", err)
            return
        self.refresh_plan()

    # ------------------------------------------------------------------ budget, parallel and export

    def action_parallel(self) -> None:
        """`--parallel auto|K`: servers at once (GPU groups, or core ranges on a CPU-only host)."""
        if self.fixed_plan():
            return

        def answered(text: str | None) -> None:
            if text is None:
                return
            try:
                choice = parallel_choice(text.strip() or "auto")
            except InputError as err:
                self.app.show_error("Cannot read that", err)
                return
            self.state.parallel = choice
            self.replan(self.state.budget_s)  # the estimate and the budget's trim count the servers at once

        current = self.plan.session.settings.parallel_choice
        self.app.push_screen(
            PromptModal("Servers at once: auto (one per free GPU group) or a number (a CPU-only host splits its cores):", value=current), answered
        )

    def action_budget(self) -> None:
        if self.fixed_plan():
            return

        def answered(text: str | None) -> None:
            if text is None:
                return
            try:
                budget = parse_duration(text, "Plan within")
            except InputError as err:
                self.app.show_error("Cannot read that time", err)
                return
            self.state.budget_s = budget
            self.state.budget_text = text
            self.replan(budget)

        current = self.state.budget_text or ""
        self.app.push_screen(
            PromptModal(
                "Plan within (the time the plan is sized to, e.g. 30 min, 1 h; 'none' plans everything). "
                "Not the CLI's --budget, which is extra measuring time to reach a decision:",
                value=current,
            ),
            answered,
        )

    @work(thread=True, exclusive=True, group="advise", exit_on_error=False)
    def replan(self, budget: float | None) -> None:
        state = self.state
        planned = state.planned_hardware
        hardware = planned or required(state.machine, "hardware")
        plan = state.services.plan(
            self.advice, required(state.model_profile, "model"), hardware, state.workload, budget_s=budget, host_only=planned is None, parallel=state.parallel
        )
        self.app.call_from_thread(self._set_plan, plan)

    def _set_plan(self, plan: PlanLike) -> None:
        self.state.take_plan(plan)
        self.refresh_plan()

    def action_export_plan(self) -> None:
        """The plan for a GPU machine: advised again for that GPU (here a CPU host drops GPU methods),
        written as serve-params for `vllm bench sweep serve`, and saved here to export or resume there."""

        def gpu_chosen(spec: str | None) -> None:
            if not spec:
                return

            default = f"specadvisor-plan-{spec.lower()}.json"

            def path_given(text: str | None) -> None:
                if text:
                    self.export_plan(spec, text, default)

            self.app.push_screen(PromptModal("Write the plan (vllm bench sweep serve --serve-params) to:", value=default), path_given)

        default = self.state.target_gpu or "H100x1"
        self.app.push_screen(PromptModal("Plan for which GPU machine? NAME[xCOUNT], e.g. H100x8:", value=default), gpu_chosen)

    @work(thread=True, exclusive=True, group="export", exit_on_error=False)
    def export_plan(self, spec: str, text: str, default: str) -> None:
        """The app layer's export for a GPU machine (`app.plan.export_for_gpu`), on a store
        connection of this worker's own (a SQLite connection belongs to its thread)."""
        from specadvisor.fileio import output_target

        state = self.state
        path = output_target(text, default_name=default, protected=[state.store.path])  # the CLI's -o rule
        if path is None:
            raise InputError("- (stdout) is not a file the TUI can write", hint="give a file name")
        services = state.services
        model = required(state.model_profile, "model")
        hardware = services.hypothetical(spec) if services.hypothetical else required(state.hardware, "hardware")
        shown = self.plan if self.plan.planned_for and hardware.gpu_label == self.plan.planned_for else None  # the plan on screen is for it
        advice = self.advice if shown is not None else services.advise(hardware, model, state.workload)
        store = services.open_store()
        try:
            exported = services.export_plan(advice, model, hardware, state.workload, path, store, shown=shown, budget_s=state.budget_s)
        finally:
            store.close()
        self.app.call_from_thread(self._exported, exported, advice)

    def _exported(self, exported: ExportedPlan, advice: Advice) -> None:
        session, written = exported.session, exported.written
        export, load, run = exported.handoff
        self.notify(
            f"Wrote {written}: {len(session.arms)} arms · {exported.launches} launches · about {rough_duration(exported.seconds)}. Saved plan {session.id[:8]}: `{export}` here, "
            f"then on the GPU machine `{load}` and `{run}` (an imported plan runs as a new session there).",
            title="Plan exported",
            timeout=12,
            markup=False,
        )
        label = session.hardware.gpu_label if session.hardware else "that GPU"
        self.app.push_screen(InfoModal(f"Ranking for {label} (planned; the exported plan measures these)", ranking_text(advice, self.state.model_ref)))

    def action_capacity(self) -> None:
        """Measure capacity instead: per configuration one launch and a rate sweep to the latency edge."""
        if self.plan.planned_for:
            self.notify(f"This plan is for {self.plan.planned_for}, not this machine: nothing can be measured here.", severity="warning", markup=False)
            return

        def answered(text: str | None) -> None:
            if not text:
                return
            try:
                session = for_capacity(self.plan.session, text)  # the targets checked as --slo-tpot-ms/--slo-ttft-ms are
            except InputError as err:
                self.app.show_error("Cannot read that target", err)
                return
            self.post_message(SweepRequested(session))

        self.app.push_screen(PromptModal("Capacity under a latency target: p99 TPOT ms[, p99 TTFT ms]", value="30, 500"), answered)

    @on(Button.Pressed, "#start")
    def action_start(self) -> None:
        """Start, after asking when the plan was checked and found wanting (memory, time budget)."""
        plan = self.plan
        planned_for = plan.planned_for
        if planned_for:
            self.notify(
                f"This plan is for {planned_for}, not this machine: x exports it to run there; F2 plans for this machine.",
                severity="warning",
                timeout=8,
                markup=False,
            )
            return
        if plan.session.settings.endpoint:  # a network round trip: say what the wait is
            self.notify("Checking that the server answers…", timeout=3, markup=False)
        self.check_engine(plan.session)

    @work(thread=True, exclusive=True, group="start", exit_on_error=False)
    def check_engine(self, session: Session) -> None:
        """Refuse before anything launches when no engine is reachable (no vLLM found, nothing at the
        endpoint): one readable message saying where to point it, instead of every arm failing."""
        problem = self.state.services.launch_problem(session)
        self.app.call_from_thread(self._checked, session, problem)

    def _checked(self, session: Session, problem: str | None) -> None:
        if problem is not None:
            hint = (
                "start the server or fix the Endpoint in Setup (F2)"
                if session.settings.endpoint
                else "give the command that starts vLLM in Setup's Engine command (F2), e.g. ~/vllm-env/bin/vllm serve or a docker run line, "
                "or measure a running server with Setup's Endpoint"
            )
            self.app.show_error("Cannot start the sweep", EngineError(problem, hint=hint))
            return
        warnings = plan_warnings(self.plan)
        if not warnings:
            self.post_message(SweepRequested(session))
            return

        def answered(start: bool | None) -> None:
            if start:
                self.post_message(SweepRequested(session))

        question = "Checked against this machine and the time to plan within:\n" + "\n".join(f"⚠ {w}" for w in warnings) + "\nStart anyway?"
        self.app.push_screen(ConfirmModal(textsafe.lines(question), yes="Start anyway"), answered)


def ranking_text(advice: Advice, model_ref: str | None) -> str:
    """The advice for a GPU as a ranked list: what `x` shows after writing that GPU's plan."""
    lines = [textsafe.line(advice.verdict or "", 300)] if advice.verdict else []
    lines += [textsafe.line(candidate_title(rank, cand, model_ref), 160) for rank, cand in enumerate(advice.candidates, start=1)]
    if not advice.candidates:
        lines.append("No speculative method applies there; the plan measures the baseline only.")
    return "\n".join(lines)
