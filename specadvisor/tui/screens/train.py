"""Train: a drafter for the target, trained on the user's prompts, then measured.

Reached from Advice (`t`) when the advice calls for training. A small form (prompts, a budget in
minutes or steps, the judging sweep's concurrency), then the run live from the app layer's event
stream (stage, step of total, loss, per-position accuracy as bars, steps/s, time left), then the
held-out check's reading and an offer to run the judging sweep on the Sweep screen. `ctrl+c` (and
quitting) stops the run cleanly: the server and the trainer stop, the record says interrupted, and
`specadvisor train --resume ID` continues it.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Footer, Header, Input, Label, ProgressBar, RichLog, Select, Static

from specadvisor import charts, textsafe
from specadvisor.app.train_steps import HeldOut, TrainAsk, parse_budget
from specadvisor.domain import TrainedDrafter, TrainEvent
from specadvisor.errors import InputError
from specadvisor.quantities import parse_count_list
from specadvisor.tui.format import duration
from specadvisor.tui.messages import SweepRequested
from specadvisor.tui.screens.base import AppScreen
from specadvisor.tui.state import required
from specadvisor.tui.widgets.modals import ConfirmModal

if TYPE_CHECKING:
    from specadvisor.app.train import TrainPlan

TRAIN_SOURCES = [
    ("HumanEval (code)", "humaneval"),
    ("ShareGPT (chat)", "sharegpt"),
    ("Math word problems", "math"),
    ("RAG (long context)", "rag"),
    ("Code edits", "edit"),
]
BAR_WIDTH = 40


class TrainScreen(AppScreen):
    BINDINGS = [
        Binding("ctrl+c", "stop", "Stop training", priority=True),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, reason: str = "") -> None:
        super().__init__()
        self.reason = reason
        self.plan: TrainPlan | None = None
        self.drafter: TrainedDrafter | None = None
        self.held: HeldOut | None = None
        self.ask: TrainAsk | None = None
        self.events: list[TrainEvent] = []  # what the run said, in order (the tests read it)

    def compose(self) -> ComposeResult:
        model = self.state.model_ref
        yield Header()
        with VerticalScroll(id="train-body", classes="panel"):
            yield Static(
                f"{self.reason}\nTrains an EAGLE-3 drafter for {model} on the target's own answers to your prompts, then measures it.",
                id="train-intro",
                markup=False,
            )
            with Vertical(id="train-form"):
                with Horizontal(classes="field-row"):
                    yield Label("  Prompts", id="train-source-label")
                    yield Select(TRAIN_SOURCES, value=self._default_source(), allow_blank=False, id="train-source", compact=True)
                with Horizontal(classes="field-row"):
                    yield Label("  Prompt file", id="train-file-label")
                    yield Input(placeholder="optional: your own prompts (JSONL, ShareGPT JSON or text)", id="train-file", compact=True)
                with Horizontal(classes="field-row"):
                    yield Label("  Budget", id="train-budget-label")
                    yield Input(value="10 min", placeholder="a time (10 min, 1 h) or steps (500 steps)", id="train-budget", compact=True)
                with Horizontal(classes="field-row"):
                    yield Label("  Judging at", id="train-concurrency-label")
                    yield Input(
                        value=self._default_concurrency(), placeholder="concurrency of the judging sweep, e.g. 1 or 1,8", id="train-concurrency", compact=True
                    )
                yield Button("Train ▶", id="train-start", variant="primary", compact=True)
            yield Static("", id="train-stage", markup=False)
            yield ProgressBar(id="train-bar", show_eta=False)
            yield Static("", id="train-figures", markup=False)
            yield Static("", id="train-accuracy", markup=False)
            yield Static("", id="train-result", markup=False)
            yield Button("Run the judging sweep ▶", id="train-judge", variant="success", compact=True)
            yield RichLog(id="train-log", max_lines=300, wrap=True, markup=False, highlight=False)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#train-body").border_title = "Train a drafter"
        for widget in ("#train-bar", "#train-judge"):
            self.query_one(widget).display = False
        self.query_one("#train-budget", Input).focus()

    def _default_source(self) -> str:
        source = self.state.workload.prompt_source or "humaneval"
        return source if source in {v for _, v in TRAIN_SOURCES} else "humaneval"

    def _default_concurrency(self) -> str:
        workload = self.state.workload
        return ",".join(map(str, workload.concurrency_levels or [workload.concurrency]))

    def log_line(self, text: str) -> None:
        self.query_one("#train-log", RichLog).write(textsafe.line(text, 400))

    # ------------------------------------------------------------------ the form

    def read_form(self) -> TrainAsk:
        """The form's answers, checked as the CLI checks `train`'s flags (one InputError naming the field)."""
        minutes, steps = parse_budget(self.query_one("#train-budget", Input).value)
        levels = parse_count_list(self.query_one("#train-concurrency", Input).value, "Judging at", default=[1])
        file = self.query_one("#train-file", Input).value.strip()
        machine = required(self.state.machine, "hardware")
        cpu = not machine.gpus  # no GPU here: the CPU engine trains (slow, to try the pipeline)
        profile = self.state.model_profile
        return TrainAsk(
            model=(profile.path or profile.id) if profile is not None else self.state.model_ref,
            prompts=file or str(self.query_one("#train-source", Select).value),
            minutes=minutes,
            steps=steps,
            concurrency=tuple(levels),
            cpu=cpu,
            engine_cmd=tuple(self.state.engine_cmd) if self.state.engine_cmd and not cpu else None,
        )

    @on(Button.Pressed, "#train-start")
    @on(Input.Submitted, "#train-budget")
    def start(self) -> None:
        if self.state.training or self.plan is not None:
            return
        try:
            ask = self.read_form()
        except InputError as err:
            self.app.show_error("Cannot train with that", err)
            return
        self.ask = ask
        self.query_one("#train-form").disabled = True
        self.query_one("#train-stage", Static).update("planning: checking the engine, the trainer, the prompts and the memory…")
        self.plan_run(ask)

    @work(thread=True, exclusive=True, group="train-plan", exit_on_error=False)
    def plan_run(self, ask: TrainAsk) -> None:
        """Everything checked before a process starts (the app layer's plan), on a store connection of
        this worker's own; a refusal is the error modal and the form comes back."""
        services = self.state.services
        store = services.open_store()
        try:
            plan = services.train.plan(ask, store, hardware=self.state.machine, progress=lambda line: self.app.call_from_thread(self.log_line, line))
        except Exception:
            self.app.call_from_thread(self._form_back)
            raise
        finally:
            store.close()
        self.app.call_from_thread(self._planned, plan)

    def _form_back(self) -> None:
        self.query_one("#train-form").disabled = False
        self.query_one("#train-stage", Static).update("")

    def _planned(self, plan: TrainPlan) -> None:
        self.plan = plan
        for note in plan.notes:
            self.log_line(f"plan: {note}")
        worker = self.run_worker(self._run(plan), name="train", group="train", exclusive=True, exit_on_error=False)
        self.state.train_worker = worker
        self.refresh_bindings()

    # ------------------------------------------------------------------ the run

    async def _run(self, plan: TrainPlan) -> None:
        """Train, then the held-out check; each event shown as it comes. Cancelled (ctrl+c, quit): the
        runner stops its server and trainer and records the run as interrupted before this returns."""
        state = self.state
        runner = state.services.train.runner(plan, state.store)
        self.drafter = runner.drafter
        self.query_one("#train-bar").display = True
        try:
            async for event in runner.run():
                self.drafter = runner.drafter
                self.show_event(event)
        except asyncio.CancelledError:
            self.drafter = runner.drafter
            self.stopped()
            raise
        finally:
            state.train_worker = None
            self.refresh_bindings()
        self.drafter = drafter = runner.drafter
        self.query_one("#train-stage", Static).update("held-out check: the drafter alone on prompts training never saw (vLLM's acceptance per position)")
        prepared, check = state.services.train.heldout(plan, drafter, state.store)
        async for sweep_event in check.events():
            line = getattr(sweep_event, "line", None) or getattr(getattr(sweep_event, "result", None), "arm_id", None)
            if line:
                self.log_line(f"held-out: {line}")
        self.show_heldout(state.services.train.heldout_result(state.store, drafter, prepared.session))

    def show_event(self, event: TrainEvent) -> None:
        self.events.append(event)
        if event.kind == "error":
            self.log_line(f"error: {event.message}")
            return
        if event.kind in ("stage", "step") and event.step is not None:
            bar = self.query_one("#train-bar", ProgressBar)
            if event.total_steps:
                bar.update(total=event.total_steps, progress=event.step)
            elif event.deadline_s is not None and event.eta_s is not None:
                bar.update(total=None)
        if event.kind == "stage":
            self.query_one("#train-stage", Static).update(textsafe.line(f"{event.stage}: {event.message}", 300))
            if event.step is None:
                self.log_line(f"{event.stage}: {event.message}")
        elif event.kind == "step":
            self.query_one("#train-stage", Static).update("train: the draft head learns the target's next tokens")
            self.query_one("#train-figures", Static).update(step_text(event))
            if event.accuracy:
                self.query_one("#train-accuracy", Static).update(accuracy_text(event.accuracy))
        elif event.kind == "val":
            self.log_line(f"validation ({event.message}): loss {event.loss or 0:.3f}, accuracy by position {' '.join(f'{a:.2f}' for a in event.accuracy)}")
        elif event.message:
            self.log_line(f"{event.stage or event.kind}: {event.message}")

    def stopped(self) -> None:
        drafter = self.drafter
        ident = drafter.id[:8] if drafter else "ID"
        text = f"stopped: the run is recorded as interrupted; continue it with `specadvisor train --resume {ident}`"
        self.query_one("#train-stage", Static).update(text)
        self.log_line(text)

    def show_heldout(self, held: HeldOut) -> None:
        self.held = held
        if held.error or held.acceptance_length is None:
            self.query_one("#train-result", Static).update(textsafe.line(f"held-out check measured nothing: {held.error}; session {held.session_id[:8]}", 400))
            return
        lines = [
            f"Held-out acceptance length {held.acceptance_length:.2f} at N={held.n} (session {held.session_id[:8]})",
            charts.acceptance_chart(held.rates, BAR_WIDTH + 14),
            textsafe.line(held.reason, 300),
            f"Judging sweep: no speculation, n-gram and the drafter at N = {', '.join(map(str, held.grid))}.",
        ]
        self.query_one("#train-stage", Static).update("done: the drafter is trained and measured on held-out prompts")
        self.query_one("#train-result", Static).update("\n".join(lines))
        button = self.query_one("#train-judge", Button)
        button.display = True
        button.focus()

    # ------------------------------------------------------------------ judging, stopping, leaving

    @on(Button.Pressed, "#train-judge")
    def judge(self) -> None:
        plan, drafter, held, ask = self.plan, self.drafter, self.held, self.ask
        if plan is None or drafter is None or held is None or ask is None:
            return
        try:
            prepared = self.state.services.train.judging(plan, drafter, self.state.store, held.grid, ask.concurrency)
        except InputError as err:
            self.app.show_error("Cannot plan the judging sweep", err)
            return
        self.post_message(SweepRequested(prepared.session))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """ctrl+c stops a run: offered (and shown) only while one runs."""
        return self.state.training if action == "stop" else True

    def action_stop(self) -> None:

        def answered(stop: bool | None) -> None:
            worker = self.state.train_worker
            if stop and worker is not None:
                self.query_one("#train-stage", Static).update("stopping: the trainer saves its state and the server stops…")
                worker.cancel()

        self.app.push_screen(
            ConfirmModal("Stop training? The run is recorded as interrupted; `specadvisor train --resume ID` continues it.", yes="Stop training"), answered
        )

    def action_back(self) -> None:
        if self.state.training:
            self.notify("Training is running: ctrl+c stops it first.", severity="warning", markup=False)
            return
        self.app.pop_screen()


def step_text(event: TrainEvent) -> str:
    """`step 120/500 · loss 2.314 · 3.20 steps/s · 2:31 left`."""
    parts = [f"step {event.step}" + (f"/{event.total_steps}" if event.total_steps else "")]
    if event.loss is not None:
        parts.append(f"loss {event.loss:.3f}")
    if event.steps_per_s:
        parts.append(f"{event.steps_per_s:.2f} steps/s")
    if event.eta_s is not None:
        parts.append(f"{duration(event.eta_s)} left")
    return " · ".join(parts)


def accuracy_text(accuracy: list[float]) -> str:
    """Per-position accuracy (the draft's first k+1 tokens all right) as bars on a 0-100% scale."""
    return "accuracy by position (teacher-forced)\n" + charts.acceptance_chart(list(accuracy), BAR_WIDTH + 14)


def train_reason(state: Any) -> str | None:
    """Whether the Advice screen offers training (the app layer's rule)."""
    from specadvisor.app.train_steps import training_reason

    if state.advice is None or state.model_profile is None:
        return None
    return training_reason(state.advice, state.model_profile)
