"""The one redaction function: secrets out of any text, argv or JSON-like value before it is shown,
logged, stored or exported.

Used by the store and bundle export (via specadvisor.store.redact, which adds the Session-level
helpers), the server logs, `--json` output and every one-line error. Kept free of the domain and of
the store so the engine and the CLI can call it without pulling either in.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

REDACTED = "<redacted>"

# The last word(s) of a flag or key that holds a secret: --api-key, --hf-token, --aws-secret-access-key,
# --access-key, AWS_SECRET_ACCESS_KEY ... ("--num-speculative-tokens" ends in "tokens" and is left alone.)
_SECRET_WORD = r"(?:api[-_]?key|(?:secret[-_])?access[-_]?key(?:[-_]id)?|secret[-_]?key|private[-_]?key|key|token|secret|password|passwd|credentials?)"
_SECRET_FLAG = re.compile(rf"^--?(?:[a-z0-9]+[-_])*{_SECRET_WORD}$", re.IGNORECASE)
_SECRET_DICT_KEY = re.compile(
    r"^(?:[a-z0-9]+[-_])*(?:api[-_]?key|(?:secret[-_])?access[-_]?key(?:[-_]id)?|secret[-_]?key|private[-_]?key|token|secret|password|passwd|authorization|credentials?|cookie)$",
    re.IGNORECASE,
)
_ENV_NAME = r"[A-Z][A-Z0-9_]*(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|ACCESS_KEY(?:_ID)?|_KEY)[A-Z0-9_]*"
_ENV_KEY = re.compile(rf"^{_ENV_NAME}$")
# A value: a double- or single-quoted string (spaces allowed) or one unquoted word.
_VALUE = r"(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s\"']+)"
_NOT_DONE = r"(?!<redacted>|\"<redacted>|'<redacted>)"

_TEXT_RULES: list[tuple[re.Pattern[str], str]] = [
    # Authorization: Bearer xyz / "Authorization": "Basic xyz"
    (re.compile(r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?)(?:(?:bearer|basic|token)\s+)?[^\s\"',}]+"), r"\1" + REDACTED),
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{4,}"), r"\1" + REDACTED),
    # --api-key VALUE / --hf-token=VALUE / --aws-secret-access-key="a b" inside a command line
    (re.compile(rf"(?i)(--?(?:[a-z0-9]+[-_])*{_SECRET_WORD})(=|\s+){_NOT_DONE}{_VALUE}"), r"\1\2" + REDACTED),
    # the same as items of a printed list: ['--api-key', 'VALUE'] / ["--hf-token", "VALUE"]
    (re.compile(rf"(?i)([\"']--?(?:[a-z0-9]+[-_])*{_SECRET_WORD}[\"']\s*,\s*[\"']){_NOT_DONE}[^\"']+"), r"\1" + REDACTED),
    # Environment assignments: HF_TOKEN=..., env OPENAI_API_KEY="..." vllm serve, export AWS_SECRET_ACCESS_KEY=...
    (re.compile(rf"\b({_ENV_NAME})={_NOT_DONE}{_VALUE}"), r"\1=" + REDACTED),
    # api_key=value / "hf_token": "value" / 'api_key': ['value'] in JSON or Python reprs found in logs and notes
    (
        re.compile(
            r"(?i)(\b(?:[a-z0-9]+_)*(?:api[_-]?key|access[_-]?token|auth[_-]?token|hf[_-]?token|secret[_-]?key|"
            r"secret[_-]?access[_-]?key|access[_-]?key(?:[_-]id)?|client[_-]?secret|password)\b[\"']?\s*[:=]\s*\[?\s*[\"']?)"
            rf"{_NOT_DONE}[^\s\"',}}\]]+"
        ),
        r"\1" + REDACTED,
    ),
    # a bare "token"/"secret" only as a quoted key ("token": "...") so prose like "per token: 0.7" stays
    (re.compile(r"(?i)([\"'](?:token|secret)[\"']\s*:\s*[\"'])(?!<redacted>)[^\"']+"), r"\1" + REDACTED),
    # credentials inside URLs: http://user:pass@host, redis://:pass@host, ?token=...&key=...
    (re.compile(r"(\b[a-z][a-z0-9+.-]*://[^/\s:@]*:)(?!<redacted>)[^/\s@]+@", re.IGNORECASE), r"\1" + REDACTED + "@"),
    (
        re.compile(
            r"(?i)([?&;](?:[a-z0-9_-]*(?:token|key|secret|password|passwd|auth)|sig|signature|x-amz-signature|x-amz-credential)=)(?!<redacted>)[^&\s\"'#]+"
        ),
        r"\1" + REDACTED,
    ),
    # Well-known token shapes, wherever they appear
    (re.compile(r"\bhf_[A-Za-z0-9]{20,}"), REDACTED),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"), REDACTED),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"), REDACTED),
    (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"), REDACTED),
    (re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"), REDACTED),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"), REDACTED),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), REDACTED),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{35}"), REDACTED),
    (re.compile(r"\bnpm_[A-Za-z0-9]{36}"), REDACTED),
    # JSON Web Tokens: three base64url parts, the first an encoded JSON object ("eyJ")
    (re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}"), REDACTED),
]


def _scoped(pattern: re.Pattern[str]) -> str:
    """A rule's pattern as one alternative of a combined regex (its flags scoped to it)."""
    text = pattern.pattern
    ignore_case = bool(pattern.flags & re.IGNORECASE)
    if text.startswith("(?i)"):
        text, ignore_case = text[4:], True
    return f"(?i:{text})" if ignore_case else f"(?:{text})"


# One search tells whether any rule could apply: most strings (ids, labels, numbers as text) hold
# nothing secret, and a 100,000-arm bundle must not pay for every rule on every string.
_ANY_RULE = re.compile("|".join(_scoped(pattern) for pattern, _ in _TEXT_RULES))
# ANSI sequences and every control character but tab and newline (a stored \r could hide the start
# of a line when shown; bundles with one are refused at import).
_CONTROL = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_HOME_PATTERNS = [re.compile(r"/home/[^/\s\"']+"), re.compile(r"/Users/[^/\s\"']+"), re.compile(r"(?i)[A-Z]:\\Users\\[^\\\s\"']+")]


def redact(value: Any, *, redact_paths: bool = False) -> Any:
    """Secrets removed from a string, an argv (list of strings) or any JSON-like value; the one entry
    point for logs, stdout, `--json`, errors, the store and exports."""
    if isinstance(value, str):
        return redact_text(value, redact_paths=redact_paths)
    return redact_value(value, redact_paths=redact_paths)


def redact_text(text: str, *, redact_paths: bool = False) -> str:
    text = _CONTROL.sub("", text)
    if _ANY_RULE.search(text):
        for pattern, replacement in _TEXT_RULES:
            text = pattern.sub(replacement, text)
    if redact_paths:
        text = _strip_home(text)
    return text


def redact_argv(argv: list[str], *, redact_paths: bool = False) -> list[str]:
    """Redact the value after a secret flag (`--api-key VALUE`) and secrets inside each item."""
    out: list[str] = []
    hide_next = False
    for item in argv:
        if hide_next:
            out.append(REDACTED)
            hide_next = False
            continue
        hide_next = bool(_SECRET_FLAG.match(item))
        out.append(redact_text(item, redact_paths=redact_paths))
    return out


def redact_value(value: Any, *, redact_paths: bool = False) -> Any:
    if isinstance(value, str):
        return redact_text(value, redact_paths=redact_paths)
    if isinstance(value, (list, tuple)):
        if value and all(isinstance(v, str) for v in value):
            return redact_argv(list(value), redact_paths=redact_paths)
        return [redact_value(v, redact_paths=redact_paths) for v in value]
    if isinstance(value, dict):
        return {k: REDACTED if _secret_key(k) and isinstance(v, str) and v else redact_value(v, redact_paths=redact_paths) for k, v in value.items()}
    return value


def _secret_key(key: object) -> bool:
    return isinstance(key, str) and _secret_key_name(key)


@lru_cache(maxsize=4096)
def _secret_key_name(key: str) -> bool:
    """Keys repeat (every arm has the same ones): each name is matched once."""
    return bool(_SECRET_DICT_KEY.match(key) or _ENV_KEY.match(key))


def _strip_home(text: str) -> str:
    home = str(Path.home())
    if home not in ("/", ""):
        text = re.sub(re.escape(home) + r"(?=/|\\|$|[\s\"'])", "~", text)
    for pattern in _HOME_PATTERNS:
        text = pattern.sub("~", text)
    return text
