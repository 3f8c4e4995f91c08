"""The decision a sweep answers, stated up front: at each concurrency level, speculate (with which
arm) or not, at a stated confidence; pure functions over stored measurements (no I/O), so that a
stored or imported session can be re-judged anywhere (`sessions show --recompute`).

The rule
--------
- The quantity judged is the speedup of each speculative arm over the no-speculation baseline:
  d = log(arm throughput / baseline throughput), each throughput the geometric mean of the arm's
  launches, each launch weighted by its precision (figures.Side: launches of one pass weigh the same;
  a launch measured over more passes weighs more where within-run noise dominates). The answer is for the workload as its prompt set samples it: at T=0 every arm serves the
  same prompts in the same order, so prompt lengths are shared and cancel in the comparison.
- Ties go to the simpler configuration. A gain within PRACTICAL_MARGIN (3%) is a tie: smaller than
  what a redeploy, a drafter's memory and a second code path are worth, and about the launch-to-launch
  spread of one server, so a smaller "win" would not be reproducible. "speculate: X" needs the whole
  interval of X's speedup above 1.03; "do not speculate" needs every speculative arm's interval below
  1.03 (slower, or not faster by more than the margin); otherwise the level is undecided. Among arms
  that clear the bar, the simplest one (no drafter model before a drafter, then the smaller N) whose
  estimated speedup is within the margin of the best one's wins.
- Confidence (default 95%, `sweep --confidence`) is shared by every statement of a decision: the
  speculative arms at a level (Bonferroni over the arms) and the looks of sequential measuring.
  Intervals are Student t on the log scale, at the Welch-Satterthwaite degrees of freedom of the two
  noise components below (figures.comparison_df).

Sequential measuring: a group-sequential plan of few looks
----------------------------------------------------------
`--budget` measures in at most MAX_LOOKS (3) looks, the error split in fixed shares (0.6, 0.2, 0.2
of alpha: a union bound, the Bonferroni form of an alpha-spending plan, Lan & DeMets 1983; Pocock-like
in giving the later looks equal shares). Chosen over the open-ended series alpha * 6/(pi^2 j^2) it
replaces, from benchmarks/decision.py: that series left look 2 with 15% of the error and look 4 with
4%, so a case that missed the first look spent its whole budget on looks whose bounds moved away as
fast as the data narrowed the interval (high drift: 16/20 decided in 21 min, against 19/20 in 11 for
the fixed design with twice the launches). The first look keeps most of the error, so a clear case is
still decided after one launch per arm and the bracket. Between looks, the step (`next_step`) is sized
for 80% power at the next look with the t value at the degrees of freedom the step itself adds (one
launch of each contender is one more repeat each): sized at the first look's 5 df it asked for about
twice the launches needed. The runner spends at most half of what is left of the budget on a step
to an intermediate look, and all of it on the step to the last (sweep/runner.py); extra launches go least recently launched
first (sweep/scheduler.py), which keeps the launch order balanced after the bracket, so a drift cancels
rather than being fitted at the cost of a wider interval.
Side by side, a look happens while the wave's servers are still up (sweep/held.py); there the step
for a within-run-limited comparison is more passes on those servers, with no start-up to pay
(`step_on_running_servers`), and the look after it counts like any other.
A look does not answer from a single launch of an arm when the repeats so far spread more than the
prior and the answer would not stand at that spread (the prior may widen the data's spread, not
narrow it): that arm is launched once more first (a "replicate" step; the look still counts). One
launch of n-gram at 0.76x on a machine spreading 16% had read "do not speculate" for a 1.31x gain.

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
An undecided level names the component that limits it and what to measure next (analysis.decision
`next_step`, which the runner's sequential measuring follows).
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from specadvisor.analysis.arms import family_label
from specadvisor.analysis.costs import passes_seconds, round_seconds
from specadvisor.analysis.drift import gpu_change, in_time_order
from specadvisor.analysis.levels import LevelIndex
from specadvisor.analysis.placement import confounded_line
from specadvisor.domain import Arm, ArmResult, ConcurrencyPick, Session
from specadvisor.figures import (  # the comparison's arithmetic: one home, shared with every view's speedup
    DEFAULT_CONFIDENCE,
    LAUNCH_SPREAD_PRIOR,
    LAUNCH_SPREAD_PRIOR_DF,
    MAX_LOOKS,
    MIN_PAIRED_PROMPTS,
    PRACTICAL_MARGIN,
    Comparison,
    Launch,
    Launched,
    Noise,
    Side,
    alpha_for_look,
    compare,
    comparison_df,
    comparison_quantile,
    estimate_noise,
    launches,
    level_comparisons,
)
from specadvisor.trust import recorded

__all__ = [
    "DEFAULT_CONFIDENCE",
    "LAUNCH_SPREAD_PRIOR",
    "LAUNCH_SPREAD_PRIOR_DF",
    "MAX_EXTRA_LAUNCHES",
    "PRACTICAL_MARGIN",
    "Comparison",
    "Launch",
    "LevelDecision",
    "NextStep",
    "Noise",
    "alpha_for_look",
    "compare",
    "decide_level",
    "estimate_noise",
    "launches",
    "next_step",
    "simplicity",
    "step_on_running_servers",
]

# Sequential measuring on a machine whose repeats spread more than the prior: an answer that rests on
# fewer launches of an arm than this must also stand at the spread the repeats show, or that arm is
# launched again first (_unreplicated, _holds_unshrunk; benchmarks/decision.py, h200-rename-live).
MIN_LAUNCHES_UNSETTLED = 2
MAX_EXTRA_LAUNCHES = 20  # beyond this, "more measuring" is not an answer worth giving
MAX_EXTRA_PASSES = 200  # the same bound for passes over the prompts on running servers (also capped by that time)
# The step to an open level is sized so that, if the measured gain is the true one, the next look
# decides it with this probability (the usual sample-size rule: gap / se >= z_(1-alpha/2) + z_power).
# Sized to merely reach the interval's edge (power one half), the step decided about half the replayed
# H200 rename sweeps that it promised to decide (benchmarks/decision.py, h200-rename-live).
STEP_POWER = 0.8
_Z_POWER = 0.8416  # the standard normal quantile at STEP_POWER

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
            decision=self.decision,
            verdict=self.verdict,
            comparison=("paired" if any(x.paired for x in self.comparisons) else "unpaired") if self.comparisons else "",
            limited_by=self.limited_by,
            reasons=list(self.reasons),
        )


@dataclass(frozen=True)
class NextStep:
    """What measuring would decide an open level: more requests (passes over the prompts) on the
    contenders' servers, or another launch of each contender, and about how long.

    A "requests" step is priced as what it costs where it would run: on servers that are still up
    (`running`: the runner's own step between looks, `step_on_running_servers`) it is the passes
    only; anywhere else (an undecided verdict, read after the sweep has stopped its servers) it is one
    more launch of each contender measuring `passes` passes, start-up included, and the verdict says so."""

    kind: str  # requests | launch | replicate (a second launch of a single-launch arm before any answer)
    arm_ids: tuple[str, ...]  # the contenders (the baseline and the open arms)
    amount: int  # extra requests per contender, or extra launches per contender
    seconds: float | None  # None: more than MAX_EXTRA_LAUNCHES launches would be needed
    passes: int = 1  # requests: passes over the prompts on each contender's server (running, or launched once more)
    running: bool = False  # requests: on the contenders' servers that are still up (no start-up in `seconds`)

    def text(self, names: str) -> str:
        """The tail of an undecided verdict: what to measure, for how long, and how sure that is."""
        if self.kind == "replicate":
            return (
                f"measuring one more launch of {names} for about {_minutes(self.seconds or 0.0)} more comes first: "
                "at this machine's launch spread one launch might not decide it"
            )
        paid = ""
        passes = f"{self.passes} pass{'es' if self.passes != 1 else ''} over the prompts"
        if self.kind == "requests" and self.running:
            what, paid = f"{passes} more on each of {names}'s running servers (about {self.amount} more requests on each of them)", " (no start-up)"
        elif self.kind == "requests":
            what, paid = f"one more launch of each of {names} with {passes} (about {self.amount} more requests on each of them)", " (start-up included)"
        else:
            what = f"{self.amount} more launch{'es' if self.amount > 1 else ''} of each of {names}"
        if self.seconds is None:
            return f"even {what} might not decide it: the gain sits too close to the {PRACTICAL_MARGIN * 100:.0f}% margin"
        return f"measuring {what} for about {_minutes(self.seconds)} more{paid} would likely decide it ({STEP_POWER:.0%} power if the gain holds)"


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
    index: LevelIndex | None = None,
) -> LevelDecision:
    """The answer at concurrency `conc`. `eligible`: the speculative arms allowed to compete (a latency
    target may leave some out; `notes` say so); by default every measured speculative arm. `index`:
    the session's arms and results by level (analysis.levels), built once for all levels of a verdict."""
    index = index or LevelIndex.of(session)
    results = index.results
    base = index.baseline(conc)
    spec = eligible if eligible is not None else index.speculative(conc)
    spec = [a for a in spec if a.id in results]
    head = (
        f"measured at concurrency {conc}, {recorded(session, 'output_len', str(session.settings.output_len))} output tokens, "
        f"temperature {recorded(session, 'temperature', f'{session.settings.temperature:g}')}"
    )
    extra = list(notes or [])
    if base is None:
        planned = conc in index.planned_baseline
        cause = "the no-speculation baseline failed" if planned else "no no-speculation baseline was measured"
        verdict = f"undecided after {_measured_text(index, conc)}: measuring the no-speculation baseline (one launch) would decide it"
        return LevelDecision(conc, "undecided", verdict, reasons=[f"{cause} at concurrency {conc}: whether speculation helps is unknown", *extra, head])
    if not spec:
        why = "no speculative configuration finished" if not extra else "no speculative configuration meets the latency target"
        return LevelDecision(conc, "do not speculate", "do not speculate", reasons=[f"do not speculate here: {why}", *extra, head])
    arms = len(spec)
    q = lambda df: comparison_quantile(confidence, looks, sequential, arms, df)  # noqa: E731 - at each comparison's own df
    comparisons = level_comparisons(base, spec, noise, q, results, launched=index.launched)
    impossible = _beyond_acceptance(comparisons, results)
    better = [c for c in comparisons if c.status == "better" and c.arm.id not in impossible]
    lines = [_comparison_line(c, results[c.arm.id]) for c in comparisons]
    basis = _basis_line(comparisons, noise, confidence, looks if sequential else 0, len(spec))
    drift = _drift_line(index, conc, comparisons)

    def tail(judged: Comparison) -> list[str]:  # the lines every answer at this level ends with
        return [*extra, head, basis, *drift, *confounded_line(results.get(base.id), results.get(judged.arm.id), name(judged.arm))]

    thin = _unreplicated(base, comparisons, noise) if sequential else []
    if thin and (better or all(c.status == "not better" for c in comparisons)) and not _holds_unshrunk(base, spec, noise, comparisons, q, index):
        return _replicate_first(session, conc, base, thin, comparisons, noise, lines, tail(comparisons[0]), index)
    if better:
        best = max(c.log_ratio for c in better)
        chosen = min((c for c in better if best - c.log_ratio <= math.log(1 + PRACTICAL_MARGIN)), key=lambda c: simplicity(c.arm))
        reasons = [f"speculate with {lines[comparisons.index(chosen)]}"]
        tied = None
        if chosen.log_ratio < best:
            tied = top = max(better, key=lambda c: c.log_ratio)
            reasons.append(
                f"{name(top.arm)} measured {_pct(top.speedup)} but within the {PRACTICAL_MARGIN * 100:.0f}% margin of {name(chosen.arm)}: the simpler one wins the tie"
            )
        reasons += _also_pays(chosen, [c for c in better if c is not chosen and c is not tied], lines, comparisons)
        reasons += _also_measured(line for c, line in zip(comparisons, lines, strict=True) if c is not chosen and c.status != "better")
        return LevelDecision(conc, "speculate", f"speculate: {name(chosen.arm)}", chosen.arm, chosen, comparisons, [*reasons, *tail(chosen)])
    if all(c.status == "not better" for c in comparisons):
        top = comparisons[0]
        cause = (
            "the drafts it gets accepted do not pay for their draft and verification cost here"
            if top.interval[1] < 1
            else f"not faster by more than the {PRACTICAL_MARGIN * 100:.0f}% margin that a tie goes to the simpler config (no speculation)"
        )
        reasons = [f"do not speculate here: the best speculative arm, {lines[0]}: {cause}", *_also_measured(lines[1:])]
        return LevelDecision(conc, "do not speculate", "do not speculate", None, top, comparisons, [*reasons, *tail(top)])
    open_ = [c for c in comparisons if c.status == "open" or c.arm.id in impossible]
    # the step is sized for the look that would follow it (its share of the error; after the plan's
    # last look, the last share: what a further block measured the same way would face), with power
    next_look = min(looks + 1, MAX_LOOKS)
    step = next_step(session, base, open_, noise, lambda df: comparison_quantile(confidence, next_look, True, len(spec), df), results, launched=index.launched)
    names = _listed(["no speculation", *(name(c.arm) for c in open_)])
    measured = _measured_text(index, conc)
    verdict = f"undecided after {measured}: {step.text(names)}"
    limited = open_[0].limited_by
    first = (
        f"undecided: {impossible[open_[0].arm.id]}"
        if open_[0].arm.id in impossible
        else f"undecided: {lines[comparisons.index(open_[0])]}; the interval still holds the {PRACTICAL_MARGIN * 100:.0f}% tie margin, "
        f"limited by the {limited} noise"
    )
    reasons = [
        first,
        *_also_measured(line for c, line in zip(comparisons, lines, strict=True) if c is not open_[0]),
    ]
    return LevelDecision(conc, "undecided", verdict, None, open_[0], comparisons, [*reasons, *tail(open_[0])], limited, step)


def _unshrunk(noise: Noise) -> Noise:
    """Sequential measuring: the prior may widen the launch-to-launch spread the repeats show, never
    narrow it. The moderated spread pulls a few repeats toward LAUNCH_SPREAD_PRIOR (worth
    LAUNCH_SPREAD_PRIOR_DF launches); when they spread more than that, the pull makes a single launch
    look surer than the machine allows: replayed, one launch of n-gram at 0.76x on a machine spreading
    16% (the bracket pair showed 10%, moderated to 7.3%) read "do not speculate" for a 1.31x gain
    (benchmarks/decision.py, h200-rename-live seed 48). Used only as a check of an answer that rests on
    one launch of an arm (_holds_unshrunk): applied to every look it cost the clear cases a third more
    measuring (h200-humaneval 5.4 -> 7.5 min mean), where a second launch of the one arm is cheap."""
    if noise.observed_launch_var is None or noise.observed_df == 0:
        return noise
    observed = noise.observed_launch_var  # the repeats' spread less their own within-run share (estimate_noise)
    return dataclasses.replace(noise, launch_var=observed) if observed > noise.launch_var else noise


def _unreplicated(base: Arm, comparisons: list[Comparison], noise: Noise) -> list[Arm]:
    """The arms an answer would rest on with a single launch while the repeats spread more than the
    prior assumes (LAUNCH_SPREAD_PRIOR): there one launch cannot be told from an outlier launch.
    Without a repeat there is nothing to contradict the prior, and the prior alone decides."""
    if noise.observed_sd is None or noise.observed_sd <= LAUNCH_SPREAD_PRIOR:
        return []
    single = [c.arm for c in comparisons if c.launches[0] < MIN_LAUNCHES_UNSETTLED]
    if single and any(c.launches[1] < MIN_LAUNCHES_UNSETTLED for c in comparisons):
        single = [base, *single]
    return single


def _holds_unshrunk(base: Arm, spec: list[Arm], noise: Noise, comparisons: list[Comparison], q: Callable[[float], float], index: LevelIndex) -> bool:
    """Whether the answer the comparisons give stands with the launch spread the repeats show (not
    pulled toward the prior, _unshrunk): a clear gap does, and needs no second launch."""
    wide = level_comparisons(base, spec, _unshrunk(noise), q, index.results, launched=index.launched)
    if any(c.status == "better" for c in comparisons):
        return any(c.status == "better" for c in wide)
    return all(c.status == "not better" for c in wide)


def _replicate_first(
    session: Session,
    conc: int,
    base: Arm,
    thin: list[Arm],
    comparisons: list[Comparison],
    noise: Noise,
    lines: list[str],
    tail: list[str],
    index: LevelIndex,
) -> LevelDecision:
    ids = tuple(a.id for a in thin)
    step = NextStep("replicate", ids, 1, round_seconds(index.results.get, ids, 1, session.settings.parallel, launched=index.launched))
    spread = (
        f"spread {noise.observed_sd * 100:.1f}% between launches, above the {LAUNCH_SPREAD_PRIOR * 100:.0f}% prior"
        if noise.observed_sd
        else "no repeated launch yet"
    )
    names = _listed([name(a) for a in thin])
    first = (
        f"undecided: {lines[0]}; one launch of {names} on a machine with {spread}: "
        f"no answer rests on a single launch there (it cannot be told from an outlier launch)"
    )
    reasons = [first, *_also_measured(lines[1:])]
    verdict = f"undecided after {_measured_text(index, conc)}: {step.text(names)}"
    return LevelDecision(conc, "undecided", verdict, None, comparisons[0], comparisons, [*reasons, *tail], "launch-to-launch", step)


def _beyond_acceptance(comparisons: list[Comparison], results: dict[str, ArmResult]) -> dict[str, str]:
    """The "better" arms whose measured speedup physics rules out: a step of speculation yields the
    mean acceptance length (AL) in tokens and costs at least one target forward pass, so no arm can
    be more than AL times faster than no speculation. A gain above AL (beyond the tie margin) is the
    machine's noise between launches, not speculation, and must not become "speculate" (seen on a
    loaded 2-core box: n-gram at 1.52x with AL 1.00). Returns arm id -> the reason."""
    found: dict[str, str] = {}
    for c in comparisons:
        al = results[c.arm.id].mean_acceptance_length
        if c.status == "better" and al is not None and al > 0 and c.speedup > al * (1 + PRACTICAL_MARGIN):
            found[c.arm.id] = (
                f"{name(c.arm)} measured {c.speedup:.2f}x, but its drafts gave {al:.2f} tokens per step (mean acceptance length), "
                f"so no more than {al:.2f}x is possible: the gain is noise between launches, not speculation"
            )
    return found


# ---------------------------------------------------------------------- what to measure next


def next_step(
    session: Session,
    base: Arm,
    open_: list[Comparison],
    noise: Noise,
    quantile: Callable[[float], float],
    results: dict[str, ArmResult],
    *,
    running: bool = False,
    launched: Launched | None = None,
) -> NextStep:
    """The cheapest step that most reduces the uncertainty of the open comparison closest to being
    decided: more requests on running servers when within-run noise dominates (no start-up to pay),
    another launch of the contenders when launch-to-launch spread does. The amount gives the next
    look STEP_POWER power if the measured gain is the true one; `quantile(df)` is that look's t value
    at the launch-to-launch degrees of freedom it will have: each added launch of each contender is
    one more repeat, so sizing with today's few df (5 after one launch per arm and the bracket) would
    ask for about twice the launches the next look needs. `running`: the contenders' latest servers
    are still up (`step_on_running_servers`), so requests cost passes only."""
    margin = math.log(1 + PRACTICAL_MARGIN)
    distance = lambda c: abs(c.log_ratio - margin) / max(c.se, 1e-12)  # noqa: E731 - standard errors from the margin
    # One arm shown past the margin decides "speculate": aim at the open arm above it that is easiest
    # to confirm. Below it, "do not speculate" needs every arm shown under: the hardest one binds.
    above = [c for c in open_ if c.log_ratio > margin]
    target = max(above, key=distance) if above else min(open_, key=distance)
    contenders = [base, *(c.arm for c in open_)]
    ids = tuple(a.id for a in contenders)
    gap = abs(target.log_ratio - margin)

    def needed(df: float) -> float:
        """The variance that decides it with STEP_POWER power at `df` degrees of freedom."""
        return float((gap / (quantile(df) + _Z_POWER)) ** 2)

    # wall-clock, as the runner spends it: a wave of `--parallel` launches costs its slowest one
    slots = session.settings.parallel
    launched = launched or launches
    one_round = round_seconds(results.get, ids, 1, slots, launched=launched)
    if running:
        on_servers = _requests_on_running(contenders, target, noise, needed, results, MAX_EXTRA_LAUNCHES * one_round, launched)
        if on_servers is not None:
            return on_servers
    ka, kb = target.launches
    if target.limited_by == "within-run" and noise.request_var is not None:
        on_relaunch = _requests_on_relaunch(contenders, target, noise, needed, results, MAX_EXTRA_LAUNCHES * one_round, slots, launched)
        if on_relaunch is not None:
            return on_relaunch
    for j in range(1, MAX_EXTRA_LAUNCHES + 1):
        if noise.launch_var * (1 / (ka + j) + 1 / (kb + j)) + target.within_var * (ka * kb) / ((ka + j) * (kb + j)) <= needed(
            noise.launch_df + j * len(contenders)
        ):
            return NextStep("launch", ids, j, j * one_round)
    return NextStep("launch", ids, MAX_EXTRA_LAUNCHES, None)


def step_on_running_servers(session: Session, level: LevelDecision, *, confidence: float, looks: int) -> NextStep | None:
    """The step for an undecided level while its contenders' latest servers are still up (the runner
    holds a wave's servers for the look that follows it: sweep/held.py). There, more requests cost
    passes over the prompts and no start-up, so they are the step whenever within-run noise limits the
    open comparison and some number of passes on those launches would decide it at the next look
    (STEP_POWER); and while the within-run noise cannot be told apart yet (one pass per arm, no
    repeat: it sits inside the launch-to-launch prior), one more pass on each separates it, at a
    fraction of a launch's cost. Otherwise (launch-to-launch spread limits it, or a single launch must
    be replicated first) the level's own step stands: a relaunch."""
    step = level.next_step
    if level.decision != "undecided" or step is None or step.kind == "replicate":
        return step
    index = LevelIndex.of(session)  # the same lookups decide_level reads, not another scan of the arms
    results, base = index.results, index.baseline(level.concurrency)
    if base is None or not level.comparisons:
        return step
    impossible = _beyond_acceptance(level.comparisons, results)
    open_ = [c for c in level.comparisons if c.status == "open" or c.arm.id in impossible]
    if not open_:
        return step
    next_look, arms = min(looks + 1, MAX_LOOKS), len(level.comparisons)
    quantile = lambda df: comparison_quantile(confidence, next_look, True, arms, df)  # noqa: E731 - as decide_level sizes its step
    noise = estimate_noise(session, launched=index.launched)
    return next_step(session, base, open_, noise, quantile, results, running=True, launched=index.launched)


def _requests_on_relaunch(
    contenders: list[Arm],
    target: Comparison,
    noise: Noise,
    needed: Callable[[float], float],
    results: dict[str, ArmResult],
    most_s: float,
    slots: int,
    launched: Launched,
) -> NextStep | None:
    """One more launch of each contender measuring several passes over the prompts (the servers are
    down: a start-up each), sized on the comparison the next look will make: the new launch joins the
    arm's others, weighted by its precision (figures.Side), and adds a repeat and its passes' df to
    the noise estimates. None where no number of passes up to the cost of MAX_EXTRA_LAUNCHES launches
    would decide it (the launch-to-launch share alone is too wide)."""
    ids = tuple(a.id for a in contenders)
    arm_side, base_side = launched(results[target.arm.id]), launched(results[contenders[0].id])
    requests = max(1, round(statistics.fmean(x.requests for a in contenders for x in launched(results[a.id]))))

    def seconds(passes: int) -> float:
        return round_seconds(results.get, ids, passes, slots, launched=launched)

    def decides(passes: int) -> bool:
        extra = Launch(0.0, passes, requests, 0.0, None, ())
        a, b = Side.of([*arm_side, extra], noise), Side.of([*base_side, extra], noise)
        launch_part, within_var = a.launch_var + b.launch_var, a.within_var + b.within_var
        df = comparison_df(launch_part, noise.launch_df + len(contenders), within_var, noise.request_df + passes * len(contenders) * (requests - 1))
        return launch_part + within_var <= needed(df)

    # both grow with the passes (cost; variance falls and the df rise): bisect, a level of many arms
    # (a 100,000-arm bundle) must not price 200 candidate steps one by one
    most = _last(2, MAX_EXTRA_PASSES, lambda p: seconds(p) <= most_s)
    if most is None or not decides(most):
        return None
    short = _last(2, most, lambda p: not decides(p))  # the most passes that would not decide it yet
    fewest = 2 if short is None else short + 1
    return NextStep("requests", ids, fewest * requests, seconds(fewest), fewest)


def _last(low: int, high: int, holds: Callable[[int], bool]) -> int | None:
    """The largest n in [low, high] for which `holds` is true, `holds` true up to some n and false
    after it; None when it holds nowhere."""
    if not holds(low):
        return None
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if holds(mid) else (low, mid - 1)
    return low


def _requests_on_running(
    contenders: list[Arm],
    target: Comparison,
    noise: Noise,
    needed: Callable[[float], float],
    results: dict[str, ArmResult],
    most_s: float,
    launched: Launched = launches,
) -> NextStep | None:
    """More passes over the prompts on the contenders' running servers (their latest launch), or None
    where they would not decide it (the launch-to-launch share alone is too wide) or cost more than
    `most_s`. A launch's throughput is the mean of its passes, and the comparison weighs an arm's
    launches by their precision (figures.Side), so the passes added to the latest launch narrow the
    arm's within-run share as a whole where it dominates, and the launch-to-launch share not at all.
    `needed(df)`: the variance that decides it at the next look, at the comparison's degrees of
    freedom then (each pass of each contender adds its prompts less one to the within-run estimate's)."""
    ids = tuple(a.id for a in contenders)
    measured = [launched(results[a.id]) for a in contenders]
    if any(not held for held in measured):
        return None
    per_pass = max(1, round(statistics.fmean(x.requests for held in measured for x in held)))
    if noise.request_var is None:
        # one pass per launch so far: the within-run share is inside the launch-to-launch prior; a second
        # pass on the same servers (paired by prompt) separates it, where per-request records exist
        return NextStep("requests", ids, per_pass, passes_seconds(results.get, ids, 1), 1, running=True) if all(h[-1].records for h in measured) else None
    if target.limited_by != "within-run":
        return None
    arm_side, base_side = launched(results[target.arm.id]), measured[0]

    def longer(side: list[Launch], more: int) -> Side:  # the latest launch (the one still up) measured `more` passes longer
        return Side.of([*side[:-1], dataclasses.replace(side[-1], passes=side[-1].passes + more)], noise)

    for passes in range(1, MAX_EXTRA_PASSES + 1):
        seconds = passes_seconds(results.get, ids, passes)
        if seconds > most_s:
            break
        a, b = longer(arm_side, passes), longer(base_side, passes)
        launch_part, within_var = a.launch_var + b.launch_var, a.within_var + b.within_var
        df = comparison_df(launch_part, noise.launch_df, within_var, noise.request_df + passes * len(contenders) * (per_pass - 1))
        if launch_part + within_var <= needed(df):
            return NextStep("requests", ids, passes * per_pass, seconds, passes, running=True)
    return None


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


def _drift_line(index: LevelIndex, conc: int, comparisons: list[Comparison]) -> list[str]:
    """The baseline's move between its first launch and its last, against the gap being judged:
    drift is named as a cause only when it is as large as the gap."""
    base = index.first_baseline.get(conc)
    result = index.first_result.get(base.id) if base else None
    if result is None or not comparisons:
        return []
    ordered = in_time_order(index.launched(result))  # by launch, as the drift report: passes are one launch
    if len(ordered) < 2:
        return []
    first, last = ordered[0].tok_s, ordered[-1].tok_s
    move = last / first - 1
    gap = comparisons[0].speedup - 1
    machine = gpu_change(result)
    gpus = f" (the GPUs: {machine})" if machine else ""
    said = f"the baseline moved {move * 100:+.1f}% between its first and last launch ({first:.1f} -> {last:.1f} tok/s{gpus}); the gap is {gap * 100:+.1f}%"
    if abs(move) >= abs(gap):
        return [f"{said}: drift alone could produce it (the noise model holds it: a trend over the launch order and launch-to-launch spread)"]
    return [f"{said}: drift cannot explain it (the noise model holds it: a trend over the launch order and launch-to-launch spread)"]


SHOWN_NAMES = 6  # arms named in one verdict sentence; the rest are counted
SHOWN_ALSO_MEASURED = 10  # "also measured" lines per level (the closest first); the rest are counted


def _listed(names: list[str]) -> str:
    """Names for one sentence: a verdict over 100,000 arms must not name them all in its headline."""
    if len(names) <= SHOWN_NAMES:
        return ", ".join(names)
    return f"{', '.join(names[:SHOWN_NAMES])} and {len(names) - SHOWN_NAMES} more arms"


def _also_pays(chosen: Comparison, others: list[Comparison], lines: list[str], comparisons: list[Comparison]) -> list[str]:
    """The other arms that pay too. Where one's interval overlaps the chosen arm's, which of them is
    faster is not established: said, with the rule that picked (the highest measured speedup; a tie
    within the margin to the simpler), so two runs answering N=2 and N=4 read as one answer."""
    overlapping = [c for c in others if c.interval[1] >= chosen.interval[0] and c.interval[0] <= chosen.interval[1]]
    if not overlapping:
        return [f"also pays: {lines[comparisons.index(c)]}" for c in others[:SHOWN_ALSO_MEASURED]]
    shown = [name(chosen.arm), *(name(c.arm) for c in overlapping)]
    names = f"{shown[0]} and {shown[1]} both pay" if len(shown) == 2 else f"{_listed(shown)} all pay"
    return [
        f"{names} and their intervals overlap: which is fastest is undecided at this confidence; the verdict takes "
        f"{name(chosen.arm)}, the highest measured (a tie within {PRACTICAL_MARGIN * 100:.0f}% goes to the simpler config); more launches "
        "(sweep --resume ID --budget MIN) would separate them",
        *(f"also pays: {lines[comparisons.index(c)]}" for c in overlapping[:SHOWN_ALSO_MEASURED]),
    ]


def _also_measured(lines: Iterable[str]) -> list[str]:
    """The other arms' comparisons, closest first, at most SHOWN_ALSO_MEASURED of them: every arm's
    figure is in its own row (show, --json, the report), so the verdict counts the rest."""
    listed = list(lines)
    shown = [f"also measured: {line}" for line in listed[:SHOWN_ALSO_MEASURED]]
    rest = len(listed) - len(shown)
    return [*shown, f"also measured: {rest} more arms, each with its speedup in its own row"] if rest else shown


def _measured_text(index: LevelIndex, conc: int) -> str:
    arms, results = index.arms(conc), index.results
    counts = [len(index.launched(results[a.id])) for a in arms]
    seconds = sum(x.measure_s for a in arms for x in index.launched(results[a.id]))
    launches_text = f"{sum(counts)} launch{'es' if sum(counts) != 1 else ''} over {len(arms)} arm(s)"
    return f"{launches_text} ({_minutes(seconds)} of measuring)"


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds < 600 else f"{seconds / 60:.0f} min"
