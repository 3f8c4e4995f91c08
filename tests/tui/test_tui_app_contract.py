"""`TuiApp` is the app as screens see it: its actions are only declared there (typed attributes, since
Textual's App has no ABC metaclass to enforce an abstract method). The real app must implement every
one, or a screen's call would fail at run time."""

from __future__ import annotations

import inspect

from specadvisor.tui.app import SpecAdvisorApp
from specadvisor.tui.state import TuiApp


def test_the_real_app_implements_every_action_screens_may_call():
    declared = [name for name, kind in vars(TuiApp)["__annotations__"].items() if str(kind).startswith("Callable[")]
    assert {"show_error", "stop_sweep", "finished_session", "worker_state_changed"} <= set(declared)
    missing = [name for name in declared if name in vars(TuiApp) or not inspect.isfunction(getattr(SpecAdvisorApp, name, None))]
    assert not missing, f"SpecAdvisorApp does not implement {missing}"
