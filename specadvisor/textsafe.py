"""Make a string from outside (a bundle, an endpoint, a model or file name) safe for where it is shown.

One function per destination, so a call site says where the text goes:

- `line`: one terminal line. Every control character (ESC/CSI/OSC sequences, `\\r`, `\\n`, tabs,
  C1 codes, bidi overrides, line separators) is shown as a visible escape such as `\\x1b` or `\\n`,
  so a value cannot clear the screen, write the clipboard (OSC 52), or hide `curl ...|sh` on a
  second line behind a harmless first one.
- `markup`: `line` + Rich markup escaping (`[/]`, `[link=...]`, `[@click=...]` show literally), for
  rich and for Textual widgets that render through Rich (DataTable cells).
- `tui_markup`: `line` + Textual's own markup escaping, for titles and other Content markup: every
  `[` escaped, since Textual's parser fails on a lone `ok [/` or `[link=http://x` (Rich's escape
  leaves both alone) and applies `[$accent]`.
- `markdown`: `line` + Markdown punctuation and HTML escaped (no raw `<script>` passes through);
  `markdown_block` for a fenced code block the content cannot close.
- `html`: `html.escape` of the text with control characters made visible.

Free of Textual (the TUI imports this, not the other way round).
"""

from __future__ import annotations

import html as _html
import re

# C0 (except nothing), DEL, C1, bidi embeddings/overrides/isolates, line and paragraph separators,
# zero-width and BOM characters that can disguise text, and the characters that render as nothing
# (or as a blank) yet are letters to a program: the soft hyphen, the combining grapheme joiner, the
# Hangul fillers, the Khmer inherent vowels, the Mongolian variation selectors, the braille blank,
# variation selectors (U+FE00-FE0F and the supplement) and the Unicode tag characters (U+E0000-E007F,
# which carry a hidden ASCII copy of any text).
# The one list: the shell renderer (vllm_command.shell_word) escapes the same characters.
UNSAFE_CHARACTERS = re.compile(
    "[\x00-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f"
    "\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\x1b": "\\x1b"}
# Inline constructs (emphasis, code, links, tables, strike-through); `<` and `&` become entities.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
# Block constructs only matter at the start of the text: headings, quotes, lists, rules.
# An ordered-list marker is digits then `.` or `)`: the punctuation is escaped, never the digit
# (CommonMark escapes only punctuation, so `\0.26.0` would show its backslash). `>` opens a quote
# only there: elsewhere it stays as typed, so the file reads "100 -> 97" (`<` is an entity, so no
# tag or autolink can open around it).
_MARKDOWN_LEAD = re.compile(r"^(\s*\d*)([#+=.)>-])")


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def line(value: object, max_chars: int | None = None) -> str:
    """One safe terminal line: control characters shown as escapes, optionally cut to max_chars."""
    text = UNSAFE_CHARACTERS.sub(_visible, "" if value is None else str(value))
    if max_chars is not None and len(text) > max_chars:
        text = text[: max(0, max_chars - 1)] + "…"
    return text


def lines(value: object) -> str:
    """Several safe terminal lines: `\\n` kept as a line break, every other control character escaped."""
    return "\n".join(line(part) for part in ("" if value is None else str(value)).split("\n"))


def markup(value: object, max_chars: int | None = None) -> str:
    """A single line for Rich or Textual markup: brackets that would be tags are escaped."""
    from rich.markup import escape

    return escape(line(value, max_chars))


def tui_markup(value: object, max_chars: int | None = None) -> str:
    """A single line for Textual's markup (border titles, collapsible titles, notifications): cut
    first, then every `[` escaped as `\\[`, so no piece of it, whole or cut, can open a tag."""
    return line(value, max_chars).replace("[", "\\[")


def markdown(value: object, *, block_start: bool = True) -> str:
    """A single line of Markdown text: inline punctuation backslash-escaped, a leading block marker
    escaped (unless the text sits inside a table cell: block_start=False), `<` and `&` as
    entities (no raw HTML such as `<script>` passes through)."""
    text = _MARKDOWN_SPECIAL.sub(r"\\\1", line(value))
    if block_start:
        text = _MARKDOWN_LEAD.sub(r"\1\\\2", text)
    return text.replace("&", "&amp;").replace("<", "&lt;")


def markdown_block(value: object, info: str = "", *, single_line: bool = False) -> list[str]:
    """A fenced code block holding `value` (one line per input line, each made safe by `line`;
    all on one line with single_line, for a command), fenced with more backticks than any run
    inside, so the content cannot close it."""
    text = "" if value is None else str(value)
    body = [line(text)] if single_line else [line(part) for part in text.split("\n")]
    longest = max((len(run) for part in body for run in re.findall(r"`+", part)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + info, *body, fence]


def html(value: object) -> str:
    """Text for HTML element content or a quoted attribute."""
    return _html.escape(line(value), quote=True)
