"""`needs_redaction` lets a huge value skip the redaction rules when none of them can match. It is a
shortcut over the rules, so it must never say "nothing to redact" where a rule would redact: every
string literal in this test suite that any rule changes (the secret corpora of tests/security and
tests/hostile, the log fixtures, ...) must be flagged, alone and inside a JSON-like value. A new rule
whose secrets hold none of the shortcut's words fails here, not in a user's export."""

from __future__ import annotations

import ast
from pathlib import Path

from specadvisor.redact import _text_rules, needs_redaction, redact, redact_text

TESTS = Path(__file__).resolve().parents[1]


def _literals() -> set[str]:
    found: set[str] = set()
    for path in TESTS.rglob("*.py"):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        found.update(node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str) and 0 < len(node.value) < 4000)
    for path in (TESTS / "fixtures").rglob("*"):
        if path.is_file() and path.suffix in (".log", ".txt") and path.stat().st_size < 200_000:
            found.update(line for line in path.read_text(encoding="utf-8", errors="replace").splitlines() if line)
    return found


def test_every_string_a_rule_redacts_is_flagged_by_the_shortcut():
    secrets = [s for s in _literals() if redact_text(s) != s]
    assert len(secrets) > 100, len(secrets)  # the corpus is not empty: the check means something
    missed = [s for s in secrets if not needs_redaction(s) or not needs_redaction({"arms": [{"label": "x", "notes": [s]}]})]
    assert not missed, missed[:10]


def test_what_each_rule_matches_is_flagged_on_its_own():
    """The text a rule matches, cut out of its sentence (no neighbouring word to lean on)."""
    matched = {m.group(0) for s in _literals() for pattern, _ in _text_rules() for m in pattern.finditer(s)}
    assert len(matched) > 50, len(matched)
    missed = sorted(m for m in matched if not needs_redaction(m))
    assert not missed, missed[:10]


def test_a_value_with_nothing_to_redact_is_returned_as_it_is():
    value = {"arms": [{"id": f"ngram-n{n}-c{c}", "label": f"n-gram N={n}", "throughput": 1.5 * n} for n in range(1, 9) for c in (1, 8)]}
    assert not needs_redaction(value)
    assert redact(value) is value
