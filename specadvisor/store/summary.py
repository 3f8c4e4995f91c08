"""A stored session in one line: its best arm and that arm's speedup (from specadvisor.figures).

Kept pure (no database) so that the store's listing, `sessions compare` and the TUI agree.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel

from specadvisor import request_format
from specadvisor.domain import Arm, Session
from specadvisor.figures import Speedup, all_speedups, arm_speedup, results_by_arm, throughput
from specadvisor.trust import recorded


class SessionSummary(BaseModel):
    """One row of `sessions list`: enough to pick a session without loading its samples."""

    id: str
    name: str = ""
    created_at: datetime
    status: str
    model: str = ""
    drafter: str | None = None
    workload: str = ""
    gpu: str = ""
    vllm_version: str | None = None
    arms: int = 0
    best_arm: str | None = None
    best_speedup: float | None = None
    origin: str = "local"
    request_format: str = ""  # chat | completions | not recorded: how its prompts were sent (part of the workload)


def _speedup(session: Session, arm: Arm) -> float | None:
    figure = arm_speedup(session, arm)
    return figure.value if figure else None


def best_arm(session: Session, speedups: dict[str, Speedup | None] | None = None) -> tuple[Arm | None, float | None]:
    """The recommended arm if there is a recommendation, else the fastest measured speculative arm.

    Returns (arm, speedup); (None, None) when nothing usable was measured or the verdict is
    undecided (the fastest arm is then not "best": its win is not established; `best_label` says
    "undecided"). "Do not speculate" resolves to the baseline arm with speedup 1.0. `speedups`:
    all_speedups(session), when the caller has it already (a 100,000-arm comparison).
    """
    rec = session.recommendation
    arms = {a.id: a for a in session.arms}
    if rec is not None and rec.decision == "undecided":
        return None, None
    if rec is not None:
        if rec.arm_id in arms:
            arm = arms[rec.arm_id]
            return arm, rec.speedup if rec.speedup is not None else _speedup(session, arm)
        if rec.do_not_speculate:
            baseline = next((a for a in session.arms if a.is_baseline), None)
            return baseline, 1.0 if baseline else None
    speedups = all_speedups(session) if speedups is None else speedups
    results = results_by_arm(session)  # one pass each: linear in arms
    scored = [(figure.value if (figure := speedups[a.id]) else None, throughput(results.get(a.id)), a) for a in session.arms if not a.is_baseline]
    with_speedup = [(speedup, arm) for speedup, _, arm in scored if speedup is not None]
    if with_speedup:
        speedup, arm = max(with_speedup, key=lambda s: s[0])
        return arm, speedup
    with_throughput = [(tput, arm) for _, tput, arm in scored if tput is not None]
    if with_throughput:
        return max(with_throughput, key=lambda s: s[0])[1], None
    return None, None


def best_label(session: Session, arm: Arm | None) -> str | None:
    """What a listing names as the best config: the arm's label, or "undecided" for a session whose
    verdict is undecided."""
    if session.recommendation is not None and session.recommendation.decision == "undecided":
        return "undecided"
    return arm.label if arm else None


def summarize(session: Session) -> SessionSummary:
    arm, speedup = best_arm(session)
    return SessionSummary(
        id=session.id,
        name=session.name,
        created_at=session.created_at,
        status=session.status,
        model=session.model,
        drafter=session.drafter,
        workload=recorded(session, "workload", session.workload.value),
        gpu=session.hardware.gpu_label,
        vllm_version=session.vllm_version,
        arms=len(session.arms),
        best_arm=best_label(session, arm),
        best_speedup=speedup,
        origin=session.provenance.origin,
        request_format=recorded(session, "request_format", request_format.short(session.settings.request_format, session.settings.prompt_source)),
    )
