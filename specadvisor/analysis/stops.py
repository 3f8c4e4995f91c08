"""Why a sweep stopped measuring, carried by its verdict.

Issue 38: `--budget 8 --time-limit 8.5` measured 1.0 minute and stopped, undecided, because the first
look came too late in the time limit for one more launch per arm; the runner said so in a warning
that `--json`, `sessions show`, the report and the bundle all dropped, and the verdict read "1.0 min
of measuring" to someone who had asked for 8. Now the runner records why it stopped
(`domain.SweepStop`: a code and its figures, stored with the provenance, so a bundle carries it as
data), and the verdict says it: every view that shows the verdict shows why, recomputed or not.
A fixed design that decided on its planned runs with no budget or time limit keeps its verdict as it
is (nothing was cut short); its reasons still say how it ended.
"""

from __future__ import annotations

from specadvisor.domain import Recommendation, SweepStop


def annotate(rec: Recommendation, stop: SweepStop | None) -> Recommendation:
    """`rec` with why measuring stopped in its reasons and, wherever something could have stopped it
    short (a budget, a time limit, a cancel) or it is undecided, in its verdict."""
    if stop is None:
        return rec
    decided = rec.decision not in ("undecided", "")
    text = stop.text(decided)
    rec.reasons = [*rec.reasons, f"why measuring stopped: {text}"]
    quiet = stop.code == "planned runs measured" and decided and stop.budget_s is None and stop.time_limit_s is None
    if not quiet:
        rec.verdict = f"{rec.verdict or 'undecided'}; {text}"
    return rec
