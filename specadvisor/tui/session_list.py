"""Which saved sessions the Sessions screen lists, and in what order: a filter (`/`, words matched in any
column, as k9s and lazygit filter their lists) and a sort by column (`s` the next column, `S` the other
way, a header click that column). Plain functions over the store's summaries; no Textual here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from specadvisor.tui.format import SESSION_COLUMNS, summary_cells

IMPORTED_MARK = "⇣"  # beside a session imported from a bundle (read-only evidence), explained under the table
SORTABLE = tuple(name for name, _ in SESSION_COLUMNS)
NEWEST_FIRST = "created (UTC)"
_DESCENDING_FIRST = {"created (UTC)", "best", "arms"}  # the newest, the fastest, the largest first


def summary_imported(summary: Any) -> bool:
    return str(getattr(summary, "origin", "local")) == "imported"


def matches(summary: Any, needle: str) -> bool:
    """Every word of `needle` appears (any case) in one of the session's columns, its GPU, vLLM version, best
    arm or origin ('imported'): `qwen h100` keeps the Qwen sessions measured on an H100."""
    words = needle.lower().split()
    if not words:
        return True
    extra = [getattr(summary, name, None) for name in ("gpu", "vllm_version", "best_arm", "origin", "model", "name")]
    haystack = " ".join([*summary_cells(summary).values(), *(str(e) for e in extra if e)]).lower()
    return all(word in haystack for word in words)


def _key(column: str) -> Callable[[Any], tuple[bool, Any]]:
    """The sort key of a column: numbers as numbers, dates as dates, text without case; an empty cell last."""

    def key(summary: Any) -> tuple[bool, Any]:
        if column == "best":
            value: Any = getattr(summary, "best_speedup", None)
        elif column == "arms":
            arms = getattr(summary, "arms", 0)
            value = len(arms) if isinstance(arms, list) else arms
        elif column == "created (UTC)":
            value = getattr(summary, "created_at", None)
            value = (value if value.tzinfo else value.replace(tzinfo=UTC)) if isinstance(value, datetime) else None
        else:
            value = summary_cells(summary)[column].lower() or None
        return (value is None, value if value is not None else 0)

    return key


@dataclass(frozen=True)
class SessionView:
    """The filter and the sort the list is shown with."""

    filter: str = ""
    column: str = NEWEST_FIRST
    descending: bool = True

    def apply(self, summaries: Sequence[Any]) -> list[Any]:
        """The sessions that match, sorted; an empty cell sorts last whichever the direction."""
        kept = [s for s in summaries if matches(s, self.filter)]
        key = _key(self.column)
        present = sorted((s for s in kept if not key(s)[0]), key=lambda s: key(s)[1], reverse=self.descending)
        return present + [s for s in kept if key(s)[0]]

    def sorted_by(self, column: str) -> SessionView:
        """Sorted by `column`: the same column again turns the order round, another starts at its natural end."""
        if column == self.column:
            return replace(self, descending=not self.descending)
        return replace(self, column=column, descending=column in _DESCENDING_FIRST)

    def next_column(self, shown: Sequence[str]) -> SessionView:
        """The next of the `shown` columns to sort by (after the last, the first)."""
        order = [c for c in SORTABLE if c in shown] or [NEWEST_FIRST]
        following = order[(order.index(self.column) + 1) % len(order)] if self.column in order else order[0]
        return self.sorted_by(following)

    def reversed(self) -> SessionView:
        return replace(self, descending=not self.descending)

    def title(self, shown: int, total: int) -> str:
        """`Saved sessions · sorted by best ↓ · filter "qwen": 3 of 10`."""
        arrow = "↓" if self.descending else "↑"
        text = f"Saved sessions · sorted by {self.column} {arrow}"
        if self.filter:
            text += f' · filter "{self.filter}": {shown} of {total}'
        return text
