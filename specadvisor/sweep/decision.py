"""The decision a sweep answers, stated up front: at each concurrency level, speculate (with which
arm) or not, at a stated confidence; pure functions over stored measurements (no I/O), so that a
stored or imported session can be re-judged anywhere (`sessions show --recompute`).

The rule
--------
- The quantity judged is the speedup of each speculative arm over the no-speculation baseline:
  d = log(arm throughput / baseline throughput), each throughput the geometric mean of the arm's
  launches. The answer is for the workload as its prompt set samples it: at T=0 every arm serves the
  same prompts in the same order, so prompt lengths are shared and cancel in the comparison.
- Ties go to the simpler configuration. A gain within PRACTICAL_MARGIN (3%) is a tie: smaller than
  what a redeploy, a drafter's memory and a second code path are worth, and about the launch-to-launch
  spread of one server, so a smaller "win" would not be reproducible. "speculate: X" needs the whole
  interval of X's speedup above 1.03; "do not speculate" needs every speculative arm's interval below
  1.03 (slower, or not faster by more than the margin); otherwise the level is undecided. Among arms
  that clear the bar, the simplest one (no drafter model before a drafter, then the smaller N) whose
  estimated speedup is within the margin of the best one's wins.
- Confidence (default 95%, `sweep --confidence`) is shared by every statement of a decision: the
  speculative arms at a level (Bonferroni over the arms) and the looks of sequential measuring
  (a union bound over looks, alpha_j = alpha * 6 / (pi^2 j^2), which sums to alpha over any number
  of looks: the Bonferroni form of an alpha-spending function, Lan & DeMets 1983; a simple anytime-
  valid rule in the sense of Howard et al. 2021, so checking after every round never inflates the
  error). Intervals are Student t on the log scale.

The noise: two components, estimated from the data
---------------------------------------------------
- launch-to-launch: how much one arm's throughput moves from one server launch to the next (trials,
  the baseline's end-of-sweep bracket, confirmation runs). The drift between the baseline's first run
  and its bracket is one such observation, not a veto; a drift common to all arms is fitted as a linear
  trend over the launch order (one slope, an analysis of covariance) and taken out of the comparison,
  so interleaved launches cancel it instead of it inflating the spread. Pooled over arms (log scale) and combined with
  a declared prior (LAUNCH_SPREAD_PRIOR, worth LAUNCH_SPREAD_PRIOR_DF launches) as an empirical-Bayes
  moderated variance (Smyth 2004): with one repeat a t interval on one degree of freedom is 12.7
  standard errors wide and could never decide anything, while the prior alone would ignore a noisy
  machine; the data outweigh the prior as repeats accumulate.
- within-run: how much a launch's total moves from request to request noise, from per-request records.
  Repeated passes over the same prompts (launches of one arm, or more requests on one server) are
  compared prompt by prompt (a two-way prompts x passes layout: prompt lengths cancel, and the
  residual is the noise of one request); one launch's share is that over its requests. Without
  per-request records (sessions before schema 1.2) it cannot be told apart: it is inside the
  launch-to-launch spread of run totals, and the comparison is "unpaired".
An undecided level names the component that limits it and what to measure next (sweep.decision
`next_step`, which the runner's sequential measuring follows).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

from specadvisor import stats
from specadvisor.domain import Arm, ArmResult, ArmStatus, ConcurrencyPick, RequestRecord, RunRecord, Session
from specadvisor.sweep.arms import family_label
from specadvisor.sweep.drift import gpu_change

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
MAX_EXTRA_LAUNCHES = 20  # beyond this, "more measuring" is not an answer worth giving
_MEASURED = ("ok", "stopped_early")


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


def launches(result: ArmResult) -> list[Launch]:
    """The arm's measured launches: runs grouped by server launch (a repeat on the same server
    shares its trial, role and wave)."""
    groups: dict[tuple[int, str, int | None, str], list[RunRecord]] = {}
    for run in result.runs:
        if run.status in _MEASURED and run.output_throughput and run.output_throughput > 0:
            groups.setdefault((run.trial, run.role, run.wave, run.placement), []).append(run)
    if not groups and result.output_throughput and result.status in (ArmStatus.ok, ArmStatus.stopped_early):
        # measured before runs were recorded (or imported from vllm bench): one launch
        return [Launch(math.log(result.output_throughput), 1, result.completed, result.duration_s or 0.0, None, (), result.wave)]
    out = []
    for runs in groups.values():
        out.append(
            Launch(
                log_throughput=statistics.fmean(math.log(r.output_throughput or 1.0) for r in runs),
                passes=len(runs),
                requests=max(1, round(statistics.fmean(r.completed for r in runs))),
                measure_s=sum(r.duration_s or 0.0 for r in runs),
                startup_s=runs[0].startup_s,
                records=tuple(tuple(r.requests) for r in runs if r.requests),
                wave=runs[0].wave,
            )
        )
    return out


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

    def within_var(self, requests: int, passes: int = 1) -> float:
        """One launch's within-run variance (its requests over `passes` passes)."""
        if self.request_var is None:
            return 0.0
        return self.request_var / max(1, requests * passes)


def estimate_noise(session: Session, prior_sd: float = LAUNCH_SPREAD_PRIOR, prior_df: int = LAUNCH_SPREAD_PRIOR_DF) -> Noise:
    """Both components from every measured arm of the session (the same machine, the same prompts)."""
    squares, df = 0.0, 0
    request_squares, request_df = 0.0, 0
    request_counts: list[int] = []
    centred: list[tuple[float, float]] = []  # (wave - arm's mean wave, log tok/s - arm's mean) for a common drift slope
    for result in session.results:
        arm_launches = launches(result)
        values = [launch.log_throughput for launch in arm_launches]
        if len(values) >= 2:
            mean = statistics.fmean(values)
            squares += sum((v - mean) ** 2 for v in values)
            df += len(values) - 1
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
    if trend:
        left = max(squares - trend * trend * sxx, 0.0)
        if trend * trend * sxx > TREND_SHOWN**2 * left / (df - 1):
            squares, df = left, df - 1
        else:
            trend = 0.0
    request_var = request_squares / request_df if request_df >= 1 else None
    moderated = (prior_df * prior_sd**2 + squares) / (prior_df + df)
    typical_requests = statistics.median(request_counts) if request_counts else 1
    # run totals carry their own within-run noise: the launch component is what is left of it
    within_one = request_var / typical_requests if request_var is not None else 0.0
    launch_var = max(moderated - within_one, 0.0)
    return Noise(
        launch_var=launch_var,
        launch_df=prior_df + df,
        observed_df=df,
        observed_sd=math.sqrt(squares / df) if df else None,
        request_var=request_var,
        request_df=request_df,
        trend=trend,
        trend_var=moderated / sxx if sxx > 0 and trend else 0.0,
    )


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
    df: int
    quantile: float  # the t value for this comparison's share of the error
    paired: bool
    launches: tuple[int, int]  # (arm's, baseline's)
    prompt_wins: tuple[int, int] | None = None  # (prompts where the arm was faster, prompts compared)
    prompt_median: float | None = None  # median per-prompt speedup (baseline latency / arm latency)

    @property
    def se(self) -> float:
        return math.sqrt(self.launch_var + self.within_var)

    @property
    def speedup(self) -> float:
        return math.exp(self.log_ratio)

    @property
    def interval(self) -> tuple[float, float]:
        half = self.quantile * self.se
        return math.exp(self.log_ratio - half), math.exp(self.log_ratio + half)

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


def compare(arm: Arm, arm_result: ArmResult, base_result: ArmResult, noise: Noise, quantile: float) -> Comparison | None:
    a, b = launches(arm_result), launches(base_result)
    if not a or not b:
        return None
    d = statistics.fmean(x.log_throughput for x in a) - statistics.fmean(x.log_throughput for x in b)
    launch_var = noise.launch_var * (1 / len(a) + 1 / len(b))
    if noise.trend and all(x.wave is not None for x in (*a, *b)):  # the arms ran at different points of a drift
        apart = statistics.fmean(float(x.wave or 0) for x in a) - statistics.fmean(float(x.wave or 0) for x in b)
        d -= noise.trend * apart
        launch_var += noise.trend_var * apart * apart
    within_var = sum(noise.within_var(x.requests, x.passes) for x in a) / len(a) ** 2 + sum(noise.within_var(x.requests, x.passes) for x in b) / len(b) ** 2
    wins, median = _prompt_by_prompt(a, b)
    paired = wins is not None and noise.request_var is not None
    return Comparison(arm, d, launch_var, within_var, noise.launch_df, quantile, paired, (len(a), len(b)), wins, median)


def _prompt_by_prompt(a: list[Launch], b: list[Launch]) -> tuple[tuple[int, int] | None, float | None]:
    """Per-prompt speedups (baseline latency / arm latency, each averaged over the arm's passes on the
    log scale): how many prompts got faster, and the median speedup."""

    def per_prompt(launches_: list[Launch]) -> dict[int, float]:
        logs: dict[int, list[float]] = {}
        for launch in launches_:
            for passed in launch.records:
                for r in passed:
                    if r.latency_ms > 0:
                        logs.setdefault(r.index, []).append(math.log(r.latency_ms))
        return {i: statistics.fmean(v) for i, v in logs.items()}

    pa, pb = per_prompt(a), per_prompt(b)
    common = sorted(set(pa) & set(pb))
    if len(common) < MIN_PAIRED_PROMPTS:
        return None, None
    ratios = [pb[i] - pa[i] for i in common]
    return (sum(1 for r in ratios if r > 0), len(common)), math.exp(statistics.median(ratios))


# ---------------------------------------------------------------------- the level's answer


@dataclass
class LevelDecision:
    """The answer at one concurrency level, with what it rests on."""

    concurrency: int
    decision: str  # speculate | do not speculate | undecided
    verdict: str
    arm: Arm | None = None
    chosen: Comparison | None = None  # the comparison the verdict rests on (the best arm's when not speculating)
    comparisons: list[Comparison] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    limited_by: str = ""
    next_step: NextStep | None = None

    def pick(self) -> ConcurrencyPick:
        c = self.chosen
        return ConcurrencyPick(
            concurrency=self.concurrency,
            arm_id=self.arm.id if self.arm else None,
            do_not_speculate=self.decision == "do not speculate",
            speculative_config=dict(self.arm.speculative_config) if self.arm and self.arm.speculative_config else None,
            speedup=c.speedup if c else None,
            speedup_ci=c.interval if c else None,
            summary=self.reasons[0] if self.reasons else self.verdict,
            decision=self.decision,  # type: ignore[arg-type]
            verdict=self.verdict,
            comparison=("paired" if any(x.paired for x in self.comparisons) else "unpaired") if self.comparisons else "",
            limited_by=self.limited_by,  # type: ignore[arg-type]
            reasons=list(self.reasons),
        )


@dataclass(frozen=True)
class NextStep:
    """What measuring would decide an open level: more requests on the contenders' servers, or
    another launch of each contender, and about how long."""

    kind: str  # requests | launch
    arm_ids: tuple[str, ...]  # the contenders (the baseline and the open arms)
    amount: int  # extra requests per contender, or extra launches per contender
    seconds: float | None  # None: more than MAX_EXTRA_LAUNCHES launches would be needed

    def text(self, names: str) -> str:
        if self.kind == "requests":
            what = f"about {self.amount} more requests on each of {names}'s servers"
        else:
            what = f"{self.amount} more launch{'es' if self.amount > 1 else ''} of each of {names}"
        if self.seconds is None:
            return f"{what} might not be enough: the gain sits at the {PRACTICAL_MARGIN * 100:.0f}% margin"
        return f"{what} for about {_minutes(self.seconds)} more"


def alpha_for_look(confidence: float, look: int, sequential: bool) -> float:
    """This look's share of the error: alpha * 6 / (pi^2 look^2) when measuring sequentially (sums to
    alpha over any number of looks); the whole alpha for a fixed design's one look."""
    alpha = 1 - confidence
    return alpha * 6 / (math.pi**2 * max(1, look) ** 2) if sequential else alpha


def simplicity(arm: Arm) -> tuple[int, int]:
    """Simpler first: no speculation, then methods without a drafter model, then the smaller N."""
    if arm.is_baseline:
        return (-1, 0)
    drafter = bool(arm.speculative_config and arm.speculative_config.get("model"))
    return (1 if drafter else 0, arm.n or 0)


def decide_level(
    session: Session,
    conc: int,
    noise: Noise,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    looks: int = 1,
    sequential: bool = False,
    eligible: list[Arm] | None = None,
    notes: list[str] | None = None,
) -> LevelDecision:
    """The answer at concurrency `conc`. `eligible`: the speculative arms allowed to compete (a latency
    target may leave some out; `notes` say so); by default every measured speculative arm."""
    results = {r.arm_id: r for r in session.results if r.output_throughput and r.status in (ArmStatus.ok, ArmStatus.stopped_early)}
    base = next((a for a in session.arms if a.is_baseline and a.concurrency == conc and a.id in results), None)
    spec = eligible if eligible is not None else [a for a in session.arms if not a.is_baseline and a.concurrency == conc and a.id in results]
    spec = [a for a in spec if a.id in results]
    head = f"measured at concurrency {conc}, {session.settings.output_len} output tokens, temperature {session.settings.temperature:g}"
    extra = list(notes or [])
    if base is None:
        planned = any(a.is_baseline and a.concurrency == conc for a in session.arms)
        cause = "the no-speculation baseline failed" if planned else "no no-speculation baseline was measured"
        verdict = f"undecided after {_measured_text(session, conc, results)}: measuring the no-speculation baseline (one launch) would decide it"
        return LevelDecision(conc, "undecided", verdict, reasons=[f"{cause} at concurrency {conc}: whether speculation helps is unknown", *extra, head])
    if not spec:
        why = "no speculative configuration finished" if not extra else "no speculative configuration meets the latency target"
        return LevelDecision(conc, "do not speculate", "do not speculate", reasons=[f"do not speculate here: {why}", *extra, head])
    alpha = alpha_for_look(confidence, looks, sequential) / len(spec)
    q = stats.t_quantile(1 - alpha / 2, noise.launch_df)
    comparisons = [c for a in spec if (c := compare(a, results[a.id], results[base.id], noise, q)) is not None]
    comparisons.sort(key=lambda c: -c.log_ratio)
    better = [c for c in comparisons if c.status == "better"]
    lines = [_comparison_line(c, results[c.arm.id]) for c in comparisons]
    basis = _basis_line(comparisons, noise, confidence, looks if sequential else 0, len(spec))
    drift = _drift_line(session, conc, comparisons)
    if better:
        best = max(c.log_ratio for c in better)
        chosen = min((c for c in better if best - c.log_ratio <= math.log(1 + PRACTICAL_MARGIN)), key=lambda c: simplicity(c.arm))
        reasons = [f"speculate with {lines[comparisons.index(chosen)]}"]
        if chosen.log_ratio < best:
            top = max(better, key=lambda c: c.log_ratio)
            reasons.append(
                f"{name(top.arm)} measured {_pct(top.speedup)} but within the {PRACTICAL_MARGIN * 100:.0f}% margin of {name(chosen.arm)}: the simpler one wins the tie"
            )
        reasons += [f"also measured: {line}" for c, line in zip(comparisons, lines, strict=True) if c is not chosen and c.status != "better"]
        return LevelDecision(conc, "speculate", f"speculate: {name(chosen.arm)}", chosen.arm, chosen, comparisons, [*reasons, *extra, head, basis, *drift])
    if all(c.status == "not better" for c in comparisons):
        top = comparisons[0]
        cause = (
            "the drafts it gets accepted do not pay for their draft and verification cost here"
            if top.interval[1] < 1
            else f"not faster by more than the {PRACTICAL_MARGIN * 100:.0f}% margin that a tie goes to the simpler config (no speculation)"
        )
        reasons = [f"do not speculate here: the best speculative arm, {lines[0]}: {cause}", *(f"also measured: {line}" for line in lines[1:])]
        return LevelDecision(conc, "do not speculate", "do not speculate", None, top, comparisons, [*reasons, *extra, head, basis, *drift])
    open_ = [c for c in comparisons if c.status == "open"]
    step = next_step(session, base, open_, noise, q, results)
    names = ", ".join(["no speculation", *(name(c.arm) for c in open_)])
    measured = _measured_text(session, conc, results)
    verdict = f"undecided after {measured}: measuring {step.text(names)} would decide it"
    limited = open_[0].limited_by
    reasons = [
        f"undecided: {lines[comparisons.index(open_[0])]}; the interval still holds the {PRACTICAL_MARGIN * 100:.0f}% tie margin, "
        f"limited by the {limited} noise",
        *(f"also measured: {line}" for c, line in zip(comparisons, lines, strict=True) if c is not open_[0]),
    ]
    return LevelDecision(conc, "undecided", verdict, None, open_[0], comparisons, [*reasons, *extra, head, basis, *drift], limited, step)


# ---------------------------------------------------------------------- what to measure next


def next_step(session: Session, base: Arm, open_: list[Comparison], noise: Noise, q: float, results: dict[str, ArmResult]) -> NextStep:
    """The cheapest step that most reduces the uncertainty of the open comparison closest to being
    decided: more requests on running servers when within-run noise dominates (no start-up to pay),
    another launch of the contenders when launch-to-launch spread does. The amount is what would
    decide it if the estimate stayed where it is."""
    target = min(open_, key=lambda c: abs(c.log_ratio - math.log(1 + PRACTICAL_MARGIN)) / max(c.se, 1e-12))
    contenders = [base, *(c.arm for c in open_)]
    ids = tuple(a.id for a in contenders)
    gap = abs(target.log_ratio - math.log(1 + PRACTICAL_MARGIN))
    needed = (gap / q) ** 2  # the variance that would decide it
    per_launch = [launches(results[a.id]) for a in contenders]
    measure_s = sum(statistics.fmean(x.measure_s / x.passes for x in ls) for ls in per_launch)
    startup_s = sum(statistics.fmean([x.startup_s for x in ls if x.startup_s] or [60.0]) for ls in per_launch)
    ka, kb = target.launches
    if target.limited_by == "within-run" and noise.request_var is not None:
        requests = statistics.fmean(x.requests for ls in per_launch for x in ls)
        budget_launch = noise.launch_var * (1 / ka + 1 / kb)
        if budget_launch < needed:
            # x more requests on each side leave request_var * (1/(Na+x) + 1/(Nb+x)) <= what is left
            na, nb = ka * requests, kb * requests
            extra = max(1, math.ceil(2 * noise.request_var / (needed - budget_launch) - min(na, nb)))
            seconds = extra / requests * measure_s
            if seconds <= MAX_EXTRA_LAUNCHES * (startup_s + measure_s):
                return NextStep("requests", ids, extra, seconds)
    for j in range(1, MAX_EXTRA_LAUNCHES + 1):
        if noise.launch_var * (1 / (ka + j) + 1 / (kb + j)) + target.within_var * (ka * kb) / ((ka + j) * (kb + j)) <= needed:
            return NextStep("launch", ids, j, j * (startup_s + measure_s))
    return NextStep("launch", ids, MAX_EXTRA_LAUNCHES, None)


# ---------------------------------------------------------------------- sentences


def name(arm: Arm) -> str:
    return "no speculation" if arm.is_baseline else f"{family_label(arm)} N={arm.n}"


def _pct(ratio: float) -> str:
    return f"{(ratio - 1) * 100:+.1f}%"


def _comparison_line(c: Comparison, result: ArmResult) -> str:
    low, high = c.interval
    al = f", mean acceptance length {result.mean_acceptance_length:.2f}" if result.mean_acceptance_length else ""
    line = f"{name(c.arm)} at {c.speedup:.2f}x the baseline ({_pct(c.speedup)}; interval {low:.2f}-{high:.2f}x{al})"
    if c.prompt_wins is not None and c.prompt_median is not None:
        line += f"; prompt by prompt faster on {c.prompt_wins[0]} of {c.prompt_wins[1]}, median {c.prompt_median:.2f}x"
    return line


def _basis_line(comparisons: list[Comparison], noise: Noise, confidence: float, looks: int, arms: int) -> str:
    paired = any(c.paired for c in comparisons)
    how = (
        "paired: the arms served the same prompts and were compared prompt by prompt"
        if paired
        else f"unpaired: no per-request records over {MIN_PAIRED_PROMPTS} or more common prompts, so arms are compared by run totals over the same prompts"
    )
    observed = f"{noise.observed_sd * 100:.1f}% over {noise.observed_df} repeat(s)" if noise.observed_sd is not None else "no repeated launch"
    launch = f"launch-to-launch {math.sqrt(noise.launch_var) * 100:.1f}% (sd; measured {observed}, with a {LAUNCH_SPREAD_PRIOR * 100:.0f}% prior worth {LAUNCH_SPREAD_PRIOR_DF})"
    within = (
        f"within-run {math.sqrt(noise.request_var) * 100:.1f}% per request ({noise.request_df} df)"
        if noise.request_var is not None
        else "within-run not separable (inside the launch-to-launch figure)"
    )
    spend = f", look {looks} of sequential measuring" if looks else ""
    if noise.trend:
        within += f"; a common drift of {noise.trend * 100:+.1f}% per wave taken out of the comparison"
    return f"{confidence * 100:g}% confidence over {arms} speculative arm(s){spend}, tie margin {PRACTICAL_MARGIN * 100:.0f}%; {how}; noise: {launch}, {within}"


def _drift_line(session: Session, conc: int, comparisons: list[Comparison]) -> list[str]:
    """The baseline's move between its first launch and its last, against the gap being judged:
    drift is named as a cause only when it is as large as the gap."""
    base = next((a for a in session.arms if a.is_baseline and a.concurrency == conc), None)
    result = session.result_for(base.id) if base else None
    if result is None or not comparisons:
        return []
    runs = sorted((r for r in result.runs if r.status in _MEASURED and r.output_throughput), key=lambda r: (r.started_at is None, r.started_at))
    if len(runs) < 2:
        return []
    first, last = runs[0].output_throughput or 1.0, runs[-1].output_throughput or 1.0
    move = last / first - 1
    gap = comparisons[0].speedup - 1
    machine = gpu_change(result)
    gpus = f" (the GPUs: {machine})" if machine else ""
    said = f"the baseline moved {move * 100:+.1f}% between its first and last launch ({first:.1f} -> {last:.1f} tok/s{gpus}); the gap is {gap * 100:+.1f}%"
    if abs(move) >= abs(gap):
        return [f"{said}: drift alone could produce it (the noise model holds it: a trend over the launch order and launch-to-launch spread)"]
    return [f"{said}: drift cannot explain it (the noise model holds it: a trend over the launch order and launch-to-launch spread)"]


def _measured_text(session: Session, conc: int, results: dict[str, ArmResult]) -> str:
    arms = [a for a in session.arms if a.concurrency == conc and a.id in results]
    counts = [len(launches(results[a.id])) for a in arms]
    seconds = sum(x.measure_s for a in arms for x in launches(results[a.id]))
    launches_text = f"{sum(counts)} launch{'es' if sum(counts) != 1 else ''} over {len(arms)} arm(s)"
    return f"{launches_text} ({_minutes(seconds)} of measuring)"


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds < 600 else f"{seconds / 60:.0f} min"
