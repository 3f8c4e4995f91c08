"""Session persistence: the SQLite store, session bundles and comparisons."""

from specadvisor.store.store import Store
from specadvisor.store.summary import SessionSummary, best_arm, summarize

__all__ = ["SessionSummary", "Store", "best_arm", "summarize"]
