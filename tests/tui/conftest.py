"""TUI test fixtures: an app on a real SQLite file with fixed profiles and a scripted runner."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from specadvisor.tui.app import create_app
from tui_fakes import MODEL, WORKLOAD, Calls, fake_services


@pytest.fixture
def calls() -> Calls:
    return Calls()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "specadvisor.db"


@pytest.fixture
def make_app(db_path: Path, calls: Calls):
    """Build an app with fakes at the process boundary; cursor blink off and fast redraws for tests."""

    def build(**runner_kwargs):
        # the demo-sized workload (8 requests x 64 tokens): its whole plan fits the default time budget
        app = create_app(fake_services(db_path, calls, **runner_kwargs), cursor_blink=False, workload=WORKLOAD)
        app.refresh_interval = 0.02
        app.chart_interval = 0.05
        return app

    return build


async def settle(pilot) -> None:
    """Wait until every worker finished and the screen has processed the resulting messages."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause(0.1)


async def to_advice(app, pilot, *, model: str = MODEL.id, budget: str | None = None, gpu: str | None = None) -> None:
    """From Setup to Advice as a user does: the model (and budget, GPU) typed, F5, the Advice screen."""
    from textual.widgets import Input

    from specadvisor.tui.screens.advice import AdviceScreen

    await settle(pilot)
    app.screen.query_one("#model", Input).value = model
    if budget is not None:
        app.screen.query_one("#budget", Input).value = budget
    if gpu is not None:
        app.screen.query_one("#gpu", Input).value = gpu
    await pilot.press("f5")
    await settle(pilot)
    assert isinstance(app.screen, AdviceScreen)
