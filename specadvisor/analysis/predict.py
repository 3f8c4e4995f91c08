"""Predict throughput at untested N from the arms measured so far.

Per-position acceptance is unconditional ("the first i+1 draft tokens were all accepted"), so the
rates measured once at the largest N give the mean acceptance length at every smaller N:
AL(N) = 1 + sum of the first N rates. Throughput is AL(N) / step_cost(N) with a linear step cost
c0 + c1*N fitted by weighted least squares (noisier arms count less) on the measured arms of the
same family (the baseline is the point N=0, AL=1, used while only one speculative arm is measured).
Chain drafters show a steep c1, parallel drafters a nearly flat one; ngram drafts for free but still
pays verification: it fits the same line.
A measured arm's prediction comes from a fit that leaves that arm out, so its prediction error is an
honest out-of-sample error.

Regimes: a speculative server may run another scheduler than the baseline (vLLM 0.26 turns async
scheduling off and falls back to the older model runner when ngram is on), so its step cost is not
the baseline's. A prediction is CONFIDENT only when its line is fitted on two or more speculative
arms of its own family and concurrency, and the family's measured arms do not contradict the model
(a step cost falling with N beyond noise, or an out-of-sample miss beyond noise); it carries its own
uncertainty. Anything else (a line anchored on the baseline, a flat cost assumed from one arm) is a
rough guess: kept for --adaptive's ordering, withheld from every view with the reason.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from pydantic import BaseModel

from specadvisor import bounds
from specadvisor.analysis.arms import family_key, family_label
from specadvisor.analysis.levels import by_level
from specadvisor.domain import Arm, ArmResult, ArmStatus, Session

USABLE = {ArmStatus.ok}
DEFAULT_REL_ERROR = 0.05  # a throughput without an interval: assume 5%
MIN_REL_ERROR = 0.01
MAX_REL_ERROR = 10.0  # an interval 40x its value says nothing more than a wide one
MIN_THROUGHPUT, MAX_THROUGHPUT = 1e-6, bounds.MAX_TOKENS_PER_S
CONTRADICTION_FLOOR = 0.15  # an out-of-sample miss beyond max(15%, 3 x its noise) contradicts the model


class Prediction(BaseModel):
    """Predicted throughput of one arm (or one N of a family), beside the measurement when there is one."""

    arm_id: str | None
    family: str
    label: str
    n: int
    concurrency: int
    predicted_throughput: float
    predicted_acceptance_length: float
    measured_throughput: float | None = None
    error_pct: float | None = None  # (predicted - measured) / measured * 100, out of sample
    reference: bool = False  # the arm whose per-position rates drive the family's predictions
    basis: str = ""  # what the fit used, in words
    confident: bool = False  # fitted in its own regime and not contradicted: views show only these
    uncertainty_pct: float | None = None  # its own 95% error (percent of the prediction), when confident
    withheld: str | None = None  # why a view does not show it (a rough guess), when not confident


@dataclass
class _Point:
    arm: Arm
    n: int
    al: float
    throughput: float
    rel_error: float = DEFAULT_REL_ERROR


def measured(session: Session) -> dict[str, ArmResult]:
    """Results usable for prediction and ranking: finished, with a finite positive throughput (import
    refuses absurd figures; this keeps a fit from dividing by an overflowed weight all the same)."""
    return {r.arm_id: r for r in session.results if r.status in USABLE and _usable(r.output_throughput)}


def _usable(value: float | None) -> bool:
    return value is not None and math.isfinite(value) and MIN_THROUGHPUT <= value <= MAX_THROUGHPUT


def acceptance_length(rates: list[float], n: int) -> float:
    """Mean acceptance length at N from per-position rates measured at N >= n (bonus token included)."""
    return 1.0 + sum(rates[:n])


def fit_step_cost(points: list[tuple[int, float, float]], rel_errors: list[float] | None = None) -> tuple[float, float] | None:
    """Weighted least squares of cost = AL / throughput on N: returns (c0, c1), None with < 2 distinct N.

    rel_errors are each throughput's relative standard error: a noisy arm (a wide interval, e.g. a
    neighbour loaded the machine) then pulls the line less than a steady one.
    """
    if len({n for n, _, _ in points}) < 2:
        return None
    xs = [float(n) for n, _, _ in points]
    ys = [al / tps for _, al, tps in points]
    rel = rel_errors or [DEFAULT_REL_ERROR] * len(points)
    ws = [1.0 / (y * max(r, MIN_REL_ERROR)) ** 2 for y, r in zip(ys, rel, strict=True)]
    sw = sum(ws)
    if not math.isfinite(sw) or sw <= 0:
        return None
    mx = sum(w * x for w, x in zip(ws, xs, strict=True)) / sw
    my = sum(w * y for w, y in zip(ws, ys, strict=True)) / sw
    sxx = sum(w * (x - mx) ** 2 for w, x in zip(ws, xs, strict=True))
    if not math.isfinite(sxx) or sxx <= 0:
        return None
    c1 = sum(w * (x - mx) * (y - my) for w, x, y in zip(ws, xs, ys, strict=True)) / sxx
    c0 = my - c1 * mx
    return (c0, c1) if math.isfinite(c0) and math.isfinite(c1) else None


def relative_error(result: ArmResult) -> float:
    """Relative standard error of a measured throughput, from its 95% interval (default 5%)."""
    ci, throughput = result.output_throughput_ci, result.output_throughput
    if not ci or throughput is None or not _usable(throughput) or not all(math.isfinite(v) for v in ci) or ci[1] < ci[0]:
        return DEFAULT_REL_ERROR
    return min(MAX_REL_ERROR, max(MIN_REL_ERROR, (ci[1] - ci[0]) / (2 * 1.96 * throughput)))


def predict_throughput(session: Session) -> dict[str, Prediction]:
    """Predictions for every speculative arm of the plan, keyed by arm id, for each concurrency level.

    Also covers N values not in the plan (1..largest measured N), keyed "<family label>@n<N>@c<C>",
    so a chart can draw the whole predicted curve. Families without a measured arm that reports
    per-position acceptance are left out: nothing to predict from.
    """
    results = measured(session)
    out: dict[str, Prediction] = {}
    levels = by_level(session.arms, results)  # one pass over the arms, not one per level: linear in arms
    baselines: dict[int, _Point | None] = {}
    for (fam, conc), arms in _families(session).items():
        if conc not in baselines:
            baselines[conc] = _baseline_point(levels.get(conc, []), results)
        baseline = baselines[conc]
        points = [p for a in arms if a.id in results if (p := _point(a, results[a.id])) is not None]
        reference = _reference(points, results)
        if reference is None:
            continue
        rates = results[reference.arm.id].per_position_acceptance
        max_n = min(reference.n, len(rates))
        contradiction = _contradiction(points, reference)
        by_n = {a.n: a for a in arms if a.n is not None}  # a family's arms all have an N
        for n in sorted(set(range(1, max_n + 1)) | set(by_n)):
            arm = by_n.get(n)
            pred = _predict_one(n, rates, points, baseline, leave_out=arm.id if arm is not None else None, reference=reference)
            if pred is None:
                continue
            throughput, al, basis, uncertainty = pred
            meas = results[arm.id].output_throughput if arm is not None and arm.id in results else None
            is_ref = arm is not None and arm.id == reference.arm.id
            error = None if meas is None or is_ref else (throughput - meas) / meas * 100.0
            key = arm.id if arm is not None else f"{family_label(reference.arm)}@n{n}@c{conc}"
            withheld = None if is_ref else (contradiction or (None if uncertainty is not None else _rough_reason(basis)))
            out[key] = Prediction(
                arm_id=arm.id if arm is not None else None,
                family=fam,
                label=f"{family_label(reference.arm)} N={n}",
                n=n,
                concurrency=conc,
                predicted_throughput=throughput,
                predicted_acceptance_length=al,
                measured_throughput=meas,
                error_pct=error,
                reference=is_ref,
                basis=basis,
                confident=withheld is None,
                uncertainty_pct=uncertainty if withheld is None and not is_ref else None,
                withheld=withheld,
            )
    return out


# The views below take `predictions` (predict_throughput(session)) when the caller has them already:
# a report asks for three of them, and each fit walks every arm of the session.


def confident_predictions(session: Session, predictions: dict[str, Prediction] | None = None) -> dict[str, Prediction]:
    """What views show: predictions fitted in their own regime and not contradicted (and references)."""
    return {k: p for k, p in (predictions if predictions is not None else predict_throughput(session)).items() if p.confident}


def withheld_predictions(session: Session, predictions: dict[str, Prediction] | None = None) -> dict[str, str]:
    """Arm id -> why its prediction is not shown (measured or planned arms only)."""
    return {k: p.withheld for k, p in (predictions if predictions is not None else predict_throughput(session)).items() if p.arm_id and p.withheld}


def prediction_errors(session: Session, *, rough: bool = False, predictions: dict[str, Prediction] | None = None) -> dict[str, float]:
    """Out-of-sample prediction error (percent) of every measured arm with a confident prediction
    (with rough=True, of rough guesses too: --adaptive's margin learns from its own misses)."""
    found = predictions if predictions is not None else predict_throughput(session)
    return {k: p.error_pct for k, p in found.items() if p.error_pct is not None and p.arm_id and (rough or p.confident)}


def mean_abs_error_pct(session: Session, *, rough: bool = False, predictions: dict[str, Prediction] | None = None) -> float | None:
    errors = list(prediction_errors(session, rough=rough, predictions=predictions).values())
    return sum(abs(e) for e in errors) / len(errors) if errors else None


# ---------------------------------------------------------------------- helpers


def _families(session: Session) -> dict[tuple[str, int], list[Arm]]:
    groups: dict[tuple[str, int], list[Arm]] = defaultdict(list)
    for arm in session.arms:
        if not arm.is_baseline and arm.n:
            groups[(family_key(arm), arm.concurrency)].append(arm)
    return groups


def _baseline_point(level: list[Arm], results: dict[str, ArmResult]) -> _Point | None:
    """The first measured baseline of a level (`level`: its arms holding a result, in session order)."""
    for arm in level:
        if arm.is_baseline:
            r = results[arm.id]
            if r.output_throughput is not None:  # always, for a `measured` result
                return _Point(arm=arm, n=0, al=1.0, throughput=r.output_throughput, rel_error=relative_error(r))
    return None


def _point(arm: Arm, result: ArmResult) -> _Point | None:
    """A speculative arm's measured point (None without an N, a throughput or an acceptance length)."""
    if arm.n is None or result.output_throughput is None:
        return None
    al = result.mean_acceptance_length
    if al is None and result.per_position:
        al = acceptance_length(result.per_position_acceptance, arm.n)
    if al is None:
        return None
    return _Point(arm=arm, n=arm.n, al=al, throughput=result.output_throughput, rel_error=relative_error(result))


def _reference(points: list[_Point], results: dict[str, ArmResult]) -> _Point | None:
    with_rates = [p for p in points if results[p.arm.id].per_position]
    return max(with_rates, key=lambda p: p.n) if with_rates else None


def _predict_one(
    n: int, rates: list[float], points: list[_Point], baseline: _Point | None, *, leave_out: str | None, reference: _Point
) -> tuple[float, float, str, float | None] | None:
    """(throughput, AL, basis, uncertainty %) at N; uncertainty None marks a rough guess (another
    regime's point in the fit, or a flat cost assumed)."""
    if n > len(rates):
        return None  # cannot extrapolate acceptance past the largest measured N
    al = acceptance_length(rates, n)
    if leave_out == reference.arm.id:
        return reference.throughput, reference.al, "measured (reference arm)", None
    used = [p for p in points if p.arm.id != leave_out]
    in_regime = len({p.n for p in used}) >= 2
    if not in_regime and baseline:
        # Only one speculative point: anchor the line on the baseline, a rough guess (the baseline may
        # run another scheduler; with two or more speculative points it is left out).
        used.append(baseline)
    fit = fit_step_cost([(p.n, p.al, p.throughput) for p in used], [p.rel_error for p in used])
    names = ", ".join(sorted("baseline" if p.n == 0 else f"N={p.n}" for p in used))
    if fit is not None:
        c0, c1 = fit
        cost = c0 + c1 * n
        if cost > 0:
            uncertainty = _uncertainty(used, n, cost) if in_regime else None
            return al / cost, al, f"AL from N={reference.n} rates; step cost fitted on {names}", uncertainty
    # One point only: assume a flat step cost (optimistic; says so).
    return reference.throughput * al / reference.al, al, f"AL from N={reference.n} rates; flat step cost assumed (only {names})", None


def _uncertainty(used: list[_Point], n: int, cost: float) -> float:
    """95% error of the predicted step cost at N (percent), propagated from the fitted arms' own
    throughput errors through the weighted least-squares line."""
    xs = [float(p.n) for p in used]
    ys = [p.al / p.throughput for p in used]
    sds = [y * max(p.rel_error, MIN_REL_ERROR) for y, p in zip(ys, used, strict=True)]
    ws = [1.0 / sd**2 for sd in sds]
    sw = sum(ws)
    mx = sum(w * x for w, x in zip(ws, xs, strict=True)) / sw
    sxx = sum(w * (x - mx) ** 2 for w, x in zip(ws, xs, strict=True))
    var = 1.0 / sw + ((n - mx) ** 2 / sxx if sxx > 0 else 0.0)
    return 1.96 * math.sqrt(var) / cost * 100.0


def _contradiction(points: list[_Point], reference: _Point) -> str | None:
    """Why the family's measured arms contradict the step-cost model, or None.

    The step cost may not fall with N beyond the arms' noise (more drafting and verifying is never
    cheaper), and with three or more arms none may miss its out-of-sample prediction by more than
    max(15%, 3 x its noise)."""
    spec = sorted(points, key=lambda p: p.n)
    if len({p.n for p in spec}) < 2:
        return None
    fit = fit_step_cost([(p.n, p.al, p.throughput) for p in spec], [p.rel_error for p in spec])
    if fit is None:
        return None
    c0, c1 = fit
    lo, hi = spec[0], spec[-1]
    noise = 2 * math.hypot(lo.rel_error, hi.rel_error)
    if c0 <= 0:
        return "the measured arms put the step cost at N=0 below zero: the step-cost model does not fit them"
    if c1 < 0 and -c1 * (hi.n - lo.n) / (c0 + c1 * lo.n) > noise:
        drop = -c1 * (hi.n - lo.n) / (c0 + c1 * lo.n)
        return (
            f"the measured step cost falls {drop:.0%} from N={lo.n} to N={hi.n}, beyond noise ({noise:.0%}): the step-cost model does not hold for these arms"
        )
    if len({p.n for p in spec}) >= 3:
        for p in spec:
            if p.arm.id == reference.arm.id:
                continue
            rest = [q for q in spec if q.arm.id != p.arm.id]
            f = fit_step_cost([(q.n, q.al, q.throughput) for q in rest], [q.rel_error for q in rest])
            if f is None or f[0] + f[1] * p.n <= 0:
                continue
            predicted = p.al / (f[0] + f[1] * p.n)
            miss = abs(predicted - p.throughput) / p.throughput
            if miss > max(CONTRADICTION_FLOOR, 3 * p.rel_error):
                return (
                    f"N={p.n} measured {p.throughput:.1f} tok/s, {miss:.0%} off what the other arms predict: the step-cost model does not hold for these arms"
                )
    return None


def _rough_reason(basis: str) -> str:
    if "baseline" in basis:
        return (
            "only one other speculative arm of this family and concurrency: a line through the baseline would "
            "mix regimes (speculation may change vLLM's scheduler); measure another N to predict"
        )
    return "only one speculative arm measured: how the step cost grows with N is unknown"
