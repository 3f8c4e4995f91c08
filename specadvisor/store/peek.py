"""A look into a database without opening the store: `sessions list` on an empty or absent
database answers from the standard library's sqlite3 in milliseconds (the store itself costs
sqlite-utils, numpy and the pydantic models to import)."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def session_count(path: Path) -> int | None:
    """How many sessions the database holds: 0 when there is no database, None when it cannot be
    read this way (no sessions table yet, locked, corrupt, a symlink to nothing): then the store must
    open it and say why."""
    if not path.exists():
        return None if path.is_symlink() else 0
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=0.5)
    except sqlite3.Error:
        return None
    try:
        return int(conn.execute("SELECT count(*) FROM sessions").fetchone()[0])
    except sqlite3.Error:
        return None
    finally:
        conn.close()
