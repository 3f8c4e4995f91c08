"""`TuiApp` is the app as screens see it: its action methods only declare the contract (their bodies
raise NotImplementedError, since Textual's App has no ABC metaclass to enforce it). The real app must
implement every one, or a screen's call would raise at run time."""

from __future__ import annotations

import inspect

from specadvisor.tui.app import SpecAdvisorApp
from specadvisor.tui.state import TuiApp


def test_the_real_app_implements_every_action_screens_may_call():
    declared = [name for name, member in vars(TuiApp).items() if inspect.isfunction(member)]
    assert {"show_error", "stop_sweep", "finished_session", "worker_state_changed"} <= set(declared)
    missing = [name for name in declared if getattr(SpecAdvisorApp, name) is getattr(TuiApp, name)]
    assert not missing, f"SpecAdvisorApp does not implement {missing}"
