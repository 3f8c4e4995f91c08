"""Pick the configuration to deploy from measured arms.

Rules (documented in the report):
- Rank by measured output throughput, never by acceptance rate (it falls with N by arithmetic).
- With a latency target, only arms whose p99 TPOT (--slo-tpot-ms) and p99 TTFT (--slo-ttft-ms) meet it
  compete; p99 because a target is a promise about the slow requests, not the typical one.
- Near-ties (the difference lies within its 95% interval, or within 2%) go to the smaller N, and the baseline counts
  as N=0: speculation must win clearly to be worth its memory and complexity.
- With several concurrency levels, the headline is for the session's concurrency; every measured
  level gets its own pick (`per_concurrency`), and a `num_speculative_tokens_per_batch_size`
  schedule ([start, end, k], k=0 = off) is offered too.
"""

from __future__ import annotations

import math
from typing import Any

from specadvisor.domain import Arm, ArmResult, ConcurrencyPick, Recommendation, Session
from specadvisor.figures import speedup
from specadvisor.sweep.arms import family_key, family_label
from specadvisor.sweep.drift import annotate, baseline_drift, widen
from specadvisor.sweep.predict import measured
from specadvisor.sweep.spread import pooled_intervals, residual_relative_sd
from specadvisor.trust import serve_command as trusted_serve_command

TIE_FRACTION = 0.02
SCHEDULE_MAX_BATCH = 1024  # last range's end; vLLM caps it at max_num_seqs


def recommend(session: Session) -> Recommendation:
    results = measured(session)
    levels = sorted({a.concurrency for a in session.arms if a.id in results})
    if not levels:
        return Recommendation(arm_id=None, reasons=["no arm finished with a throughput: nothing to recommend yet"])
    conc = session.concurrency if session.concurrency in levels else levels[0]
    # intervals from the pooled between-run spread (sweep.spread), widened by the baseline's drift (sweep.drift)
    results, pooled = pooled_intervals(results)
    drift = baseline_drift(session, conc, residual_relative_sd(results) or pooled)
    results = widen(results, drift)
    pick = _pick(session, results, conc)
    rec = annotate(_explain(session, results, conc, *pick), drift, results, session, pooled)
    rec.per_concurrency = [_level(session, results, level) for level in levels]
    if len(levels) > 1:
        rec.batch_size_schedule = batch_size_schedule(session)
        rec.reasons += [f"at concurrency {p.concurrency}: {p.summary}" for p in rec.per_concurrency]
    return rec


def _level(session: Session, results: dict[str, ArmResult], conc: int) -> ConcurrencyPick:
    """The recommendation at one concurrency level, in one line."""
    one = _explain(session, results, conc, *_pick(session, results, conc))
    summary = next((r for r in one.reasons if not r.startswith(("measured at concurrency", "UNCONFIRMED"))), "")
    return ConcurrencyPick(
        concurrency=conc,
        arm_id=one.arm_id,
        do_not_speculate=one.do_not_speculate,
        speculative_config=one.speculative_config,
        speedup=one.speedup,
        speedup_ci=one.speedup_ci,
        summary=summary,
    )


def batch_size_schedule(session: Session) -> list[list[int]] | None:
    """Best N per measured concurrency level for the best speculative family, as vLLM's [start, end, k]."""
    results = measured(session)
    levels = sorted({a.concurrency for a in session.arms if a.id in results})
    family = _best_family(session, results)
    if family is None or len(levels) < 2:
        return None
    ks: list[int] = []
    for conc in levels:
        winner, _, _ = _pick(session, results, conc, only_family=family)
        ks.append(winner.n if winner is not None and not winner.is_baseline else 0)
    if not any(ks):
        return None
    schedule: list[list[int]] = []
    start = 1
    for i, (conc, k) in enumerate(zip(levels, ks, strict=True)):
        end = SCHEDULE_MAX_BATCH if i == len(levels) - 1 else max(conc, int(math.sqrt(conc * levels[i + 1])))
        if schedule and schedule[-1][2] == k:
            schedule[-1][1] = end
        else:
            schedule.append([start, end, k])
        start = end + 1
    return schedule


# ---------------------------------------------------------------------- selection


def _candidates(session: Session, results: dict[str, ArmResult], conc: int, only_family: str | None = None) -> list[Arm]:
    arms = [a for a in session.arms if a.concurrency == conc and a.id in results]
    if only_family is not None:
        arms = [a for a in arms if a.is_baseline or family_key(a) == only_family]
    return arms


def meets_slo(session: Session, result: ArmResult) -> bool:
    s = session.settings
    if s.slo_tpot_ms is not None and (result.tpot_ms.p99 is None or result.tpot_ms.p99 > s.slo_tpot_ms):
        return False
    if s.slo_ttft_ms is not None and (result.ttft_ms.p99 is None or result.ttft_ms.p99 > s.slo_ttft_ms):
        return False
    return True


def near_tie(a: ArmResult, b: ArmResult) -> bool:
    """Within 2% of each other, or a difference inside its own 95% interval.

    The difference's half-width combines the two intervals' half-widths in quadrature (as a Welch
    interval does); merely overlapping intervals would be far stricter than a 95% test and would
    call a clear 25% gain "noise" on a short run.
    """
    ta, tb = a.output_throughput, b.output_throughput
    if abs(ta - tb) <= TIE_FRACTION * max(ta, tb):
        return True
    if a.output_throughput_ci and b.output_throughput_ci:
        half_a = (a.output_throughput_ci[1] - a.output_throughput_ci[0]) / 2
        half_b = (b.output_throughput_ci[1] - b.output_throughput_ci[0]) / 2
        return abs(ta - tb) <= math.hypot(half_a, half_b)
    return False


def _pick(session: Session, results: dict[str, ArmResult], conc: int, only_family: str | None = None) -> tuple[Arm | None, Arm | None, list[str]]:
    """(winner, fastest, notes): fastest by throughput, winner after SLO filter and tie rule."""
    arms = _candidates(session, results, conc, only_family)
    notes: list[str] = []
    eligible = [a for a in arms if meets_slo(session, results[a.id])]
    if not eligible:
        lowest = min(arms, key=lambda a: results[a.id].tpot_ms.p99 or math.inf)
        notes.append("no measured configuration meets the latency target; recommending the one with the lowest p99 TPOT")
        return lowest, lowest, notes
    if len(eligible) < len(arms):
        notes.append(f"{len(arms) - len(eligible)} configuration(s) left out for missing the latency target (p99)")
    fastest = max(eligible, key=lambda a: results[a.id].output_throughput)
    tied = [a for a in eligible if near_tie(results[a.id], results[fastest.id])]
    winner = min(tied, key=lambda a: (a.n or 0, -results[a.id].output_throughput))
    if winner.id != fastest.id:
        notes.append(
            f"{_name(winner)} is within noise of the fastest ({_name(fastest)}, {results[fastest.id].output_throughput:.1f} tok/s): the smaller N wins the tie"
        )
    return winner, fastest, notes


def _best_family(session: Session, results: dict[str, ArmResult]) -> str | None:
    spec = [a for a in session.arms if not a.is_baseline and a.id in results]
    if not spec:
        return None
    return family_key(max(spec, key=lambda a: results[a.id].output_throughput))


def _explain(session: Session, results: dict[str, ArmResult], conc: int, winner: Arm, fastest: Arm, notes: list[str]) -> Recommendation:
    base_arm = next((a for a in session.arms if a.is_baseline and a.concurrency == conc and a.id in results), None)
    base = results[base_arm.id] if base_arm else None
    win = results[winner.id]
    figure = speedup(win, base)
    reasons = [f"measured at concurrency {conc}, {session.settings.output_len} output tokens, temperature {session.settings.temperature:g}"]
    reasons += notes
    if winner.is_baseline:
        best_spec = _best_spec(session, results, conc)
        if best_spec is None:
            why = "no speculative configuration finished"
        else:
            r = results[best_spec.id]
            delta = (r.output_throughput / win.output_throughput - 1) * 100
            al = f", mean acceptance length {r.mean_acceptance_length:.2f}" if r.mean_acceptance_length else ""
            why = f"the best speculative arm, {_name(best_spec)}, ran at {r.output_throughput:.1f} tok/s ({delta:+.1f}% vs {win.output_throughput:.1f} without speculation{al})"
            why += (
                ": the drafts it gets accepted do not pay for their draft and verification cost here"
                if delta < 0
                else ": not clearly better than no speculation"
            )
        return Recommendation(arm_id=None, do_not_speculate=True, speedup=1.0 if base else None, reasons=["do not speculate here: " + why, *reasons])
    head = f"{_name(winner)}: {win.output_throughput:.1f} output tok/s"
    if figure is not None:
        head += f", {figure.text()} the baseline ({figure.baseline_throughput:.1f} tok/s)"
    if win.mean_acceptance_length:
        head += f", mean acceptance length {win.mean_acceptance_length:.2f}"
    warning = [_missing_baseline(session, conc)] if base is None else []
    return Recommendation(
        arm_id=winner.id,
        speculative_config=dict(winner.speculative_config),
        speedup=figure.value if figure else None,
        speedup_ci=figure.ci if figure else None,
        reasons=[*warning, head, *reasons],
        serve_command=serve_command(session, winner.speculative_config),
    )


def _missing_baseline(session: Session, conc: int) -> str:
    """Without a baseline the fastest arm is known, but not whether speculation helps at all."""
    planned = any(a.is_baseline and a.concurrency == conc for a in session.arms)
    cause = "the no-speculation baseline failed" if planned else "no no-speculation baseline was measured"
    fix = f"specadvisor sweep --resume {session.id[:8]}" if planned else "re-run the sweep with --baseline"
    return (
        f"UNCONFIRMED: {cause} at concurrency {conc}, so this is only the fastest speculative configuration; whether it beats no speculation is unknown ({fix})"
    )


def _best_spec(session: Session, results: dict[str, ArmResult], conc: int) -> Arm | None:
    spec = [a for a in _candidates(session, results, conc) if not a.is_baseline]
    return max(spec, key=lambda a: results[a.id].output_throughput) if spec else None


def _name(arm: Arm) -> str:
    return "no speculation" if arm.is_baseline else f"{family_label(arm)} N={arm.n}"


def serve_command(session: Session, spec_config: dict[str, Any] | None) -> str:
    """The full `vllm serve` command for the session's model and the measured server args (an
    imported session's are never reused: specadvisor.trust decides)."""
    return trusted_serve_command(session, spec_config)
