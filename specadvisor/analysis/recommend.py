"""The recommendation: the one verdict object every view shows, built from the decision rule
(specadvisor.analysis.decision) at every measured concurrency level.

- Rank by measured output throughput, never by acceptance rate (it falls with N by arithmetic).
- With a latency target, only arms whose p99 TPOT (--slo-tpot-ms) and p99 TTFT (--slo-ttft-ms) meet it
  compete; p99 because a target is a promise about the slow requests, not the typical one.
- Each level gets "speculate: <arm>", "do not speculate" or "undecided after ...: measuring ... would
  decide it" (`per_concurrency`); the top-level verdict is derived from them and never contradicts
  them: one answer when they agree, "depends on concurrency" when decided levels differ, "undecided"
  while any level is. A `num_speculative_tokens_per_batch_size` schedule ([start, end, k], k=0 = off)
  is offered when decided levels differ.
- The baseline's drift between its first launch and its bracket is reported and counted as
  launch-to-launch spread; it never withholds a verdict on its own.
"""

from __future__ import annotations

import math
from typing import Any

from specadvisor.analysis import stops, tails
from specadvisor.analysis.arms import family_key
from specadvisor.analysis.decision import DEFAULT_CONFIDENCE, LevelDecision, decide_level, estimate_noise, name
from specadvisor.analysis.drift import baseline_drift
from specadvisor.analysis.levels import LevelIndex, by_level
from specadvisor.analysis.predict import measured
from specadvisor.domain import Arm, ArmResult, Recommendation, Session
from specadvisor.figures import meets_slo
from specadvisor.trust import serve_command as trusted_serve_command

SCHEDULE_MAX_BATCH = 1024  # last range's end; vLLM caps it at max_num_seqs


def recommend(session: Session, *, confidence: float | None = None, looks: int | None = None) -> Recommendation:
    """The verdict from the stored measurements (nothing is run: imported sessions recompute too)."""
    confidence = confidence or session.settings.confidence or DEFAULT_CONFIDENCE
    looks = looks or session.settings.looks or 1
    levels = measured_levels(session)
    if not levels:
        empty = Recommendation(
            arm_id=None,
            decision="undecided",
            verdict="undecided until an arm finishes with a throughput",  # never "undecided: ...": views print "Undecided: " before it
            confidence=confidence,
            looks=looks,
            reasons=["no arm finished with a throughput: nothing to recommend yet"],
        )
        return stops.annotate(empty, session.provenance.stopped)
    decisions = level_decisions(session, confidence=confidence, looks=looks)
    conc = session.concurrency if session.concurrency in levels else levels[0]
    rec = _top_level(session, decisions, conc)
    rec.confidence, rec.looks = confidence, looks
    rec.per_concurrency = [d.pick() for d in decisions]
    rec.drift = baseline_drift(session, conc)
    if len(levels) > 1 and rec.decision == "depends on concurrency":
        rec.batch_size_schedule = batch_size_schedule(session, decisions)
    return stops.annotate(rec, session.provenance.stopped)  # why measuring stopped, in the verdict every view shows


def measured_levels(session: Session) -> list[int]:
    results = measured(session)
    return sorted({a.concurrency for a in session.arms if a.id in results})


def level_decisions(session: Session, *, confidence: float = DEFAULT_CONFIDENCE, looks: int = 1) -> list[LevelDecision]:
    """The decision at every measured level, on one noise estimate (the same machine, the same prompts).
    The session is grouped by level once (analysis.levels) and every level reads that, instead of each
    level scanning every arm and result again (quadratic over a 100,000-arm session at 64 levels)."""
    results = measured(session)
    usable = by_level(session.arms, results)
    index = LevelIndex.of(session)
    noise = estimate_noise(session, launched=index.launched)
    out = []
    for level in sorted(usable):
        eligible, notes = _eligible(session, results, usable[level])
        sequential = session.settings.budget_s is not None
        decision = decide_level(session, level, noise, confidence=confidence, looks=looks, sequential=sequential, eligible=eligible, notes=notes, index=index)
        out.append(_with_tail(session, decision))
    return out


def _with_tail(session: Session, decision: LevelDecision) -> LevelDecision:
    """The level's reasons say so when the gain its verdict rests on is lost to a few slow requests (analysis.tails)."""
    chosen = decision.chosen
    if chosen is None or chosen.arm.is_baseline:
        return decision
    line = tails.verdict_line(chosen.speedup, name(chosen.arm), tails.arm_tail(session, chosen.arm), decision.concurrency)
    if line:
        decision.reasons.insert(1, line)
    return decision


def _top_level(session: Session, decisions: list[LevelDecision], conc: int) -> Recommendation:
    """One answer from the levels' answers, never contradicting any of them."""
    kinds = {d.decision for d in decisions}
    headline = next(d for d in decisions if d.concurrency == conc)
    speculating = [d for d in decisions if d.decision == "speculate"]
    configs = {repr(sorted((d.arm.speculative_config or {}).items())) for d in speculating if d.arm}
    if len(decisions) == 1:
        decision, verdict = headline.decision, headline.verdict
    elif kinds == {"do not speculate"}:
        decision, verdict = "do not speculate", "do not speculate (at concurrency " + _levels(decisions) + ")"
    elif kinds == {"speculate"} and len(configs) == 1:
        decision, verdict = "speculate", f"{headline.verdict} (at concurrency {_levels(decisions)})"
    else:
        decision = "undecided" if "undecided" in kinds else "depends on concurrency"
        verdict = "; ".join(f"at concurrency {d.concurrency}: {d.verdict}" for d in decisions)
    pick = None
    if decision == "speculate" or decision == "depends on concurrency":
        pick = headline if headline.decision == "speculate" else speculating[0]
    if len(decisions) == 1:
        reasons = list(headline.reasons)
    else:
        reasons = [f"at concurrency {d.concurrency}: {reason}" for d in decisions for reason in d.reasons if not reason.startswith("measured at concurrency")]
    arm = pick.arm if pick is not None else None
    chosen = pick.chosen if pick is not None else None  # only a speculating level's figure is the verdict's speedup
    return Recommendation(
        arm_id=arm.id if arm else None,
        do_not_speculate=decision == "do not speculate",
        speculative_config=dict(arm.speculative_config) if arm and arm.speculative_config else None,
        speedup=chosen.speedup if chosen else None,
        speedup_ci=chosen.interval if chosen else None,
        reasons=reasons,
        serve_command=serve_command(session, arm.speculative_config) if arm else None,
        decision=decision,
        verdict=verdict,
    )


def _levels(decisions: list[LevelDecision]) -> str:
    values = [str(d.concurrency) for d in decisions]
    return ", ".join(values[:-1]) + " and " + values[-1] if len(values) > 1 else values[0]


def batch_size_schedule(session: Session, decisions: list[LevelDecision] | None = None) -> list[list[int]] | None:
    """Decided N per measured level for the speculating family, as vLLM's [start, end, k]
    (k=0 where the decision is not to speculate); None while any level is undecided."""
    decisions = decisions if decisions is not None else level_decisions(session, confidence=session.settings.confidence)
    if len(decisions) < 2 or any(d.decision == "undecided" for d in decisions):
        return None
    families = {family_key(d.arm) for d in decisions if d.decision == "speculate" and d.arm}
    if len(families) != 1:
        return None
    levels = [d.concurrency for d in decisions]
    ks = [d.arm.n or 0 if d.decision == "speculate" and d.arm else 0 for d in decisions]
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


def _eligible(session: Session, results: dict[str, ArmResult], level: list[Arm]) -> tuple[list[Arm], list[str]]:
    """The speculative arms of a level (`level`: its usable arms) that may compete (a latency target
    leaves some out), and notes."""
    arms = [a for a in level if not a.is_baseline]
    eligible = [a for a in arms if meets_slo(session.settings, results[a.id])]
    notes = []
    if len(eligible) < len(arms):
        notes.append(f"{len(arms) - len(eligible)} configuration(s) left out for missing the latency target (p99)")
    return eligible, notes


def serve_command(session: Session, spec_config: dict[str, Any] | None) -> str:
    """The full `vllm serve` command for the session's model and the measured server args (an
    imported session's are never reused: specadvisor.trust decides)."""
    return trusted_serve_command(session, spec_config)
