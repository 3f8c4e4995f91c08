"""Strip secrets (and optionally home paths) from a session before it leaves the machine.

Works on the session's JSON form, so a field added to the domain later is covered without
changes here: every string is scanned, every list of strings is treated as a possible argv, and
free-form dict keys that name a credential lose their value.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from specadvisor.domain import Session

M = TypeVar("M", bound=BaseModel)

REDACTED = "<redacted>"

# A flag whose last word names a secret: --api-key, --hf-token, --auth-token, --password ...
# ("--num-speculative-tokens" ends in "tokens" and is left alone.)
_SECRET_FLAG = re.compile(r"^--?(?:[a-z0-9]+[-_])*(?:api[-_]?key|key|token|secret|password|passwd|credentials?)$", re.IGNORECASE)
_SECRET_DICT_KEY = re.compile(r"^(?:[a-z0-9]+[-_])*(?:api[-_]?key|token|secret|password|passwd|authorization|credentials?|cookie)$", re.IGNORECASE)

_TEXT_RULES: list[tuple[re.Pattern[str], str]] = [
    # Authorization: Bearer xyz / "Authorization": "Basic xyz"
    (re.compile(r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?)(?:(?:bearer|basic|token)\s+)?[^\s\"',}]+"), r"\1" + REDACTED),
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{4,}"), r"\1" + REDACTED),
    # --api-key VALUE / --hf-token=VALUE inside a command line
    (
        re.compile(r"(?i)(--?(?:[a-z0-9]+[-_])*(?:api[-_]?key|token|secret|password|passwd|credentials?))(=|\s+)(?!<redacted>)[\"']?[^\s\"']+[\"']?"),
        r"\1\2" + REDACTED,
    ),
    # Environment assignments: HF_TOKEN=..., OPENAI_API_KEY=..., export AWS_SECRET_ACCESS_KEY=...
    (
        re.compile(r"\b([A-Z][A-Z0-9_]*(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|ACCESS_KEY(?:_ID)?|_KEY)[A-Z0-9_]*)=(?!<redacted>)[^\s\"']+"),
        r"\1=" + REDACTED,
    ),
    # api_key=value / "hf_token": "value" in JSON or Python reprs found in logs and notes
    (
        re.compile(
            r"(?i)(\b(?:[a-z0-9]+_)*(?:api[_-]?key|access[_-]?token|auth[_-]?token|hf[_-]?token|secret[_-]?key|client[_-]?secret|password)\b[\"']?\s*[:=]\s*[\"']?)(?!<redacted>)[^\s\"',}]+"
        ),
        r"\1" + REDACTED,
    ),
    # a bare "token"/"secret" only as a quoted key ("token": "...") so prose like "per token: 0.7" stays
    (re.compile(r"(?i)([\"'](?:token|secret)[\"']\s*:\s*[\"'])(?!<redacted>)[^\"']+"), r"\1" + REDACTED),
    # credentials inside URLs: http://user:pass@host, ?token=...&key=...
    (re.compile(r"(\b[a-z][a-z0-9+.-]*://[^/\s:@]+:)(?!<redacted>)[^/\s@]+@", re.IGNORECASE), r"\1" + REDACTED + "@"),
    (re.compile(r"(?i)([?&](?:token|key|api[_-]?key|access[_-]?token|sig|signature)=)(?!<redacted>)[^&\s\"'#]+"), r"\1" + REDACTED),
    # Well-known token shapes, wherever they appear
    (re.compile(r"\bhf_[A-Za-z0-9]{20,}"), REDACTED),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"), REDACTED),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"), REDACTED),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"), REDACTED),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), REDACTED),
]
_CONTROL = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_HOME_PATTERNS = [re.compile(r"/home/[^/\s\"']+"), re.compile(r"/Users/[^/\s\"']+"), re.compile(r"(?i)[A-Z]:\\Users\\[^\\\s\"']+")]


def redact_text(text: str, *, redact_paths: bool = False) -> str:
    text = _CONTROL.sub("", text)
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
    if isinstance(value, list):
        if value and all(isinstance(v, str) for v in value):
            return redact_argv(value, redact_paths=redact_paths)
        return [redact_value(v, redact_paths=redact_paths) for v in value]
    if isinstance(value, dict):
        return {
            k: REDACTED if _SECRET_DICT_KEY.match(k) and isinstance(v, str) and v else redact_value(v, redact_paths=redact_paths)
            for k, v in value.items()
        }
    return value


def scrub(model: M) -> M:
    """A copy of any domain model with secrets removed: what the store writes to disk."""
    return type(model).model_validate(redact_value(model.model_dump(mode="json")))


def redact_session(session: Session, *, redact_paths: bool = False) -> Session:
    """A copy of `session` with secrets removed; ids, numbers and structure are unchanged."""
    data = session.model_dump(mode="json")
    session_id = data.pop("id")
    clean = redact_value(data, redact_paths=redact_paths)
    return Session.model_validate({"id": session_id, **clean})


def _strip_home(text: str) -> str:
    home = str(Path.home())
    if home not in ("/", ""):
        text = re.sub(re.escape(home) + r"(?=/|\\|$|[\s\"'])", "~", text)
    for pattern in _HOME_PATTERNS:
        text = pattern.sub("~", text)
    return text
