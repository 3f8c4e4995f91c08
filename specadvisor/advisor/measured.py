"""What measurements of a method on this very model say about this situation: its rank and its N.

Rules encode family priors ("block drafters like long outputs"); a measurement of the method on the
model being advised is closer to the user's case than any prior, and outranks it:

- a fresh result measured on this machine ranks first, ordered by its speedup;
- a published result on this model and this GPU (rules/evidence.toml `gpus`) ranks next, above every
  candidate that rests on priors alone, ordered by its speedup over no speculation;
- a published result on this model that was slower than no speculation for this workload demotes the
  method below every candidate without one, and the candidate says so;
- the N at which a measurement on this model peaked (`best_n`) is where the config starts.

A measurement counts where it speaks for the workload (`workload`) and for the concurrency: a stated
range counts up to twice its top and down to half its bottom.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import pairwise

from specadvisor.advisor.facts import Facts
from specadvisor.domain import Candidate, HardwareProfile, ModelProfile
from specadvisor.rulebase import Evidence, RuleBase, find_gpu, find_model_family

LOCAL = 3
SAME_GPU = 2
PRIORS = 0
BELOW_BASELINE = -1
NO_SPECULATION = "no speculation"
RANK_STEP = 0.05  # the score gap that keeps a measured candidate above (or a demoted one below) its neighbour


@dataclass(frozen=True)
class Standing:
    """Where a candidate ranks before its rule score is consulted."""

    tier: int = PRIORS
    speedup: float = 0.0  # the measured speedup over no speculation that orders candidates within a tier
    reason: str = ""
    evidence: list[str] = field(default_factory=list)

    def sort_key(self) -> tuple[int, float]:
        return (-self.tier, -self.speedup if self.tier > PRIORS else 0.0)


def targets_model(ev: Evidence, model: ModelProfile, facts: Facts, rb: RuleBase) -> bool:
    """Evidence measured on this model (or its family) and, when it names workloads, on this one:
    an editing run's 1.3x says nothing about chat on the same model."""
    if not ev.target or (ev.workload is not None and facts.workload not in ev.workload):
        return False
    if ev.target.lower() == model.id.lower():
        return True
    family = find_model_family(ev.target, rb)
    return family is not None and facts.family is not None and family.id == facts.family.id


def _concurrency_range(text: str) -> tuple[int, int] | None:
    if not text or "qps" in text.lower():
        return None
    numbers = [int(n) for n in re.findall(r"\d+", text)]
    return (min(numbers), max(numbers)) if numbers else None


def applies_at(ev: Evidence, concurrency: int) -> bool:
    """A measurement speaks for concurrencies near the ones it was taken at (any, when it does not say)."""
    span = _concurrency_range(ev.concurrency)
    return span is None or span[0] / 2 <= concurrency <= span[1] * 2


def gpu_id(hardware: HardwareProfile, rb: RuleBase) -> str | None:
    """The GPU catalog id of the machine being advised (its first GPU), None when it is not in the catalog."""
    if not hardware.gpus:
        return None
    spec = find_gpu(hardware.gpus[0].name, rb)
    return spec.id if spec else None


def _gain(ev: Evidence) -> bool:
    return ev.versus == NO_SPECULATION and (ev.speedup_low or ev.speedup_high or 0.0) >= 1.0


def on_this_model(rb: RuleBase, model: ModelProfile, facts: Facts, method_id: str) -> list[Evidence]:
    """Published measurements of this method on this model that speak for this workload and concurrency,
    and the gains of the method it drafts like (`gains_from` in rules/methods.toml)."""
    spec = rb.methods.get(method_id)
    like = spec.gains_from if spec else ""
    return [
        ev
        for ev in rb.evidence.values()
        if (ev.method == method_id or (like and ev.method == like and _gain(ev)))
        and targets_model(ev, model, facts, rb)
        and applies_at(ev, facts.concurrency)
        and (ev.speedup_low or ev.speedup_high)
    ]


def _where(ev: Evidence) -> str:
    return f"{ev.dataset or 'its benchmark'} on {ev.hardware or 'unstated hardware'}"


def _figure(ev: Evidence) -> str:
    low, high = ev.speedup_low, ev.speedup_high
    span = f"{low:.2f}x" if low is not None and (high is None or low == high) else f"{low or high:.2f}-{high:.2f}x" if low else f"up to {high:.2f}x"
    return f"{span} vs {ev.versus}"


def standing(measured: list[Evidence], gpu: str | None, local_best: float | None, workload: str) -> Standing:
    """The tier a candidate ranks in, from its fresh local result or its published measurements on this model."""
    if local_best is not None:
        if local_best < 1.0:
            return Standing(BELOW_BASELINE, 0.0, f"Demoted: measured on this machine at {local_best:.2f}x, slower than no speculation.")
        return Standing(LOCAL, local_best)  # its "Measured on this machine" reason already says so
    same_gpu = [ev for ev in measured if gpu and gpu in ev.gpus and (ev.speedup_low or ev.speedup_high or 0.0) > 1.0]
    slower = [ev for ev in measured if ev.versus == NO_SPECULATION and ev.speedup_high is not None and ev.speedup_high < 1.0]
    if slower and not same_gpu:
        ev = max(slower, key=lambda e: e.speedup_high or 0.0)
        return Standing(
            BELOW_BASELINE,
            0.0,
            f"Demoted: its published run on this model for the {workload} workload was slower than no speculation at every N "
            f"({_figure(ev)}, {_where(ev)}; {ev.id}); measure it only to confirm.",
            [ev.id],
        )
    if same_gpu:
        best = max(same_gpu, key=lambda e: (e.versus == NO_SPECULATION, e.speedup_high or e.speedup_low or 0.0))
        speedup = (
            max((ev.speedup_high or ev.speedup_low or 0.0) for ev in same_gpu if ev.versus == NO_SPECULATION)
            if any(ev.versus == NO_SPECULATION for ev in same_gpu)
            else 0.0
        )
        return Standing(
            SAME_GPU,
            speedup,
            f"Ranked by its measurement on this model and this GPU ({_figure(best)}, {_where(best)}; {best.id}), above candidates that rest on family priors.",
            [ev.id for ev in same_gpu],
        )
    return Standing()


@dataclass(frozen=True)
class MeasuredN:
    n: int
    evidence: Evidence
    same_gpu: bool


def best_n(measured: list[Evidence], gpu: str | None) -> MeasuredN | None:
    """The N a measurement on this model peaked at: this GPU's first, then one against no speculation, then the largest gain."""
    with_n = [ev for ev in measured if ev.best_n]
    if not with_n:
        return None
    ev = max(with_n, key=lambda e: (bool(gpu and gpu in e.gpus), e.versus == NO_SPECULATION, e.speedup_high or e.speedup_low or 0.0))
    assert ev.best_n is not None
    return MeasuredN(ev.best_n, ev, bool(gpu and gpu in ev.gpus))


def rank(candidates: list[Candidate], standings: dict[str, Standing], trace: list[str]) -> list[Candidate]:
    """Candidates in rank order: measured here, then measured on this GPU (by speedup), then rule
    priors, then demoted (by rule score within each). Scores are moved just enough that they read
    in the same order, and each move is traced: a demoted candidate drops below the lowest other
    score, a measured one rises above the candidate it outranks."""
    ordered = sorted(candidates, key=lambda c: (*standings[c.id].sort_key(), -c.score, c.id))
    floor = min((c.score for c in ordered if standings[c.id].tier != BELOW_BASELINE), default=None)
    for candidate in ordered:
        if standings[candidate.id].tier == BELOW_BASELINE and floor is not None and candidate.score >= floor:
            _move(candidate, floor - RANK_STEP, "demoted below every candidate without a measured slowdown", trace)
        if standings[candidate.id].tier == BELOW_BASELINE:
            floor = candidate.score
    for above, below in reversed(list(pairwise(ordered))):
        if standings[above.id].tier > PRIORS and above.score <= below.score:
            _move(above, below.score + RANK_STEP, f"ranked above {below.id} by its measurement", trace)
    return ordered


def _move(candidate: Candidate, score: float, why: str, trace: list[str]) -> None:
    trace.append(f"= {candidate.id}: score {candidate.score:.2f} -> {score:.2f}, {why}")
    candidate.score = round(score, 3)
