"""Shared rendering helpers for the CLI: JSON for scripts, a rich console for people."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

if TYPE_CHECKING:
    from rich.console import Console


def to_jsonable(obj: Any) -> Any:
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(o) for o in obj]
    if isinstance(obj, dict):
        return {k: to_jsonable(v) for k, v in obj.items()}
    return obj


def print_json(obj: Any) -> None:
    """JSON for scripts, with secrets redacted (an engine command or endpoint URL may carry one)."""
    from pydantic_core import to_json

    from specadvisor.redact import json_needs_redaction, redact

    # pydantic-core's encoder, straight from the models: json.dump with an indent runs in Python, and
    # dumping a 100,000-arm session to Python objects and walking them took most of `show --json`.
    text = to_json(obj, indent=2, ensure_ascii=True, fallback=str).decode("ascii")
    if json_needs_redaction(text):  # rare: something secret-shaped, decoded and redacted value by value
        text = to_json(redact(to_jsonable(obj)), indent=2, ensure_ascii=True, fallback=str).decode("ascii")
    sys.stdout.write(text)
    sys.stdout.write("\n")


def console() -> Console:
    """A rich console on stdout (imported lazily: rich costs start-up time)."""
    from rich.console import Console

    return Console(highlight=False)
