"""Chart widgets: thin Textual wrappers that colour the rows drawn by specadvisor.charts."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from specadvisor.charts import ThroughputPoint, acceptance_rows, scale_axis, throughput_rows


def acceptance_style(rate: float | None) -> str:
    if rate is None:
        return "dim"
    if rate >= 0.7:
        return "green"
    if rate >= 0.4:
        return "yellow"
    return "red"


class AcceptanceChart(Widget):
    """Per-position acceptance on an absolute 0-100% scale (never auto-scaled)."""

    DEFAULT_CSS = """
    AcceptanceChart { height: auto; min-height: 3; border: round $primary 60%; padding: 0 1; }
    """

    rates: reactive[tuple[float, ...]] = reactive(tuple, layout=True)
    mean_length: reactive[float | None] = reactive(None)
    empty_text: reactive[str] = reactive("waiting for the first speculative metrics…")  # what an empty chart says

    def on_mount(self) -> None:
        self.border_title = "acceptance per draft position"

    def watch_mean_length(self, value: float | None) -> None:
        self.border_subtitle = f"mean acceptance length {value:.2f}" if value is not None else ""

    def render(self) -> Text:
        width = max(20, self.content_size.width)
        rows = acceptance_rows(list(self.rates), width)
        if not rows:
            return Text(self.empty_text, style="dim italic")
        text = Text()
        for row in rows:
            text.append(row.label + " ", style="bold")
            text.append(row.bar, style=acceptance_style(row.fraction))
            text.append(" " + row.value + "\n")
        text.append(scale_axis(width, len(rows[0].label)), style="dim")
        return text


class ThroughputChart(Widget):
    """Output tokens/s per arm, measured bars with predictions beside them, from zero."""

    DEFAULT_CSS = """
    ThroughputChart { height: auto; min-height: 3; border: round $secondary 60%; padding: 0 1; }
    """

    points: reactive[tuple[ThroughputPoint, ...]] = reactive(tuple, layout=True)

    def on_mount(self) -> None:
        self.border_title = "throughput vs N"

    def render(self) -> Text:
        width = max(30, self.content_size.width)
        rows = throughput_rows(list(self.points), width)
        if not rows:
            return Text("no arms yet", style="dim italic")
        text = Text()
        for i, (row, point) in enumerate(zip(rows, self.points, strict=True)):
            baseline = point.label.startswith("baseline")
            text.append(row.label + " ", style="bold")
            text.append(row.bar, style="grey62" if baseline else "cyan")
            text.append(" " + row.value)
            if row.secondary:
                text.append(" " + row.secondary, style="dim")
            if i < len(rows) - 1:
                text.append("\n")
        return text
