"""A Markdown document that escapes every value by construction.

Text enters only through methods that escape it for its place: prose, list items and table cells
through `textsafe.markdown` (HTML tags neutralised, no heading, list or fence can start, newlines,
control and bidi characters shown as escapes), code through a fence or a span it cannot close.
specadvisor's own syntax (`#`, `- `, `**`, `|`) is written by the methods and never concatenated
with a value, so a field added to the report later is escaped whether its author remembered or not:
a bundle's arm label `<img src=x onerror=...>\\n# Heading` stays inert text on its line.
"""

from __future__ import annotations

import re

from specadvisor import textsafe


class Code:
    """A piece of a paragraph shown as an inline code span (a fence of backticks it cannot close)."""

    def __init__(self, value: object):
        self.value = value

    def render(self) -> str:
        text = textsafe.line(self.value)
        longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
        fence = "`" * (longest + 1)
        pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
        return f"{fence}{pad}{text}{pad}{fence}"


Piece = object  # any value (escaped as text) or a Code span


class MarkdownDoc:
    def __init__(self) -> None:
        self._lines: list[str] = []

    def blank(self) -> None:
        self._lines.append("")

    def heading(self, level: int, *pieces: Piece) -> None:
        self._lines.append("#" * max(1, min(6, level)) + " " + _inline(pieces))

    def para(self, *pieces: Piece) -> None:
        self._lines.append(_inline(pieces))

    def bullet(self, *pieces: Piece) -> None:
        self._lines.append("- " + _inline(pieces))

    def fact(self, key: object, value: object) -> None:
        """`- **key**: value`, both escaped."""
        self._lines.append(f"- **{textsafe.markdown(key)}**: {textsafe.markdown(value, block_start=False)}")

    def table(self, columns: list[str], rows: list[list[str]]) -> None:
        self._lines.append("| " + " | ".join(textsafe.markdown(col, block_start=False) for col in columns) + " |")
        self._lines.append("|" + "---|" * len(columns))
        self._lines += ["| " + " | ".join(textsafe.markdown(cell, block_start=False) for cell in row) + " |" for row in rows]

    def code_block(self, value: object, info: str = "", *, single_line: bool = False) -> None:
        self._lines += textsafe.markdown_block(value, re.sub(r"[^a-z]", "", info), single_line=single_line)

    def text(self) -> str:
        return "\n".join(self._lines) + "\n"


def _inline(pieces: tuple[Piece, ...]) -> str:
    out = []
    for i, piece in enumerate(pieces):
        out.append(piece.render() if isinstance(piece, Code) else textsafe.markdown(piece, block_start=i == 0))
    return "".join(out)
