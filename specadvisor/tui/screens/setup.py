"""Setup: what this machine has, which model, and what the workload looks like."""

from __future__ import annotations

from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Footer, Header, Input, Label, Select, Static

from specadvisor.domain import HardwareProfile, ModelProfile, Workload, WorkloadKind
from specadvisor.errors import InputError
from specadvisor.tui.format import hardware_lines, model_lines
from specadvisor.tui.screens.base import AppScreen

PROMPT_SOURCES = [
    ("HumanEval (code)", "humaneval"),
    ("ShareGPT (chat)", "sharegpt"),
    ("Math word problems", "math"),
    ("RAG (long context)", "rag"),
]
DEFAULT_SOURCE = {"code": "humaneval", "chat": "sharegpt", "math": "math", "rag": "rag", "agentic": "sharegpt"}


def parse_workload(
    kind: str, source: str, concurrency: str, output_len: str, temperature: str, num_prompts: str, prompt_file: str = ""
) -> Workload:
    """The form's strings as a Workload; a bad field is an InputError naming the field and the fix.
    A prompt file, when given, replaces the built-in prompt set."""

    def number(name: str, text: str, cast, low: float):
        try:
            value = cast(text.strip())
        except ValueError:
            raise InputError(f"{name} must be a number, got {text!r}", hint=f"enter a number >= {low:g}") from None
        if value < low:
            raise InputError(f"{name} must be at least {low:g}, got {value}", hint=f"enter a number >= {low:g}")
        return value

    prompt_file = prompt_file.strip()
    if prompt_file:
        path = Path(prompt_file).expanduser()
        if not path.is_file():
            raise InputError(f"prompt file {path} does not exist", hint="give a JSONL or text file of prompts, or clear the field")
        source = str(path)
    return Workload(
        kind=WorkloadKind(kind),
        prompt_source=source,
        concurrency=number("Concurrency", concurrency, int, 1),
        output_len=number("Output length", output_len, int, 1),
        temperature=number("Temperature", temperature, float, 0),
        num_prompts=number("Prompts", num_prompts, int, 1),
    )


class SetupScreen(AppScreen):
    BINDINGS = [
        Binding("ctrl+a", "advise", "Advise", priority=True),
    ]

    def compose(self) -> ComposeResult:
        app = self.app
        wl: Workload = app.workload
        yield Header()
        with Horizontal(id="setup-columns"):
            with Vertical(id="machine", classes="panel"):
                yield Static("detecting hardware and vLLM…", id="hardware", markup=False)
            with VerticalScroll(id="form", classes="panel"):
                with Horizontal(id="model-row"):
                    yield self._input(app.model_ref, "model id or local path", "model")
                    yield Button("Inspect", id="inspect", compact=True)
                yield Static("type a model id (e.g. Qwen/Qwen3-8B) and press Enter", id="model-info", markup=False)
                with Grid(id="workload-grid"):
                    yield Label("Workload")
                    yield Select([(k.value, k.value) for k in WorkloadKind], value=wl.kind.value, allow_blank=False, id="kind", compact=True)
                    yield Label("Prompts")
                    builtin = wl.prompt_source if wl.prompt_source in dict((v, k) for k, v in PROMPT_SOURCES) else "humaneval"
                    yield Select(PROMPT_SOURCES, value=builtin, allow_blank=False, id="source", compact=True)
                    yield Label("Prompt file")
                    yield self._input("" if builtin == wl.prompt_source else (wl.prompt_source or ""), "optional: your own prompts", "prompt_file")
                    yield Label("Concurrency")
                    yield self._input(str(wl.concurrency), "1", "concurrency")
                    yield Label("Output tokens")
                    yield self._input(str(wl.output_len), "256", "output_len")
                    yield Label("Temperature")
                    yield self._input(f"{wl.temperature:g}", "0", "temperature")
                    yield Label("Requests")
                    yield self._input(str(wl.num_prompts), "32", "num_prompts")
                yield Button("Advise ▶", id="advise", variant="primary")
        yield Footer()

    def _input(self, value: str, placeholder: str, id: str) -> Input:
        field = Input(value=value, placeholder=placeholder, id=id, compact=True)
        field.cursor_blink = self.app.cursor_blink
        return field

    def on_mount(self) -> None:
        self.query_one("#machine").border_title = "This machine"
        self.query_one("#form").border_title = "Model and workload"
        self.query_one("#model", Input).focus()
        if self.app.hardware is None:
            self.call_after_refresh(self.detect)  # paint the first frame before probing starts
        else:
            self.show_hardware(self.app.hardware)
        if self.app.model_profile is not None:
            self.show_model(self.app.model_profile)

    # ------------------------------------------------------------------ hardware

    @work(thread=True, exclusive=True, group="detect", exit_on_error=False)
    def detect(self) -> None:
        hardware = self.app.services.detect()
        self.app.call_from_thread(self.show_hardware, hardware)

    def show_hardware(self, hardware: HardwareProfile) -> None:
        self.app.hardware = hardware
        self.query_one("#hardware", Static).update("\n".join(hardware_lines(hardware)))

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
        profile = self.app.services.inspect_model(ref)
        self.app.call_from_thread(self.show_model, profile)

    def show_model(self, profile: ModelProfile) -> None:
        self.app.model_profile = profile
        self.app.model_ref = profile.id
        self.query_one("#model-info", Static).update("\n".join(model_lines(profile)))

    @on(Select.Changed, "#kind")
    def kind_changed(self, event: Select.Changed) -> None:
        source = DEFAULT_SOURCE.get(str(event.value))
        if source:
            self.query_one("#source", Select).value = source

    # ------------------------------------------------------------------ advice

    @on(Button.Pressed, "#advise")
    def action_advise(self) -> None:
        try:
            workload = parse_workload(
                str(self.query_one("#kind", Select).value),
                str(self.query_one("#source", Select).value),
                self.query_one("#concurrency", Input).value,
                self.query_one("#output_len", Input).value,
                self.query_one("#temperature", Input).value,
                self.query_one("#num_prompts", Input).value,
                self.query_one("#prompt_file", Input).value,
            )
        except InputError as err:
            self.app.show_error("Check the workload", err)
            return
        if self.app.hardware is None:
            self.app.notify("Still detecting hardware; try again in a moment.", severity="warning")
            return
        ref = self.query_one("#model", Input).value.strip()
        if self.app.model_profile is None or self.app.model_profile.id != ref:
            if not ref:
                self.app.show_error("No model given", InputError("the model field is empty", hint="type a Hugging Face id or a local path"))
                return
        self.app.workload = workload
        self.advise(ref, workload)

    @work(thread=True, exclusive=True, group="advise", exit_on_error=False)
    def advise(self, ref: str, workload: Workload) -> None:
        services = self.app.services
        profile = self.app.model_profile
        if profile is None or profile.id != ref:
            profile = services.inspect_model(ref)
            self.app.call_from_thread(self.show_model, profile)
        advice = services.advise(self.app.hardware, profile, workload)
        plan = services.plan(advice, profile, self.app.hardware, workload)
        self.app.call_from_thread(self.open_advice, advice, plan)

    def open_advice(self, advice, plan) -> None:
        from specadvisor.tui.screens.advice import AdviceScreen

        self.app.advice = advice
        self.app.plan = plan
        self.app.session = plan.session
        self.app.push_screen(AdviceScreen())
