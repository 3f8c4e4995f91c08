"""The two derived figures every view shows: acceptance from vLLM's counters, speedup vs the baseline.

One home so that the live TUI, the headless CLI, the report, the store's summaries, the advisor's
local evidence and the recommendation can never show different numbers for one arm.

- Acceptance follows vLLM (vllm/v1/spec_decode/metrics.py): mean acceptance length
  `1 + accepted / drafts` (bonus token included), acceptance rate `accepted / draft_tokens`,
  per-position rate `accepted[i] / drafts` with a Wilson interval. A per-position count above the
  draft count can only come from counters read a moment apart; it is capped at the draft count.
- Speedup is an arm's output throughput over the no-speculation baseline's at the same
  concurrency, and its interval is the one the verdict rests on (`all_speedups`, from the same
  `level_comparisons` the decision calls): one interval per arm in every view, never a narrower one
  beside the verdict's (the Fieller interval from each run's own within-run CI, used before, was one
  such narrower one). No baseline at the arm's level: no figure ("-").
"""

from __future__ import annotations

import functools
import math
import statistics
import sys
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from specadvisor import stats
from specadvisor.domain import Arm, ArmResult, ArmStatus, PositionStats, RequestRecord, RunRecord, Session, SweepSettings
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


def throughput(result: ArmResult | None) -> float | None:
    """The result's output throughput if it is a measurement (finished or stopped early), else None."""
    if result is None or result.status not in SPEEDUP_STATUSES or not result.output_throughput:
        return None
    return result.output_throughput


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


def arm_speedup(session: Session, arm: Arm) -> Speedup | None:
    """An arm's speedup against its session's baseline at the arm's concurrency, as the decision
    computes it (a view listing many arms calls `all_speedups` once instead)."""
    return all_speedups(session).get(arm.id)


# --------------------------------------------------------------------------- the decision's speedup
# The speedup every view shows is the one the verdict rests on (specadvisor.analysis.decision states the
# rule): log-scale, launch-to-launch + within-run noise, paired where per-request records exist, at
# the decision's confidence (its arms and looks share the error). One computation: the decision takes
# its comparisons from `level_comparisons`, the views from `all_speedups`, which calls it.

DEFAULT_CONFIDENCE = 0.95
PRACTICAL_MARGIN = 0.03  # a speedup within 3% is a tie, and ties go to the simpler configuration
# Prior for the launch-to-launch spread (sd of log throughput) and its weight in launches. 7%: the
# pooled spread of repeated launches of the real H200 sessions at concurrency 1 (2026-12-01: baseline
# 3 launches, n-gram 2, the editing workload's baseline 2; 4 degrees of freedom), inside the 4-13% a
# 2-core CPU shows; worth 4 launches, so that a machine's own repeats dominate after a few.
LAUNCH_SPREAD_PRIOR = 0.07
LAUNCH_SPREAD_PRIOR_DF = 4
MIN_TREND_DF = 2  # repeated launches needed before a drift trend is fitted
TREND_SHOWN = 2.0  # a trend is fitted when its slope exceeds this many standard errors
MIN_PAIRED_PROMPTS = 8  # fewer common prompts give no usable prompt-by-prompt spread
MEASURED = ("ok", "stopped_early")  # a run whose figures count (one home: analysis.placement reads it too)

# ---------------------------------------------------------------------- the measurements


@dataclass(frozen=True)
class Launch:
    """One server launch of an arm: its passes over the prompt set (1, or more with more requests)."""

    log_throughput: float  # mean over passes of log(tok/s)
    passes: int
    requests: int  # per pass
    measure_s: float  # measuring time over its passes
    startup_s: float | None
    records: tuple[tuple[RequestRecord, ...], ...]  # per pass (empty: none stored)
    wave: int | None = None  # launch order in the sweep (drift is a trend over it)
    started_at: datetime | None = None  # its first pass's start
    exact_tok_s: float | None = None  # a one-pass launch's figure as measured (exp of its log rounds it)

    @property
    def tok_s(self) -> float:
        """Its throughput: the one pass's, or the passes' geometric mean."""
        return self.exact_tok_s if self.exact_tok_s is not None else math.exp(self.log_throughput)


def launches(result: ArmResult) -> list[Launch]:
    """The arm's measured launches: runs grouped by server launch (a repeat on the same server
    shares its trial, role and wave)."""
    groups: dict[tuple[int, str, int | None, str], list[RunRecord]] = {}
    for run in result.runs:
        if run.status in MEASURED and run.output_throughput and run.output_throughput > 0:
            groups.setdefault((run.trial, run.role, run.wave, run.placement), []).append(run)
    if not groups and result.output_throughput and result.status in (ArmStatus.ok, ArmStatus.stopped_early):
        # measured before runs were recorded (or imported from vllm bench): one launch
        return [
            Launch(
                math.log(result.output_throughput), 1, result.completed, result.duration_s or 0.0, None, (), result.wave, exact_tok_s=result.output_throughput
            )
        ]
    out = []
    for runs in groups.values():
        log_throughput = statistics.fmean(math.log(r.output_throughput or 1.0) for r in runs)
        out.append(
            Launch(
                log_throughput=log_throughput,
                passes=len(runs),
                requests=max(1, round(statistics.fmean(r.completed for r in runs))),
                measure_s=sum(r.duration_s or 0.0 for r in runs),
                startup_s=runs[0].startup_s,
                records=tuple(tuple(r.requests) for r in runs if r.requests),
                wave=runs[0].wave,
                started_at=min((r.started_at for r in runs if r.started_at), default=None),
                exact_tok_s=runs[0].output_throughput if len(runs) == 1 else None,
            )
        )
    return out


Launched = Callable[[ArmResult], list[Launch]]  # `launches`, or a memo of it over one verdict's pass


def launch_memo() -> Launched:
    """`launches`, derived once per result object for as long as the returned function lives: one
    verdict or listing asks for an arm's launches up to six times and the baseline's once per arm
    compared with it. Each result is kept beside its launches, so a reused id cannot return another
    result's; a result changed in place after its first call is not seen (build one per pass)."""
    seen: dict[int, tuple[ArmResult, list[Launch]]] = {}

    def launched(result: ArmResult) -> list[Launch]:
        hit = seen.get(id(result))
        if hit is None or hit[0] is not result:
            hit = (result, launches(result))
            seen[id(result)] = hit
        return hit[1]

    return launched


# ---------------------------------------------------------------------- the noise


@dataclass(frozen=True)
class Noise:
    """The two variance components on the log-throughput scale."""

    launch_var: float  # launch-to-launch, one launch (moderated by the prior)
    launch_df: int  # degrees of freedom: the prior's plus the observed repeats'
    observed_df: int  # repeats actually measured
    observed_sd: float | None  # their spread alone
    request_var: float | None  # within-run, one request; None: no per-request records to tell it apart
    request_df: int = 0
    trend: float = 0.0  # drift: change of log throughput per wave, common to all arms (0: not estimable)
    trend_var: float = 0.0  # its variance
    observed_launch_var: float | None = None  # the repeats' launch component alone (no prior), within-run share taken out (a moment estimate: may be < 0)

    def within_var(self, requests: int, passes: int = 1) -> float:
        """One launch's within-run variance (its requests over `passes` passes)."""
        if self.request_var is None:
            return 0.0
        return self.request_var / max(1, requests * passes)


def estimate_noise(
    session: Session, prior_sd: float = LAUNCH_SPREAD_PRIOR, prior_df: int = LAUNCH_SPREAD_PRIOR_DF, *, launched: Launched | None = None
) -> Noise:
    """Both components from every measured arm of the session (the same machine, the same prompts).
    `launched`: `launches`, or a caller's memo of it (analysis.levels)."""
    launched = launched or launches
    squares, df = 0.0, 0
    request_squares, request_df = 0.0, 0
    request_counts: list[int] = []
    repeated: list[list[Launch]] = []  # arms with two or more launches: their within-run share of `squares`
    centred: list[tuple[float, float]] = []  # (wave - arm's mean wave, log tok/s - arm's mean) for a common drift slope
    for result in session.results:
        arm_launches = launched(result)
        values = [launch.log_throughput for launch in arm_launches]
        if len(values) >= 2:
            mean = statistics.fmean(values)
            squares += sum((v - mean) ** 2 for v in values)
            df += len(values) - 1
            repeated.append(arm_launches)
            waves = [launch.wave for launch in arm_launches]
            if all(w is not None for w in waves):
                mean_wave = statistics.fmean(float(w or 0) for w in waves)
                centred += [(float(w or 0) - mean_wave, v - mean) for w, v in zip(waves, values, strict=True)]
        passes = [p for launch in arm_launches for p in launch.records]
        ss, sdf = _two_way_residual(passes)
        request_squares += ss
        request_df += sdf
        request_counts += [launch.requests for launch in arm_launches]
    # Drift as a linear trend over the launch order, common to every arm (an analysis of covariance):
    # with interleaved launches it cancels from the comparison instead of inflating the spread.
    # Fitted only with two or more repeats: one repeat (the bracket alone) would spend its only degree
    # of freedom on the slope, and with the arm between the two baseline launches nothing would change.
    # And only when the data show one (|slope| over 2 of its standard errors): fitting a drift that is not
    # there costs a degree of freedom and widens every comparison whose arms ran at different times.
    sxx = sum(x * x for x, _ in centred)
    trend = sum(x * y for x, y in centred) / sxx if sxx > 0 and df >= MIN_TREND_DF else 0.0
    fitted_df = df
    if trend:
        left = max(squares - trend * trend * sxx, 0.0)
        if trend * trend * sxx > TREND_SHOWN**2 * left / (df - 1):
            squares, df = left, df - 1
        else:
            trend = 0.0
    request_var = request_squares / request_df if request_df >= 1 else None
    moderated = (prior_df * prior_sd**2 + squares) / (prior_df + df)
    # Launch values carry their own within-run noise: the launch component is what is left of it. The
    # prior describes one-pass launches (run totals), so it loses one pass's share; the repeats lose
    # what their own passes carry (_within_share): a launch with 14 passes over the prompts (more
    # requests on a held server) carries a fourteenth of one pass's, and taking a whole pass's share
    # from it, as before, understated the launch spread and so every interval resting on it.
    typical_requests = statistics.median(request_counts) if request_counts else 1
    within_one = request_var / typical_requests if request_var is not None else 0.0
    within_data = _within_share(repeated, request_var) * (df / fitted_df if fitted_df else 0.0)
    launch_var = max((prior_df * (prior_sd**2 - within_one) + squares - within_data) / (prior_df + df), 0.0)
    return Noise(
        launch_var=launch_var,
        launch_df=prior_df + df,
        observed_df=df,
        observed_sd=math.sqrt(squares / df) if df else None,
        request_var=request_var,
        request_df=request_df,
        trend=trend,
        trend_var=moderated / sxx if sxx > 0 and trend else 0.0,
        observed_launch_var=(squares - within_data) / df if df else None,
    )


def _within_share(repeated: list[list[Launch]], request_var: float | None) -> float:
    """What within-run noise adds, in expectation, to the sum of squares of the arms' launch values
    about their means: for values of variance launch + w_i, E[sum (x_i - mean)^2] = (n - 1) launch +
    (1 - 1/n) sum w_i, where w_i is launch i's within-run share (its requests x its passes)."""
    if request_var is None:
        return 0.0
    total = 0.0
    for arm_launches in repeated:
        n = len(arm_launches)
        total += (1 - 1 / n) * sum(request_var / max(1, x.requests * x.passes) for x in arm_launches)
    return total


def _two_way_residual(passes: list[tuple[RequestRecord, ...]]) -> tuple[float, int]:
    """(residual sum of squares, df) of log request latency in a prompts x passes layout over the
    prompts every pass served: pass shifts (a launch's speed) and prompt effects (lengths) removed."""
    if len(passes) < 2:
        return 0.0, 0
    tables = [{r.index: r.latency_ms for r in p if r.latency_ms > 0} for p in passes]
    common = sorted(set.intersection(*(set(t) for t in tables)))
    if len(common) < MIN_PAIRED_PROMPTS:
        return 0.0, 0
    y = [[math.log(t[i]) for i in common] for t in tables]
    grand = statistics.fmean(v for row in y for v in row)
    row_means = [statistics.fmean(row) for row in y]
    col_means = [statistics.fmean(row[j] for row in y) for j in range(len(common))]
    ss = sum((y[p][j] - row_means[p] - col_means[j] + grand) ** 2 for p in range(len(y)) for j in range(len(common)))
    return ss, (len(y) - 1) * (len(common) - 1)


# ---------------------------------------------------------------------- one comparison


@dataclass(frozen=True)
class Comparison:
    """A speculative arm against the baseline at one level."""

    arm: Arm
    log_ratio: float
    launch_var: float
    within_var: float
    df: float  # the degrees of freedom of its variance (comparison_df)
    quantile: float  # the t value for this comparison's share of the error, at `df`
    paired: bool
    launches: tuple[int, int]  # (arm's, baseline's)
    prompt_wins: tuple[int, int] | None = None  # (prompts where the arm was faster, prompts compared)
    prompt_median: float | None = None  # median per-prompt speedup (baseline latency / arm latency)

    @property
    def se(self) -> float:
        return math.sqrt(self.launch_var + self.within_var)

    @property
    def speedup(self) -> float:
        return ratio_of_logs(self.log_ratio)

    @property
    def interval(self) -> tuple[float, float]:
        half = self.quantile * self.se
        return ratio_of_logs(self.log_ratio - half), ratio_of_logs(self.log_ratio + half)

    @property
    def status(self) -> str:
        """better | not better | open, against the practical margin."""
        low, high = self.interval
        if low > 1 + PRACTICAL_MARGIN:
            return "better"
        if high < 1 + PRACTICAL_MARGIN:
            return "not better"
        return "open"

    @property
    def limited_by(self) -> str:
        return "within-run" if self.within_var > self.launch_var else "launch-to-launch"


def compare(
    arm: Arm,
    arm_result: ArmResult,
    base_result: ArmResult,
    noise: Noise,
    quantile: Callable[[float], float],
    *,
    launched: Launched | None = None,
    reference: Reference | None = None,
) -> Comparison | None:
    """The arm against the baseline; `quantile(df)`: the t value of this comparison's share of the
    error at the degrees of freedom its variance has (comparison_df). `reference`: the baseline's side,
    when the caller compares many arms with one baseline (level_comparisons)."""
    launched = launched or launches
    a = launched(arm_result)
    ref = reference or Reference.of(launched(base_result), noise)
    b = ref.launches
    if not a or not b:
        return None
    side_a, side_b = Side.of(a, noise), ref.side
    d = side_a.log_throughput - side_b.log_throughput
    launch_var = side_a.launch_var + side_b.launch_var
    if noise.trend and all(x.wave is not None for x in (*a, *b)):  # the arms ran at different points of a drift
        apart = side_a.wave - side_b.wave
        d -= noise.trend * apart
        launch_var += noise.trend_var * apart * apart
    within_var = side_a.within_var + side_b.within_var
    wins, median = _prompt_by_prompt(_per_prompt(a), ref.per_prompt)
    paired = wins is not None and noise.request_var is not None
    df = comparison_df(launch_var, noise.launch_df, within_var, noise.request_df)
    return Comparison(arm, d, launch_var, within_var, df, quantile(df), paired, (len(a), len(b)), wins, median)


@dataclass(frozen=True)
class Side:
    """One arm's launches combined: each weighted by its precision, 1 / (launch-to-launch + its own
    within-run share), the usual random-effects weighting. Launches of one pass over the same prompts
    weigh the same, as before; a launch measured longer (more passes over the prompts on a held
    server, sweep/held.py) weighs more where within-run noise dominates. Weighted equally, a launch
    of 14 passes beside one of 1 pass kept the short one's within-run noise as a floor that no
    number of passes could lower, and the step sized on pooled requests (next_step) promised a
    decision the comparison then could not reach."""

    log_throughput: float
    launch_var: float  # the launch-to-launch share of the combined value's variance
    within_var: float  # the within-run share
    wave: float  # the weighted launch order (drift: the trend is taken out at this point)

    @staticmethod
    def of(launched: Sequence[Launch], noise: Noise) -> Side:
        shares = [noise.within_var(x.requests, x.passes) for x in launched]
        totals = [noise.launch_var + w for w in shares]
        weights = [1 / t for t in totals] if all(t > 0 for t in totals) else [1.0] * len(launched)
        total = sum(weights)
        parts = [w / total for w in weights]
        return Side(
            log_throughput=sum(p * x.log_throughput for p, x in zip(parts, launched, strict=True)),
            launch_var=noise.launch_var * sum(p * p for p in parts),
            within_var=sum(p * p * w for p, w in zip(parts, shares, strict=True)),
            wave=sum(p * float(x.wave or 0) for p, x in zip(parts, launched, strict=True)),
        )


@dataclass(frozen=True)
class Reference:
    """The baseline's side of every comparison at a level, derived once: a level of 1,500 arms
    combined the baseline's launches and its per-prompt latencies again for each arm."""

    launches: list[Launch]
    side: Side
    per_prompt: dict[int, float]

    @staticmethod
    def of(launched: list[Launch], noise: Noise) -> Reference:
        empty = Side(0.0, 0.0, 0.0, 0.0)
        return Reference(launched, Side.of(launched, noise) if launched else empty, _per_prompt(launched))


def comparison_df(launch_var: float, launch_df: int, within_var: float, request_df: int) -> float:
    """Welch-Satterthwaite degrees of freedom of a comparison's variance, the sum of a launch-to-launch
    share estimated on `launch_df` and a within-run share estimated on `request_df` (Satterthwaite
    1946), rounded down (conservative, and a few distinct values to look up). Taking the launch df for
    the whole sum, as before, held a comparison limited by within-run noise (on the 2-core CPU box:
    36% per request, the launch share estimated at 0) to the prior's 4 df, t = 4.6 at a late look's
    share of the error instead of 2.7 at the 40-odd df its within-run estimate had: no number of
    passes on running servers could decide it within minutes (benchmarks/decision.py, cpu-edit)."""
    if within_var <= 0 or request_df <= 0:
        return float(launch_df)
    if launch_var <= 0:
        return float(request_df)
    total = launch_var + within_var
    return float(max(1, math.floor(total**2 / (launch_var**2 / max(1, launch_df) + within_var**2 / request_df))))


def _per_prompt(launches_: list[Launch]) -> dict[int, float]:
    """Each prompt's mean log latency over an arm's launches and passes."""
    logs: dict[int, list[float]] = {}
    for launch in launches_:
        for passed in launch.records:
            for r in passed:
                if r.latency_ms > 0:
                    logs.setdefault(r.index, []).append(math.log(r.latency_ms))
    return {i: statistics.fmean(v) for i, v in logs.items()}


def _prompt_by_prompt(pa: dict[int, float], pb: dict[int, float]) -> tuple[tuple[int, int] | None, float | None]:
    """Per-prompt speedups (baseline latency / arm latency, each averaged over the arm's passes on the
    log scale; `_per_prompt` of each side): how many prompts got faster, and the median speedup."""
    common = sorted(set(pa) & set(pb))
    if len(common) < MIN_PAIRED_PROMPTS:
        return None, None
    ratios = [pb[i] - pa[i] for i in common]
    return (sum(1 for r in ratios if r > 0), len(common)), ratio_of_logs(statistics.median(ratios))


def ratio_of_logs(log_ratio: float) -> float:
    """exp(log_ratio), infinite past the float range instead of an OverflowError: a stored baseline
    of 5e-324 tok/s (a bundle's) must show as "-", not crash `sessions show` and the report."""
    return math.exp(log_ratio) if log_ratio < _MAX_LOG else math.inf


_MAX_LOG = math.log(sys.float_info.max)


# Sequential measuring is a group-sequential plan with at most MAX_LOOKS looks at the decision, the
# error split over them in fixed shares (a Bonferroni alpha-spending plan, Lan & DeMets 1983; Pocock-
# like: the later looks get equal shares). The first look gets most of it, so that a clear case is
# decided after one launch per arm. The open-ended series alpha * 6/(pi^2 j^2) it replaces gave the
# second look 15% of the error and the fourth 4%: a case that missed the first look spent its budget
# on looks whose boundaries moved away faster than the data narrowed the interval
# (benchmarks/decision.py: high-drift 16/20 in 21 min against 19/20 in 11 for twice the fixed design).
LOOK_SHARES = (0.6, 0.2, 0.2)
MAX_LOOKS = len(LOOK_SHARES)


def alpha_for_look(confidence: float, look: int, sequential: bool) -> float:
    """This look's share of the error: LOOK_SHARES[look - 1] of alpha when measuring sequentially (the
    shares sum to alpha over the plan's MAX_LOOKS looks); the whole alpha for a fixed design's one look.
    A look beyond the plan (only sessions measured under the open-ended series, which allowed any
    number) keeps that series' share, alpha * 6 / (pi^2 look^2), smaller than any share of the plan."""
    alpha = 1 - confidence
    if not sequential:
        return alpha
    look = max(1, look)
    return alpha * LOOK_SHARES[look - 1] if look <= MAX_LOOKS else alpha * 6 / (math.pi**2 * look**2)


def meets_slo(settings: SweepSettings, result: ArmResult) -> bool:
    """The arm's p99 TPOT and TTFT meet the session's latency target (none set: every arm does)."""
    if settings.slo_tpot_ms is not None and (result.tpot_ms.p99 is None or result.tpot_ms.p99 > settings.slo_tpot_ms):
        return False
    if settings.slo_ttft_ms is not None and (result.ttft_ms.p99 is None or result.ttft_ms.p99 > settings.slo_ttft_ms):
        return False
    return True


def measured_results(session: Session) -> dict[str, ArmResult]:
    """Each arm id's result when it holds a throughput measurement (finished or stopped early)."""
    return {r.arm_id: r for r in session.results if r.output_throughput and r.status in SPEEDUP_STATUSES}


def level_comparisons(
    base: Arm, arms: Sequence[Arm], noise: Noise, quantile: Callable[[float], float], results: dict[str, ArmResult], *, launched: Launched | None = None
) -> list[Comparison]:
    """Each arm against the baseline `base` at its level, strongest first: the decision's comparisons."""
    if base.id not in results:
        return []
    launched = launched or launches
    ref = Reference.of(launched(results[base.id]), noise)
    found = [
        c for a in arms if a.id in results and (c := compare(a, results[a.id], results[base.id], noise, quantile, launched=launched, reference=ref)) is not None
    ]
    return sorted(found, key=lambda c: -c.log_ratio)


def all_speedups(session: Session, *, confidence: float | None = None, looks: int | None = None) -> dict[str, Speedup | None]:
    """Every arm's speedup and interval as the decision computes them (None: not measured, or no
    baseline at its level), linear in arms + results: a listing, comparison or report of a
    100,000-arm bundle must not rescan the arms for each arm's baseline."""
    results = measured_results(session)
    by_level: dict[int, list[Arm]] = {}
    bases: dict[int, Arm] = {}
    found: dict[str, Speedup | None] = {}
    for arm in session.arms:  # the first arm of an id wins, as a scan by id would find it
        if arm.id in found:
            continue
        found[arm.id] = None
        if arm.is_baseline:
            if arm.id in results and arm.concurrency not in bases:
                bases[arm.concurrency] = arm
        elif arm.id in results:
            by_level.setdefault(arm.concurrency, []).append(arm)
    if not bases:
        return found
    launched = launch_memo()
    noise = estimate_noise(session, launched=launched)
    for level, base in bases.items():
        base_tps = results[base.id].output_throughput or 0.0
        found[base.id] = Speedup(value=1.0, ci=None, baseline_throughput=base_tps, reference=True)
        arms = by_level.get(level, [])
        competing = sum(1 for a in arms if meets_slo(session.settings, results[a.id]))
        q = _quantile(session, competing or len(arms), confidence, looks)
        for c in level_comparisons(base, arms, noise, q, results, launched=launched):
            found[c.arm.id] = Speedup(value=c.speedup, ci=c.interval, baseline_throughput=base_tps)
    return found


@functools.lru_cache(maxsize=4096)
def comparison_quantile(confidence: float, looks: int, sequential: bool, arms: int, df: float) -> float:
    """The t value of one comparison when `arms` speculative arms compete at a level: the decision's
    confidence shared over the arms (Bonferroni) and over the looks of sequential measuring."""
    alpha = alpha_for_look(confidence, looks, sequential) / max(1, arms)
    return stats.t_quantile(1 - alpha / 2, df)


def _quantile(session: Session, arms: int, confidence: float | None, looks: int | None) -> Callable[[float], float]:
    """The quantile the session's verdict used: its stored confidence and looks (else the settings')."""
    rec = session.recommendation
    confidence = confidence or (rec.confidence if rec and rec.confidence else None) or session.settings.confidence or DEFAULT_CONFIDENCE
    looks = looks or (rec.looks if rec and rec.verdict else None) or session.settings.looks or 1
    sequential = session.settings.budget_s is not None
    return lambda df: comparison_quantile(confidence, looks, sequential, arms, df)
