"""The two derived figures every view shows: acceptance from vLLM's counters, speedup vs the baseline.

One home so that the live TUI, the headless CLI, the report, the store's summaries, the advisor's
local evidence and the recommendation can never show different numbers for one arm.

- Acceptance follows vLLM (vllm/v1/spec_decode/metrics.py): mean acceptance length
  `1 + accepted / drafts` (bonus token included), acceptance rate `accepted / draft_tokens`,
  per-position rate `accepted[i] / drafts` with a Wilson interval. A per-position count above the
  draft count can only come from counters read a moment apart; it is capped at the draft count.
- Speedup is an arm's output throughput over the no-speculation baseline's at the same
  concurrency. Its 95% interval is Fieller's for the ratio of two independent means, built from the
  two throughput intervals; when either side has no interval, or the baseline's interval reaches 0
  (the ratio is then unbounded), there is no interval, and views say so.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from specadvisor.domain import Arm, ArmResult, ArmStatus, PositionStats, Session
from specadvisor.stats import wilson

# Results whose throughput is a measurement: finished, or stopped early by --adaptive (partial).
SPEEDUP_STATUSES = frozenset({ArmStatus.ok, ArmStatus.stopped_early})


# --------------------------------------------------------------------------- acceptance


@dataclass(frozen=True)
class Acceptance:
    """Speculation figures from raw counter deltas; all None/empty when nothing was drafted."""

    num_drafts: int = 0
    num_draft_tokens: int = 0
    num_accepted_tokens: int = 0
    mean_length: float | None = None
    rate: float | None = None
    per_position: list[PositionStats] = field(default_factory=list)

    @property
    def rates(self) -> list[float]:
        return [p.rate for p in self.per_position]

    def apply_to(self, result: ArmResult) -> ArmResult:
        """Write these figures into a result (in place; returned for chaining)."""
        result.num_drafts = self.num_drafts
        result.num_draft_tokens = self.num_draft_tokens
        result.num_accepted_tokens = self.num_accepted_tokens
        result.mean_acceptance_length = self.mean_length
        result.acceptance_rate = self.rate
        result.per_position = list(self.per_position)
        return result


def position_stats(position: int, accepted: float, drafts: float, rate: float | None = None) -> PositionStats:
    """Acceptance at one draft position with its Wilson interval.

    `rate` overrides accepted/drafts only where a source reports the rate itself (a `vllm bench
    serve` file does, and its counts are recovered from it), so the figure shown is the source's.
    """
    n = round(drafts)
    lo, hi = wilson(max(0, min(round(accepted), n)), n) if n > 0 else (None, None)
    value = rate if rate is not None else (min(1.0, max(0.0, accepted / drafts)) if drafts > 0 else 0.0)
    return PositionStats(position=position, accepted=round(accepted), drafts=n, rate=value, ci_low=lo, ci_high=hi)


def acceptance(num_drafts: float, num_draft_tokens: float, num_accepted_tokens: float, accepted_per_position: Sequence[float]) -> Acceptance:
    """Acceptance from counter deltas (summed over engines). Nothing drafted: no figures, not zeros,
    since a rate of 0 or a length of 1.0 would read as "measured, and bad"."""
    counts = Acceptance(num_drafts=round(num_drafts), num_draft_tokens=round(num_draft_tokens), num_accepted_tokens=round(num_accepted_tokens))
    if num_drafts <= 0:
        return counts
    return replace(
        counts,
        mean_length=1.0 + num_accepted_tokens / num_drafts,
        rate=num_accepted_tokens / num_draft_tokens if num_draft_tokens else None,
        per_position=[position_stats(i, a, num_drafts) for i, a in enumerate(accepted_per_position)],
    )


# --------------------------------------------------------------------------- speedup


@dataclass(frozen=True)
class Speedup:
    """Output throughput relative to the baseline; `ci` None means "no interval" (not "exact")."""

    value: float
    ci: tuple[float, float] | None
    baseline_throughput: float
    reference: bool = False  # the baseline itself: exactly 1, no interval to speak of

    def text(self) -> str:
        return "1.00x (baseline)" if self.reference else speedup_text(self.value, self.ci)


def speedup_text(value: float, ci: tuple[float, float] | None) -> str:
    """ "1.42x [1.30-1.55]" or "1.42x (no interval)": the one way every view prints a speedup."""
    if not math.isfinite(value):
        return "-"
    interval = f"[{ci[0]:.2f}-{ci[1]:.2f}]" if ci and all(math.isfinite(v) for v in ci) else "(no interval)"
    return f"{value:.2f}x {interval}"


def ratio_interval(a: float, a_ci: tuple[float, float] | None, b: float, b_ci: tuple[float, float] | None) -> tuple[float, float] | None:
    """Fieller's 95% interval for a/b from each mean's own 95% interval (independent samples).

    With half-widths h_a, h_b, the bounds are the roots r of (a - r*b)^2 = h_a^2 + r^2*h_b^2. Unlike
    dividing interval ends (lo_a/hi_b, hi_a/lo_b: far too wide, a ~99.9% box) this is a 95% interval,
    and unlike the delta method it stays right when b's interval is wide. None when either interval
    is missing or b's interval reaches 0 (then the ratio is unbounded).
    """
    if a_ci is None or b_ci is None or b <= 0:
        return None
    h_a = max(0.0, (a_ci[1] - a_ci[0]) / 2)
    h_b = max(0.0, (b_ci[1] - b_ci[0]) / 2)
    if h_b >= b:
        return None
    qa = b * b - h_b * h_b
    qb = -2.0 * a * b
    qc = a * a - h_a * h_a
    disc = qb * qb - 4.0 * qa * qc
    root = math.sqrt(max(0.0, disc))
    return ((-qb - root) / (2.0 * qa), (-qb + root) / (2.0 * qa))


def throughput(result: ArmResult | None) -> float | None:
    """The result's output throughput if it is a measurement (finished or stopped early), else None."""
    if result is None or result.status not in SPEEDUP_STATUSES or not result.output_throughput:
        return None
    return result.output_throughput


def speedup(result: ArmResult | None, baseline: ArmResult | None) -> Speedup | None:
    """`result` against `baseline`; None when either has no measured throughput."""
    value, base = throughput(result), throughput(baseline)
    if value is None or base is None or result is None or baseline is None:
        return None
    if result.arm_id == baseline.arm_id:
        return Speedup(value=1.0, ci=None, baseline_throughput=base, reference=True)
    ci = ratio_interval(value, result.output_throughput_ci, base, baseline.output_throughput_ci)
    return Speedup(value=value / base, ci=ci, baseline_throughput=base)


def baseline_result(session: Session, concurrency: int) -> ArmResult | None:
    """The no-speculation arm's result at the same concurrency (speedups never compare across loads)."""
    for arm in _baseline_arms(session).get(concurrency, ()):
        result = session.result_for(arm.id)
        if throughput(result) is not None:
            return result
    return None


_BASELINE_ARMS: OrderedDict[int, tuple[Session, tuple[int, int], dict[int, list[Arm]]]] = OrderedDict()


def _baseline_arms(session: Session) -> dict[int, list[Arm]]:
    """The session's baseline arms by concurrency, remembered for the last few sessions while their
    arm list is the same object and length: asked once per arm, a scan of every arm would make
    listing a 100,000-arm bundle quadratic."""
    key = (id(session.arms), len(session.arms))
    entry = _BASELINE_ARMS.get(id(session))
    if entry is None or entry[0] is not session or entry[1] != key:
        by_level: dict[int, list[Arm]] = {}
        for arm in session.arms:
            if arm.is_baseline:
                by_level.setdefault(arm.concurrency, []).append(arm)
        entry = (session, key, by_level)
        _BASELINE_ARMS[id(session)] = entry
        while len(_BASELINE_ARMS) > 8:
            _BASELINE_ARMS.popitem(last=False)
    return entry[2]


def results_by_arm(session: Session) -> dict[str, ArmResult]:
    """Each arm id's result (the first, as Session.result_for finds it), in one pass."""
    found: dict[str, ArmResult] = {}
    for result in session.results:
        found.setdefault(result.arm_id, result)
    return found


def all_speedups(session: Session) -> dict[str, Speedup | None]:
    """arm_speedup of every arm, linear in arms + results: a listing, comparison or report of a
    100,000-arm bundle must not rescan the arms for each arm's baseline."""
    results = results_by_arm(session)
    baselines: dict[int, ArmResult] = {}
    for arm in session.arms:
        if arm.is_baseline and arm.concurrency not in baselines and throughput(results.get(arm.id)) is not None:
            baselines[arm.concurrency] = results[arm.id]
    found: dict[str, Speedup | None] = {}
    for arm in session.arms:  # the first arm of an id wins, as a scan by id would find it
        if arm.id not in found:
            found[arm.id] = speedup(results.get(arm.id), baselines.get(arm.concurrency))
    return found


def arm_speedup(session: Session, arm: Arm) -> Speedup | None:
    """An arm's speedup against its session's baseline at the arm's concurrency."""
    return speedup(session.result_for(arm.id), baseline_result(session, arm.concurrency))
