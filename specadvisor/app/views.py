"""What every view reads of a session, from the one place that computes it: the arm's label, the
speedup with its interval, the capacity answer, the predictions, the reasons a verdict shows, the
arms a table lists, the serve command of the recommendation, the provenance facts.

The TUI's screens, the CLI's tables and live view, and the reports call these, so every view shows
one answer: the tail requests of an arm, why a run stopped, the step that would decide an undecided
verdict too (the computations live in `analysis`, `figures`, `report` and `provenance`; this module
is the front ends' door to them and adds nothing of its own but the questions they ask).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from specadvisor.analysis.arms import arm_label, family_key, method_display_name, short_drafter
from specadvisor.analysis.capacity import capacity_answer
from specadvisor.analysis.tails import session_tails
from specadvisor.figures import Speedup, all_speedups, speedup_text
from specadvisor.provenance import provenance_facts, stop_line
from specadvisor.report import content
from specadvisor.report.content import MAX_SHOWN_REASONS, shown_reasons, tabled_arms, tail_lines
from specadvisor.report.snippet import deciding_step, recommended_command, recommended_config
from specadvisor.trust import recorded

if TYPE_CHECKING:
    from specadvisor.analysis.predict import Prediction
    from specadvisor.domain import Candidate, Session

__all__ = [
    "MAX_SHOWN_REASONS",
    "Speedup",
    "all_speedups",
    "arm_label",
    "candidate_family",
    "candidate_name",
    "capacity_answer",
    "deciding_step",
    "family_key",
    "predictions",
    "provenance_facts",
    "recommended_command",
    "recommended_config",
    "recorded",
    "row_cap",
    "session_tails",
    "short_drafter",
    "shown_reasons",
    "speedup_text",
    "stop_line",
    "summary",
    "tabled_arms",
    "tail_lines",
]


def row_cap() -> int:
    """The most arms a table lists (the report's cap; `--json` has them all)."""
    return content.MAX_REPORT_ARMS


def candidate_name(candidate: Candidate) -> str:
    """An advised candidate as people read it (its id when the registry knows it, else its method)."""
    from specadvisor.rulebase import registry

    return method_display_name(candidate.id if registry.get(candidate.id) else candidate.method)


def candidate_family(candidate: Candidate) -> str:
    """The configuration family (everything but N) an advised candidate's planned arms belong to."""
    from specadvisor.sweep.plan import candidate_family as family

    return family(candidate)


def predictions(session: Session) -> dict[str, Prediction]:
    """Throughput predicted for untested N (and checked against measured arms), by arm id or curve
    point: those a view shows (fitted in their own regime, not contradicted); rough guesses never."""
    from specadvisor.analysis.predict import confident_predictions

    return confident_predictions(session)


def summary(session: Session, *, launches_used: int | None = None, launches_full_grid: int | None = None) -> dict[str, Any]:
    """The sweep's summary (`sweep --json`, the live view's last lines): arms, verdict, drift, order."""
    from specadvisor.analysis.summary import session_summary

    return session_summary(session, launches_used=launches_used, launches_full_grid=launches_full_grid)
