"""`needs_redaction` lets a huge value skip the redaction rules when none of them can match. It is a
shortcut over the rules, so it must never say "nothing to redact" where a rule would redact: every
string literal in this test suite that any rule changes (the secret corpora of tests/security and
tests/hostile, the log fixtures, ...) must be flagged, alone and inside a JSON-like value. A new rule
whose secrets hold none of the shortcut's words fails here, not in a user's export."""

from __future__ import annotations

import ast
from pathlib import Path

from specadvisor.redact import _text_rules, forget_secrets, json_needs_redaction, needs_redaction, redact, redact_text, remember_secret

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


def _encodings(value: object) -> list[str]:
    """The JSON texts print_json and the store check: pydantic-core's, ASCII-only and not, indented and not."""
    from pydantic_core import to_json

    return [to_json(value, indent=indent, ensure_ascii=ascii_only).decode("utf-8") for ascii_only in (True, False) for indent in (None, 2)]


def test_every_string_a_rule_redacts_is_flagged_in_json_text():
    """The JSON-text shortcut (print_json, the store) flags everything the value shortcut flags:
    a secret as a value, as an argv item, and under a key named like a field ("num_tokens")."""
    secrets = [s for s in _literals() if redact_text(s) != s]
    assert len(secrets) > 100, len(secrets)
    missed = [
        s
        for s in secrets
        for value in (s, {"arms": [{"label": "x", "num_tokens": 3, "notes": [s]}]}, {"token_count": s})
        for text in _encodings(value)
        if not json_needs_redaction(text)
    ]
    assert not missed, missed[:10]


def test_a_secret_named_key_or_a_control_character_is_flagged_in_json_text():
    flagged = [{"speculative_config": {"hf_token": "abc"}}, {"extra": {"HF_TOKEN_FILE": "x"}}, {"label": "a\x1b[2Jb"}, {"label": "a\u202eb"}]
    flagged += [{"label": "a\x85b"}, {"label": "a\x7fb"}, {"label": "a\rb"}, {"é": "x", "Api-Key": "y"}]
    missed = [value for value in flagged for text in _encodings(value) if not json_needs_redaction(text)]
    assert not missed, missed


def test_a_remembered_value_is_flagged_in_json_text_however_it_is_escaped():
    secret = 'pl4in "qu0ted" välue\\'
    remember_secret(secret)
    try:
        missed = [text for text in _encodings({"notes": f"echoed {secret} back"}) if not json_needs_redaction(text)]
    finally:
        forget_secrets()
    assert not missed, missed


def test_json_text_with_nothing_to_redact_is_not_flagged():
    value = {"arms": [{"id": f"ngram-n{n}-c{c}", "label": f"n-gram N={n} é", "num_speculative_tokens": n, "x": 1.5 * n} for n in range(1, 9) for c in (1, 8)]}
    assert not needs_redaction(value)
    assert not any(json_needs_redaction(text) for text in _encodings(value))
