"""What the TUI reads of a sweep plan, as a protocol: the Advice screen edits it, the plan panel reads it.

In their own module, below both the services (which return them) and the formatting (which reads
them), so neither imports the other. No Textual here.
"""

from __future__ import annotations

from typing import Any, Protocol

from specadvisor.domain import Arm, Session


class PlanLike(Protocol):
    """An editable sweep plan (specadvisor.sweep.plan.SweepPlan): the session, what the planner found
    about this host and the budget, and the editing helpers the Advice screen uses."""

    session: Session
    estimate_source: str  # where the time estimate's figures come from
    budget_s: float | None  # the time budget that sized the plan
    left_out: list[str]  # arms the budget left out, for the user to add back
    host_note: str  # what this host cannot measure and what the plan does instead
    host_warnings: list[str]  # what will not fit on this host: Start asks first
    host_headlines: list[str]  # the same, one short line of figures each: what the narrow plan panel shows
    planned_for: str  # a named GPU ("H100x8") the plan is for instead of this machine

    @property
    def arms(self) -> list[Arm]: ...

    def add_arm(self, method: str | None, n: int | None = None, extra: dict[str, Any] | None = None) -> list[Arm]: ...

    def remove_arm(self, arm_id_: str) -> None: ...

    def estimate_seconds(self) -> float: ...

    def launches(self) -> int: ...

    def over_budget_s(self) -> float | None: ...
