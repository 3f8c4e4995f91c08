"""Shared rendering helpers for the CLI: JSON for scripts, a rich console for people."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, is_dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console


def to_jsonable(obj: Any) -> Any:
    from pydantic import BaseModel

    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    if is_dataclass(obj) and not isinstance(obj, type):
        return to_jsonable(asdict(obj))
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(o) for o in obj]
    if isinstance(obj, dict):
        return {k: to_jsonable(v) for k, v in obj.items()}
    return obj


def print_json(obj: Any) -> None:
    """JSON for scripts, with secrets redacted (an engine command or endpoint URL may carry one), strict:
    a figure past the float range is null, never `Infinity`."""
    from specadvisor.redact import json_needs_redaction, redact

    if is_dataclass(obj) and not isinstance(obj, type):
        # The machine's description (`detect --json`): a few plain fields, so the standard library's
        # encoder, which keeps pydantic off detect's path; same text as pydantic-core's for these types.
        plain = asdict(obj)
        text = json.dumps(plain, indent=2, ensure_ascii=True)
        if json_needs_redaction(text):
            text = json.dumps(redact(plain), indent=2, ensure_ascii=True)
        sys.stdout.write(text + "\n")
        return
    from pydantic_core import to_json

    if "specadvisor.domain" in sys.modules:  # a domain model may be serialized on its own here
        from specadvisor.domain import complete_models

        complete_models()
    # pydantic-core's encoder, straight from the models: json.dump with an indent runs in Python, and
    # dumping a 100,000-arm session to Python objects and walking them took most of `show --json`.
    if isinstance(obj, dict):  # checked entry by entry: one encoding and one check of each, not two
        text = to_json(_redacted(obj), indent=2, ensure_ascii=True, fallback=str, inf_nan_mode="null").decode("ascii")
    else:
        text = to_json(obj, indent=2, ensure_ascii=True, fallback=str, inf_nan_mode="null").decode("ascii")
        if json_needs_redaction(text):  # something secret-shaped: decoded and redacted value by value
            text = to_json(redact(to_jsonable(obj)), indent=2, ensure_ascii=True, fallback=str, inf_nan_mode="null").decode("ascii")
    sys.stdout.write(text)
    sys.stdout.write("\n")


def _redacted(obj: dict[Any, Any]) -> dict[Any, Any]:
    """redact() of a dict's JSON value (a whole session under `show --json`), entry by entry."""
    from specadvisor.redact import redact_entries

    return redact_entries(obj, to_jsonable)[0]


PIPED_WIDTH = 4000  # piped output is never cut or wrapped to a terminal it does not have (gh, docker)


def console() -> Console:
    """A rich console on stdout (imported lazily: rich costs start-up time). On a terminal it fits the
    terminal; piped or redirected (a file, `| less`, a test's capture), lines keep their whole content,
    as `gh` and `docker` print them, instead of tables cut and sentences wrapped at 80 columns
    (COLUMNS, when set, still wins)."""
    import os
    import sys

    from rich.console import Console

    piped = not sys.stdout.isatty() and not os.environ.get("COLUMNS")
    return Console(highlight=False, width=PIPED_WIDTH if piped else None)
