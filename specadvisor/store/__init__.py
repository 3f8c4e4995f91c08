"""Session persistence: the SQLite store, session bundles and comparisons.

The names below load on first use (PEP 562): `specadvisor.store.peek` answers "any sessions?" with
the standard library alone, without paying for sqlite-utils and the pydantic models.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from specadvisor.store.store import Store
    from specadvisor.store.summary import SessionSummary, best_arm, summarize

__all__ = ["SessionSummary", "Store", "best_arm", "summarize"]
_HOMES = {
    "Store": "specadvisor.store.store",
    "SessionSummary": "specadvisor.store.summary",
    "best_arm": "specadvisor.store.summary",
    "summarize": "specadvisor.store.summary",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
