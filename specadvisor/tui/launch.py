"""`specadvisor` with no arguments: open the app, and make sure no vLLM server outlives it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from specadvisor.tui.app import SpecAdvisorApp


def run_tui(db_path: Path | None = None) -> int:
    from specadvisor.tui.app import create_app

    return run_guarded(create_app(db_path=db_path, guard_signals=True))


def run_guarded(app: SpecAdvisorApp) -> int:
    """Run the app to its exit code; a sweep still running on the way out (a crash, Ctrl+C) has its
    servers stopped. Both launchers (`specadvisor`, `specadvisor demo`) end through here."""
    try:
        return int(app.run() or 0)
    finally:
        if app.state.sweep_running:
            app.stop_sweep()
        if app.state.train_worker is not None:  # the loop is gone: stop the run's server and trainer (process groups)
            app.state.services.stop_servers()
