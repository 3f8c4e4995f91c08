"""Session persistence: the SQLite store, session bundles and comparisons."""

from specadvisor.store.store import Store
from specadvisor.store.summary import SessionSummary, arm_speedup, best_arm, summarize

__all__ = ["Store", "SessionSummary", "arm_speedup", "best_arm", "summarize"]
