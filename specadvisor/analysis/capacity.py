"""Reading a capacity sweep: the latency target a session was measured against, the one-line answer
("at p99 TPOT <= 30 ms, n-gram N=2 sustains 14 req/s against 9 without speculation") and the
recommendation by goodput. Pure functions over a stored session; `specadvisor.sweep.capacity`
measures it, reports and `sessions show --recompute` read it here.
"""

from __future__ import annotations

from specadvisor.analysis.arms import arm_label
from specadvisor.analysis.recommend import serve_command
from specadvisor.bench.goodput import Slo
from specadvisor.domain import Recommendation, Session
from specadvisor.errors import InputError


def slo_of(session: Session) -> Slo:
    s = session.settings
    if s.slo_tpot_ms is None and s.slo_ttft_ms is None:
        raise InputError("a capacity sweep needs a latency target", hint="pass --slo-tpot-ms (and/or --slo-ttft-ms), e.g. --slo-tpot-ms 30")
    return Slo(tpot_ms=s.slo_tpot_ms, ttft_ms=s.slo_ttft_ms)


def capacity_answer(session: Session) -> str | None:
    """ "at p99 TPOT <= 30 ms, n-gram N=2 sustains 14 req/s against 9 without speculation"."""
    if not any(r.rate_points for r in session.results):
        return None
    slo = slo_of(session)
    goodput = {r.arm_id: r.goodput_rps for r in session.results if r.rate_points}
    arms = {a.id: a for a in session.arms}
    base = next((goodput[a] for a in goodput if arms.get(a) and arms[a].is_baseline), None)
    spec = [(g, a) for a, g in goodput.items() if a in arms and not arms[a].is_baseline and g is not None]
    against = f"{_num(base)} req/s without speculation" if base is not None else "the baseline meeting it at no measured rate"
    if not spec:
        return f"at {slo.describe()}, no speculative configuration met the target; no speculation sustains {_num(base)} req/s" if base else None
    best_rate, best = max(spec)
    return f"at {slo.describe()}, {arm_label(arms[best], session.model)} sustains {_num(best_rate)} req/s against {against}"


def _num(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.0f}" if value >= 10 else f"{value:.2g}" if value >= 1 else f"{value:.2f}"


def recommend_capacity(session: Session) -> Recommendation:
    """Pick the configuration with the highest goodput; none beating the baseline's is "do not speculate"."""
    arms = {a.id: a for a in session.arms}
    measured = [(r.goodput_rps or 0.0, r.arm_id) for r in session.results if r.rate_points and r.arm_id in arms]
    base = next((g for g, a in measured if arms[a].is_baseline), None)
    best = max(((g, a) for g, a in measured if not arms[a].is_baseline), default=None)
    answer = capacity_answer(session)
    reasons = [answer] if answer else []
    if best is None or best[0] <= 0 or (base is not None and best[0] <= base):
        reasons.append("speculation does not raise the rate this target allows: serve without it")
        return Recommendation(arm_id=None, do_not_speculate=True, reasons=reasons, decision="do not speculate", verdict="do not speculate")
    arm = arms[best[1]]
    ratio = best[0] / base if base else None
    if ratio:
        reasons.append(f"{ratio:.2f}x the request rate of no speculation at the same latency target")
    return Recommendation(
        arm_id=arm.id,
        speculative_config=arm.speculative_config,
        speedup=ratio,
        reasons=reasons,
        serve_command=serve_command(session, arm.speculative_config),
        decision="speculate",
        verdict=f"speculate: {arm.label} (the highest goodput under the latency target)",
    )
