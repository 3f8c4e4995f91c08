"""`specadvisor` with no arguments: open the app, and make sure no vLLM server outlives it."""

from __future__ import annotations

from pathlib import Path


def run_tui(db_path: Path | None = None) -> int:
    from specadvisor.tui.app import create_app

    app = create_app(db_path=db_path, guard_signals=True)
    try:
        return int(app.run() or 0)
    finally:
        if app.sweep_running:
            app.stop_sweep()
