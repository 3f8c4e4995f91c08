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
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from pydantic import BaseModel

from specadvisor.domain import Arm, ArmResult, ArmStatus, Session
from specadvisor.sweep.arms import family_key, family_label

USABLE = {ArmStatus.ok}
DEFAULT_REL_ERROR = 0.05  # a throughput without an interval: assume 5%
MIN_REL_ERROR = 0.01


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


@dataclass
class _Point:
    arm: Arm
    n: int
    al: float
    throughput: float
    rel_error: float = DEFAULT_REL_ERROR


def measured(session: Session) -> dict[str, ArmResult]:
    """Results usable for prediction and ranking: finished, with a throughput."""
    return {
        r.arm_id: r
        for r in session.results
        if r.status in USABLE and r.output_throughput is not None and r.output_throughput > 0
    }


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
    mx = sum(w * x for w, x in zip(ws, xs, strict=True)) / sw
    my = sum(w * y for w, y in zip(ws, ys, strict=True)) / sw
    sxx = sum(w * (x - mx) ** 2 for w, x in zip(ws, xs, strict=True))
    c1 = sum(w * (x - mx) * (y - my) for w, x, y in zip(ws, xs, ys, strict=True)) / sxx
    c0 = my - c1 * mx
    return c0, c1


def relative_error(result: ArmResult) -> float:
    """Relative standard error of a measured throughput, from its 95% interval (default 5%)."""
    ci = result.output_throughput_ci
    if not ci or not result.output_throughput:
        return DEFAULT_REL_ERROR
    return max(MIN_REL_ERROR, (ci[1] - ci[0]) / (2 * 1.96 * result.output_throughput))


def predict_throughput(session: Session) -> dict[str, Prediction]:
    """Predictions for every speculative arm of the plan, keyed by arm id, for each concurrency level.

    Also covers N values not in the plan (1..largest measured N), keyed "<family label>@n<N>@c<C>",
    so a chart can draw the whole predicted curve. Families without a measured arm that reports
    per-position acceptance are left out: nothing to predict from.
    """
    results = measured(session)
    out: dict[str, Prediction] = {}
    for (fam, conc), arms in _families(session).items():
        baseline = _baseline_point(session, results, conc)
        points = [_point(a, results[a.id]) for a in arms if a.id in results]
        points = [p for p in points if p is not None]
        reference = _reference(points, results)
        if reference is None:
            continue
        rates = results[reference.arm.id].per_position_acceptance
        max_n = min(reference.n, len(rates))
        by_n = {a.n: a for a in arms}
        for n in sorted(set(range(1, max_n + 1)) | set(by_n)):
            arm = by_n.get(n)
            pred = _predict_one(n, rates, points, baseline, leave_out=arm.id if arm is not None else None, reference=reference)
            if pred is None:
                continue
            throughput, al, basis = pred
            meas = results[arm.id].output_throughput if arm is not None and arm.id in results else None
            is_ref = arm is not None and arm.id == reference.arm.id
            error = None if meas is None or is_ref else (throughput - meas) / meas * 100.0
            key = arm.id if arm is not None else f"{family_label(reference.arm)}@n{n}@c{conc}"
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
            )
    return out


def prediction_errors(session: Session) -> dict[str, float]:
    """Out-of-sample prediction error (percent) of every measured arm that has one."""
    return {k: p.error_pct for k, p in predict_throughput(session).items() if p.error_pct is not None and p.arm_id}


def mean_abs_error_pct(session: Session) -> float | None:
    errors = list(prediction_errors(session).values())
    return sum(abs(e) for e in errors) / len(errors) if errors else None


# ---------------------------------------------------------------------- helpers


def _families(session: Session) -> dict[tuple[str, int], list[Arm]]:
    groups: dict[tuple[str, int], list[Arm]] = defaultdict(list)
    for arm in session.arms:
        if not arm.is_baseline and arm.n:
            groups[(family_key(arm), arm.concurrency)].append(arm)
    return groups


def _baseline_point(session: Session, results: dict[str, ArmResult], conc: int) -> _Point | None:
    for arm in session.arms:
        if arm.is_baseline and arm.concurrency == conc and arm.id in results:
            r = results[arm.id]
            return _Point(arm=arm, n=0, al=1.0, throughput=r.output_throughput, rel_error=relative_error(r))
    return None


def _point(arm: Arm, result: ArmResult) -> _Point | None:
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
) -> tuple[float, float, str] | None:
    if n > len(rates):
        return None  # cannot extrapolate acceptance past the largest measured N
    al = acceptance_length(rates, n)
    if leave_out == reference.arm.id:
        return reference.throughput, reference.al, "measured (reference arm)"
    used = [p for p in points if p.arm.id != leave_out]
    if len({p.n for p in used}) < 2 and baseline:
        # Only one speculative point: anchor the line on the baseline. With two or more, the baseline
        # is left out: turning speculation on adds a fixed per-step overhead it does not have.
        used.append(baseline)
    fit = fit_step_cost([(p.n, p.al, p.throughput) for p in used], [p.rel_error for p in used])
    names = ", ".join(sorted("baseline" if p.n == 0 else f"N={p.n}" for p in used))
    if fit is not None:
        c0, c1 = fit
        cost = c0 + c1 * n
        if cost > 0:
            return al / cost, al, f"AL from N={reference.n} rates; step cost fitted on {names}"
    # One point only: assume a flat step cost (optimistic; says so).
    return reference.throughput * al / reference.al, al, f"AL from N={reference.n} rates; flat step cost assumed (only {names})"
