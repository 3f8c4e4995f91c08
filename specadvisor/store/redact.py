"""Strip secrets (and optionally home paths) from a session before it is stored or leaves the machine.

The patterns live in specadvisor.redact (the one redaction function, shared with logs, stdout and
errors); this module applies them to domain models. Works on the session's JSON form, so a field
added to the domain later is covered without changes here: every string is scanned, every list of
strings is treated as a possible argv, and free-form dict keys that name a credential lose their value.
"""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from specadvisor.domain import Session
from specadvisor.redact import REDACTED, redact, redact_argv, redact_entries, redact_text, redact_value

__all__ = ["REDACTED", "redact", "redact_argv", "redact_session", "redact_text", "redact_value", "scrub"]

M = TypeVar("M", bound=BaseModel)


def scrub(model: M) -> M:
    """A copy of any domain model with secrets removed: what the store writes to disk."""
    return type(model).model_validate(redact_value(model.model_dump(mode="json")))


def redact_session(session: Session, *, redact_paths: bool = False) -> Session:
    """A copy of `session` with secrets removed; ids, numbers and structure are unchanged."""
    if not redact_paths:
        return _redact_fields(session)
    data = session.model_dump(mode="json")
    session_id = data.pop("id")
    clean = redact_value(data, redact_paths=redact_paths)
    return Session.model_validate({"id": session_id, **clean})


def _redact_fields(session: Session) -> Session:
    """redact_session() without home paths, field by field (redact_entries): a field whose own JSON
    holds nothing secret-shaped is kept as it is, so a verdict saying "256 output tokens" does not send
    100,000 arms and results through redaction (16 s)."""
    fields, changed = redact_entries({name: getattr(session, name) for name in type(session).model_fields}, to_jsonable_python, frozenset({"id"}))
    return Session.model_validate(fields) if changed else session
