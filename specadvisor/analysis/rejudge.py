"""Re-judging a stored session: the verdict this version's decision rule gives on its stored
measurements. Nothing runs and nothing is written, so imported sessions re-judge too. One home for
`sessions show --recompute` and the TUI's Sessions screen (`v`), so both give the same answer."""

from __future__ import annotations

from specadvisor.domain import Recommendation, Session


def rejudge(session: Session) -> Recommendation:
    """The current code's verdict on `session`; a goodput sweep answers in request rates."""
    if any(r.rate_points for r in session.results):
        from specadvisor.analysis.capacity import recommend_capacity

        return recommend_capacity(session)
    from specadvisor.analysis.recommend import recommend

    return recommend(session)
