"""Help: how the advisor works and the keys of every screen, generated from the live key bindings."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

from specadvisor.tui.screens.base import AppScreen

INTRO = """\
# specadvisor

**Setup → Advice → Sweep → Results.** specadvisor reads your hardware and vLLM, inspects the
model (MTP heads, published drafters), ranks the speculative-decoding methods that fit, then
*measures* them with real `vllm serve` runs and recommends the fastest measured one.
"""

OUTRO = """
**Plan within** sizes the plan to a time (the servers run at once, `p`, count); it is not the CLI's
`--budget`, which is extra measuring time to reach a decision. Keys are read from the screens' own
bindings, so this table is what the program does. In Setup,
`Enter` in the model field inspects it; in Advice, `Enter` expands a candidate. Acceptance bars use
an absolute 0-100% scale. Arms are ranked by measured throughput, never by acceptance rate (it falls
as N grows). Copying uses OSC 52: your terminal must allow it.
"""


def _screens() -> list[tuple[str, type[AppScreen]]]:
    from specadvisor.tui.screens.advice import AdviceScreen
    from specadvisor.tui.screens.results import ResultsScreen
    from specadvisor.tui.screens.sessions import CompareScreen, SessionsScreen
    from specadvisor.tui.screens.setup import SetupScreen
    from specadvisor.tui.screens.sweep import SweepScreen
    from specadvisor.tui.screens.train import TrainScreen

    return [("Setup", SetupScreen), ("Advice", AdviceScreen), ("Train", TrainScreen), ("Sweep", SweepScreen), ("Results", ResultsScreen),
            ("Sessions", SessionsScreen), ("Compare", CompareScreen)]  # fmt: skip


def key_rows(app: App[Any]) -> list[tuple[str, str]]:
    """(screen, "`key` what · ...") for the app and every screen, from their BINDINGS."""

    def describe(bindings: Iterable[BindingType]) -> str:
        parts: list[str] = []
        for item in bindings:
            binding = item if isinstance(item, Binding) else Binding(*item)
            if not binding.description or (not binding.show and binding.action.startswith("app.")):
                continue  # a screen's hidden copy of an app key (F2, F3) is listed once, under "everywhere"
            keys = "/".join(app.get_key_display(Binding(k.strip(), binding.action)) for k in binding.key.split(","))
            parts.append(f"`{keys}` {(binding.tooltip or binding.description).lower()}")
        return " · ".join(parts)

    rows = [("everywhere", describe(type(app).BINDINGS) + " · `ctrl+p` command palette (themes too)")]
    rows += [(name, describe(screen.BINDINGS)) for name, screen in _screens()]
    return rows


def help_markdown(app: App[Any]) -> str:
    table = "| Screen | Keys |\n|---|---|\n" + "\n".join(f"| {name} | {keys} |" for name, keys in key_rows(app))
    return INTRO + "\n" + table + "\n" + OUTRO


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 100; max-width: 96%; height: 90%; border: thick $primary; background: $surface; padding: 0 1; }
    """
    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Markdown(help_markdown(self.app))
