"""Modal dialogs: the one error modal every worker failure ends in, a confirmation, a prompt."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from specadvisor.errors import SpecAdvisorError


def describe_error(error: BaseException) -> tuple[str, str]:
    """(what happened, what to do) for any exception: SpecAdvisorError carries both."""
    if isinstance(error, SpecAdvisorError):
        return error.message, error.hint or "see the message above"
    return f"{type(error).__name__}: {error}", "this is a bug in specadvisor; please report it with the steps that led here"


class ErrorModal(ModalScreen[None]):
    DEFAULT_CSS = """
    ErrorModal { align: center middle; }
    ErrorModal > Vertical { width: 70; max-width: 95%; height: auto; border: thick $error; background: $surface; padding: 1 2; }
    ErrorModal #error-title { text-style: bold; color: $error; margin-bottom: 1; }
    ErrorModal #error-hint { color: $text-muted; margin-top: 1; }
    ErrorModal Button { margin-top: 1; }
    """
    BINDINGS = [Binding("escape,enter", "dismiss", "Close")]

    def __init__(self, title: str, error: BaseException):
        super().__init__()
        self.title_text = title
        self.message, self.hint = describe_error(error)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text, id="error-title")
            yield Static(self.message, id="error-message", markup=False)
            yield Static(f"What to do: {self.hint}", id="error-hint", markup=False)
            yield Button("Close", variant="error", id="close")

    def on_button_pressed(self) -> None:
        self.dismiss()


class ConfirmModal(ModalScreen[bool]):
    DEFAULT_CSS = """
    ConfirmModal { align: center middle; }
    ConfirmModal > Vertical { width: 64; max-width: 95%; height: auto; border: thick $warning; background: $surface; padding: 1 2; }
    ConfirmModal Horizontal { height: auto; margin-top: 1; }
    ConfirmModal Button { margin-right: 2; }
    """
    BINDINGS = [Binding("y", "answer(True)", "Yes"), Binding("n,escape", "answer(False)", "No")]

    def __init__(self, question: str, yes: str = "Yes"):
        super().__init__()
        self.question, self.yes = question, yes

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question, markup=False)
            with Horizontal():
                yield Button(self.yes, variant="warning", id="yes")
                yield Button("Cancel", id="no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)


class PromptModal(ModalScreen[str | None]):
    """Ask for one line of text (a file path, an arm "method N"); None when cancelled."""

    DEFAULT_CSS = """
    PromptModal { align: center middle; }
    PromptModal > Vertical { width: 70; max-width: 95%; height: auto; border: thick $primary; background: $surface; padding: 1 2; }
    PromptModal Input { margin-top: 1; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, question: str, value: str = "", placeholder: str = ""):
        super().__init__()
        self.question, self.value, self.placeholder = question, value, placeholder

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question, markup=False)
            field = Input(value=self.value, placeholder=self.placeholder, id="prompt-input")
            field.cursor_blink = getattr(self.app, "cursor_blink", True)
            yield field

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class InfoModal(ModalScreen[None]):
    """A titled block of text to read and close (the ranking of an exported GPU plan)."""

    DEFAULT_CSS = """
    InfoModal { align: center middle; }
    InfoModal > Vertical { width: 90; max-width: 96%; height: auto; max-height: 90%; border: thick $primary; background: $surface; padding: 1 2; }
    InfoModal #info-title { text-style: bold; color: $text-accent; margin-bottom: 1; }
    """
    BINDINGS = [Binding("escape,enter,q", "dismiss", "Close")]

    def __init__(self, title: str, text: str):
        super().__init__()
        self.title_text, self.text = title, text

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.title_text, id="info-title", markup=False)
            yield Static(self.text, id="info-text", markup=False)
