"""The readable trace of one Advice: facts, each rule checked, local results, the verdict."""

from __future__ import annotations

from specadvisor.domain import Advice


def explain(advice: Advice) -> list[str]:
    lines = list(advice.trace)
    for rank, candidate in enumerate(advice.candidates, 1):
        lines.append(f"#{rank} {candidate.id} score {candidate.score:g}, N grid {candidate.n_grid}")
        lines.extend(f"    because: {reason}" for reason in candidate.reasons)
        lines.extend(f"    evidence: {ref.id} - {ref.summary} ({ref.source}{', ' + ref.date if ref.date else ''})" for ref in candidate.evidence)
    lines.append(f"verdict: {advice.verdict}")
    return lines
