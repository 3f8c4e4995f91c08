"""Reports of a teammate's session cannot carry HTML, forge lines or hide a command."""

from __future__ import annotations

from specadvisor.domain import ArmStatus
from specadvisor.report import html, markdown
from store_samples import make_session


def _hostile():
    session = make_session()
    session.model = "org/m<script>alert(1)</script>\n# Forged heading"
    session.arms[1].label = "ngram | forged | cells"
    session.results[1].error = "boom <img src=x onerror=alert(1)>"
    session.results[1].status = ArmStatus.failed
    session.provenance.origin = "imported"
    return session


def _outside_code_blocks(text: str) -> str:
    kept, fenced = [], False
    for row in text.splitlines():
        if row.startswith("```"):
            fenced = not fenced
        elif not fenced:
            kept.append(row)
    return "\n".join(kept)


def test_markdown_report_escapes_everything_from_the_session():
    text = markdown(_hostile())
    prose = _outside_code_blocks(text)
    assert "<script>" not in prose and "<img" not in prose  # inside a code block it is inert text
    assert "\n# Forged heading" not in text and "Forged heading" in text  # shown, on no line of its own
    assert "ngram \\| forged \\| cells" in text


def test_html_report_escapes_everything_from_the_session():
    text = html(_hostile())
    assert "<script>alert" not in text and "<img src" not in text
    assert "&lt;script&gt;" in text
