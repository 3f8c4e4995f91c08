"""Setup: what this machine has, which model, and what the workload looks like."""

from __future__ import annotations

from collections.abc import Iterable

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Button, Footer, Header, Input, Label, Select, Static

from specadvisor import textsafe
from specadvisor.app.plan import default_output_len
from specadvisor.domain import Advice, HardwareProfile, ModelProfile, Workload, WorkloadKind
from specadvisor.errors import InputError
from specadvisor.redact import redact_text
from specadvisor.tui.format import hardware_lines, model_lines
from specadvisor.tui.protocols import PlanLike
from specadvisor.tui.screens.base import AppScreen
from specadvisor.tui.services import Services
from specadvisor.tui.setup_form import BY_ID, ENGINE_FIELDS, FIELDS, field_error, initial_texts, parse_form
from specadvisor.tui.state import required

PROMPT_SOURCES = [
    ("HumanEval (code)", "humaneval"),
    ("ShareGPT (chat)", "sharegpt"),
    ("Math word problems", "math"),
    ("RAG (long context)", "rag"),
    ("Code edits (copy with a rename)", "edit"),
    ("Long code edits (43-line functions)", "rename"),
]
DEFAULT_SOURCE = {"code": "humaneval", "chat": "sharegpt", "math": "math", "rag": "rag", "agentic": "sharegpt", "edit": "edit"}


class SetupScreen(AppScreen):
    BINDINGS = [
        # F5 works from inside a text field; Ctrl+A is left to the fields (line start), so help never offers it
        Binding("f5", "advise", "Advise", priority=True),
    ]

    def compose(self) -> ComposeResult:
        state = self.state
        wl: Workload = state.workload
        yield Header()
        with Horizontal(id="setup-columns"):
            with Vertical(id="machine", classes="panel"):
                yield Static("detecting hardware and vLLM…", id="hardware", markup=False)
            with VerticalScroll(id="form", classes="panel"):
                with Horizontal(id="model-row"):
                    yield self._input(state.model_ref, "model id or local path", "model")
                    yield Button("Inspect", id="inspect", compact=True)
                yield Static("type a model id (e.g. Qwen/Qwen3-8B) and press Enter", id="model-info", markup=False)
                with Vertical(id="workload-form"):
                    with Horizontal(classes="field-row"):
                        yield Label("  Workload", id="kind-label")
                        yield Select([(k.value, k.value) for k in WorkloadKind], value=wl.kind.value, allow_blank=False, id="kind", compact=True)
                    with Horizontal(classes="field-row"):
                        yield Label("  Prompt set", id="source-label")
                        builtin = wl.prompt_source if wl.prompt_source in {v: k for k, v in PROMPT_SOURCES} else "humaneval"
                        yield Select(PROMPT_SOURCES, value=builtin, allow_blank=False, id="source", compact=True)
                    texts = initial_texts(wl, state.budget_text or BY_ID["budget"].default, state.target_gpu, state.form_texts)
                    for field in FIELDS:
                        with Horizontal(classes="field-row"):
                            yield Label(f"  {field.label}", id=f"{field.id}-label")
                            if field.choices:
                                chosen = texts[field.id] if texts[field.id] in {v for _, v in field.choices} else field.default
                                yield Select(field.choices, value=chosen, allow_blank=False, id=field.id, compact=True)
                            else:
                                yield self._input(texts[field.id], field.shown_placeholder, field.id)
                        yield Static("", id=f"{field.id}-error", classes="field-error", markup=False)
                yield Button("Advise ▶", id="advise", variant="primary")
        yield Footer(compact=True)

    def _input(self, value: str, placeholder: str, id: str) -> Input:
        field = Input(value=value, placeholder=placeholder, id=id, compact=True)
        field.cursor_blink = self.app.cursor_blink
        return field

    def on_mount(self) -> None:
        self.query_one("#machine").border_title = "This machine"
        self.query_one("#form").border_title = "Model and workload"
        self.query_one("#model", Input).focus()
        if self.state.hardware is None:
            self.call_after_refresh(self.detect)  # paint the first frame before probing starts
        else:
            self.show_hardware(self.state.hardware)
        if self.state.model_profile is not None:
            self.show_model(self.state.model_profile)

    # ------------------------------------------------------------------ hardware

    @work(thread=True, exclusive=True, group="detect", exit_on_error=False)
    def detect(self) -> None:
        hardware = self.state.services.detect()
        self.app.call_from_thread(self.show_hardware, hardware)

    def show_hardware(self, hardware: HardwareProfile) -> None:
        self.state.hardware = hardware
        self.show_machine()

    def show_machine(self) -> None:
        """This machine's probe, and under it the GPU the advice is for when one is named."""
        if self.state.hardware is None:
            return
        machine = self.state.machine
        assert machine is not None
        lines = hardware_lines(machine)
        if self.state.endpoint:
            lines += ["", f"Measuring the running server at {redact_text(self.state.endpoint)} (nothing is launched)"]
        gpu = self.state.target_gpu
        if gpu:
            lines += ["", f"Advice for {gpu} (planned: nothing runs here; x exports the plan)"]
        self.query_one("#hardware", Static).update("\n".join(lines))
        self.query_one("#machine").border_title = f"This machine · advising for {textsafe.tui_markup(gpu, 40)}" if gpu else "This machine"

    # ------------------------------------------------------------------ model

    @on(Input.Submitted, "#model")
    @on(Button.Pressed, "#inspect")
    def action_inspect(self) -> None:
        ref = self.query_one("#model", Input).value.strip()
        if not ref:
            self.app.show_error("No model given", InputError("the model field is empty", hint="type a Hugging Face id or a local path"))
            return
        self.query_one("#model-info", Static).update(f"inspecting {ref}…")
        self.inspect(ref)

    @work(thread=True, exclusive=True, group="inspect", exit_on_error=False)
    def inspect(self, ref: str) -> None:
        profile = self.state.services.inspect_model(ref)
        self.app.call_from_thread(self.show_model, profile)

    def show_model(self, profile: ModelProfile) -> None:
        self.state.model_profile = profile
        self.state.model_ref = profile.id
        self.query_one("#model-info", Static).update("\n".join(model_lines(profile)))

    @on(Select.Changed, "#kind")
    def kind_changed(self, event: Select.Changed) -> None:
        source = DEFAULT_SOURCE.get(str(event.value))
        if source:
            self.query_one("#source", Select).value = source

    @on(Select.Changed, "#source")
    def source_changed(self, event: Select.Changed) -> None:
        """A set with its own output length (edits stay inside the copy) sets the field, unless the
        user typed another length."""
        field = self.query_one("#output_len", Input)
        if field.value.strip() in {"", *(str(default_output_len(s)) for _, s in PROMPT_SOURCES)}:
            field.value = str(default_output_len(str(event.value)))

    # ------------------------------------------------------------------ advice

    # ------------------------------------------------------------------ validation

    @on(Input.Changed)
    def field_changed(self, event: Input.Changed) -> None:
        """Inline validation as you type: the message sits under the field, naming it."""
        if event.input.id in BY_ID:
            error = field_error(event.input.id, event.value)
            self.show_field_error(event.input.id, error)
            if event.input.id == "gpu" and error is None:
                self.state.target_gpu = BY_ID["gpu"].parse(event.value, "", "")
                self.show_machine()

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        self._mark_focus(event.widget, True)

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        self._mark_focus(event.widget, False)

    def _mark_focus(self, widget: Widget, focused: bool) -> None:
        """A ▶ before the focused field's label: visible even in a colourless terminal capture."""
        labels: Iterable[Label] = self.query(f"#{widget.id}-label").results(Label) if widget.id else []
        for label in labels:
            text = str(label.render()).strip().lstrip("▶ ")
            label.update(("▶ " if focused else "  ") + text)
            label.set_class(focused, "-focused")

    def show_field_error(self, field_id: str, message: str | None) -> None:
        box = self.query_one(f"#{field_id}-error", Static)
        box.update(f"↑ {message}" if message else "")
        box.display = bool(message)
        self.query_one(f"#{field_id}").set_class(bool(message), "-invalid")
        self.query_one(f"#{field_id}-label", Label).set_class(bool(message), "-invalid")

    # ------------------------------------------------------------------ advice

    @on(Button.Pressed, "#advise")
    def action_advise(self) -> None:
        texts = {f.id: self.field_text(f.id) for f in FIELDS}
        values, errors = parse_form(str(self.query_one("#kind", Select).value), str(self.query_one("#source", Select).value), texts)
        for field in FIELDS:
            self.show_field_error(field.id, errors.get(field.id))
        if values is None:
            first = next(iter(errors))
            self.query_one(f"#{first}").focus()  # focus goes back to the field to fix
            self.notify(errors[first], title=f"Check {BY_ID[first].label}", severity="error", timeout=6, markup=False)  # may quote what was typed
            return
        if self.state.hardware is None:
            self.app.notify("Still detecting hardware; try again in a moment.", severity="warning")
            return
        ref = self.query_one("#model", Input).value.strip()
        if not ref:
            self.app.show_error("No model given", InputError("the model field is empty", hint="type a Hugging Face id or a local path"))
            return
        self.state.workload = values.workload
        self.state.budget_s = values.budget_s
        self.state.budget_text = texts["budget"]
        self.state.form_settings = values.settings
        self.state.form_texts = {f.id: texts[f.id] for f in FIELDS if f.setting or f.id in ENGINE_FIELDS}
        self.state.target_gpu = values.gpu
        if values.engine_cmd != self.state.engine_cmd:
            self.state.engine = None  # probed again for the new command
        self.state.engine_cmd = values.engine_cmd
        self.state.endpoint = values.endpoint
        self.advise(ref, values.workload, values.gpu)

    def field_text(self, field_id: str) -> str:
        """What a field holds: an Input's text, or a Select's chosen word."""
        widget = self.query_one(f"#{field_id}")
        if isinstance(widget, Select):
            return "" if widget.value is Select.BLANK else str(widget.value)
        return widget.value if isinstance(widget, Input) else ""

    @work(thread=True, exclusive=True, group="advise", exit_on_error=False)
    def advise(self, ref: str, workload: Workload, gpu: str | None = None) -> None:
        """Advice and plan for this machine, or for a named GPU exactly as `advise --gpu` does."""
        services = self.state.services
        profile = self.state.model_profile
        if profile is None or profile.id != ref:
            profile = services.inspect_model(ref)
            self.app.call_from_thread(self.show_model, profile)
        planned = planned_hardware(services, gpu)
        state = self.state
        if planned is None and state.engine_cmd and state.engine is None:  # the vLLM behind the typed command, as `detect --engine-cmd`
            if services.probe_engine is None:
                raise InputError("probing another engine command is not available here", hint="clear the Engine command field")
            state.engine = services.probe_engine(state.engine_cmd)
            self.app.call_from_thread(self.show_machine)
        hardware = planned or required(state.machine, "hardware")
        advice = services.advise(hardware, profile, workload)
        if state.endpoint and planned is None:
            if services.attach_plan is None:
                raise InputError("measuring a running server is not available here", hint="clear the Endpoint field")
            plan = services.attach_plan(state.endpoint, workload, state.form_settings)
        else:
            plan = services.plan(advice, profile, hardware, workload, budget_s=state.budget_s, host_only=planned is None, parallel=state.parallel)
        self.app.call_from_thread(self.open_advice, advice, plan, planned)

    def open_advice(self, advice: Advice, plan: PlanLike, planned: HardwareProfile | None = None) -> None:
        from specadvisor.tui.screens.advice import AdviceScreen

        self.state.planned_hardware = planned
        self.state.advice = advice
        self.state.take_plan(plan)
        self.app.push_screen(AdviceScreen())


def planned_hardware(services: Services, gpu: str | None) -> HardwareProfile | None:
    """The hypothetical machine for a named GPU (the CLI's `--gpu`), None for this machine."""
    if not gpu:
        return None
    if services.hypothetical is None:
        raise InputError("planning for another GPU is not available here", hint="clear the Plan for GPU field")
    return services.hypothetical(gpu)
