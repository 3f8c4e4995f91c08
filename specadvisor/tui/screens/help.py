"""Help: how the advisor works and the keys of every screen."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP = """\
# specadvisor

**Setup → Advice → Sweep → Results.** specadvisor reads your hardware and vLLM, inspects the
model (MTP heads, published drafters), ranks the speculative-decoding methods that fit, then
*measures* them with real `vllm serve` runs and recommends the fastest measured one.

| Screen | Keys |
|---|---|
| everywhere | `F1` help · `F2` setup · `F3` sessions · `Ctrl+P` command palette (themes too) · `Ctrl+Q` quit |
| Setup | `Enter` in the model field inspects it · `Ctrl+A` advise |
| Advice | `Enter` expands a candidate · `a` add an arm (`ngram 6`) · `d` remove the arm · `Ctrl+S` start |
| Sweep | `l` server log · `/` search the log · `x` stop (finished arms stay saved) · `r` results |
| Results | `c` copy the serve command · `j` copy the JSON config · `s` save it · `e` report (.md or .html) · `b` bundle |
| Sessions | `Enter` open · `r` resume an interrupted sweep · `space` mark · `c` compare two · `i` import · `e` export · `d` delete |

Acceptance bars use an absolute 0-100% scale. Arms are ranked by measured throughput, never by
acceptance rate (it falls as N grows). Copying uses OSC 52: your terminal must allow it.
"""


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 100; max-width: 96%; height: 90%; border: thick $primary; background: $surface; padding: 0 1; }
    """
    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Markdown(HELP)
