"""A session's arms and measured results grouped by concurrency level, built in one pass per verdict.

Why: the decision is taken level by level (analysis.decision.decide_level), and each level used to
rebuild the measured results, scan every arm for its baseline and its contenders, and re-derive each
arm's launches from its runs several times: over a fully measured 100,000-arm session at 64 levels
that was quadratic (90 s for one `recommend`). The index holds only lookups, never a figure: every
formula stays in analysis.decision and specadvisor.figures, which read through it, so a verdict built
with it is the same, byte for byte, as one built by the scans (tests/analysis/test_recommend_golden.py).

An index is a snapshot of the session when built: a sweep that adds results builds a new one for its
next look (recommend and level_decisions build one per call).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from specadvisor.domain import Arm, ArmResult, Session
from specadvisor.figures import Launched, launch_memo, measured_results


def by_level(arms: list[Arm], results: Mapping[str, ArmResult]) -> dict[int, list[Arm]]:
    """The arms holding a result in `results`, by concurrency, each level in session order (an id
    listed twice is kept twice, as a scan of the arms would find it)."""
    grouped: dict[int, list[Arm]] = {}
    for arm in arms:
        if arm.id in results:
            grouped.setdefault(arm.concurrency, []).append(arm)
    return grouped


@dataclass
class LevelIndex:
    """What decide_level looks up at a level: the measured results (figures.measured_results), the
    measured arms there, the first measured baseline, whether any baseline was planned there, the
    first baseline arm and the first result of an id (what the drift line reads), and each result's
    launches, derived once (`launched`)."""

    results: dict[str, ArmResult]
    measured: dict[int, list[Arm]]
    first_result: dict[str, ArmResult]
    planned_baseline: set[int]
    first_baseline: dict[int, Arm]
    launched: Launched = field(default_factory=launch_memo, repr=False)  # figures.launches, once per result

    @classmethod
    def of(cls, session: Session) -> LevelIndex:
        results = measured_results(session)
        first_result: dict[str, ArmResult] = {}
        for result in session.results:
            first_result.setdefault(result.arm_id, result)
        planned: set[int] = set()
        first_baseline: dict[int, Arm] = {}
        for arm in session.arms:
            if arm.is_baseline:
                planned.add(arm.concurrency)
                first_baseline.setdefault(arm.concurrency, arm)
        return cls(results, by_level(session.arms, results), first_result, planned, first_baseline)

    def arms(self, conc: int) -> list[Arm]:
        """The measured arms at `conc` (baselines included), in session order."""
        return self.measured.get(conc, [])

    def baseline(self, conc: int) -> Arm | None:
        """The first measured no-speculation arm at `conc`."""
        return next((a for a in self.arms(conc) if a.is_baseline), None)

    def speculative(self, conc: int) -> list[Arm]:
        """The measured speculative arms at `conc`, in session order."""
        return [a for a in self.arms(conc) if not a.is_baseline]
