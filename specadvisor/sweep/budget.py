"""The measuring budget of sequential measuring (`sweep --budget MIN`): wall-clock time, what a user
means by "spend 10 minutes". Launches of one wave run at once (`--parallel N`), so a wave costs its
slowest launch (start-up + its passes over the prompts), not the sum of its launches: counted as a
sum, a budget with N slots stopped after 1/N of the measuring the time allowed.

One definition, for what has been spent and for what a round would cost, taken from the runs' own
figures (start-up and duration as measured), so a replay on a virtual clock (benchmarks/decision.py)
counts time the way a live sweep does. What a further round would cost is
analysis.costs.round_wall_seconds (re-exported here): the decision's "about M min more" names the
same figure, and analysis may not import sweep."""

from __future__ import annotations

from specadvisor.analysis.arms import server_key
from specadvisor.analysis.costs import round_wall_seconds  # one home, shared with the undecided verdict's "about M min more"
from specadvisor.domain import Session

__all__ = ["round_wall_seconds", "wall_seconds"]


def wall_seconds(session: Session) -> float:
    """Wall-clock measuring time so far: per wave, its slowest launch (one start-up plus the durations
    of every run on that server); runs without a wave (older sessions) count one after another."""
    arms = {a.id: a for a in session.arms}
    launches: dict[tuple[object, ...], list[float]] = {}  # (wave, server, trial, role) -> [start-up, measuring]
    for result in session.results:
        arm = arms.get(result.arm_id)
        for i, run in enumerate(result.runs):
            if run.wave is None or arm is None:
                key: tuple[object, ...] = (None, result.arm_id, i)
            else:
                key = (run.wave, server_key(arm), run.trial, run.role)
            cost = launches.setdefault(key, [0.0, 0.0])
            cost[0] = max(cost[0], run.startup_s or 0.0)
            cost[1] += run.duration_s or 0.0
    waves: dict[object, float] = {}
    for key, (startup, measuring) in launches.items():
        wave = key[0] if key[0] is not None else key
        waves[wave] = max(waves.get(wave, 0.0), startup + measuring)
    return sum(waves.values())
