"""The one plain sentence: speculate, try carefully, or unlikely to pay; local measurements decide first."""

from __future__ import annotations

from specadvisor.domain import Advice, Candidate
from specadvisor.rulebase import RuleBase
from specadvisor.rulebase.schema import Verdict

_PESSIMISM = {"speculate": 0, "careful": 1, "unlikely": 2}


def _label(candidate: Candidate, rb: RuleBase) -> str:
    name = rb.methods[candidate.id].name
    return f"{name} with {candidate.drafter}" if candidate.drafter else name


def _published_slowdown(candidate: Candidate) -> str | None:
    """`0.48-0.66x` when every published run of this model with this method was slower than no
    speculation: the sentence must not promise what the shown estimate denies."""
    if candidate.expected_speedup is None or candidate.expected_speedup[1] >= 1.0:
        return None
    low, high = candidate.expected_speedup
    return f"{low:.2f}-{high:.2f}x"


def _slowdown_on_this_model(candidates: list[Candidate]) -> tuple[Candidate, str] | None:
    """The top candidate's published slowdown; else, when no candidate has a published gain on this model,
    the first other one's: a method measured slower than no speculation here and demoted for it still
    tells the reader that speculation may not pay."""
    top = _published_slowdown(candidates[0]) if candidates else None
    if top:
        return candidates[0], top
    if any(_has_gain(c) for c in candidates):
        return None
    for candidate in candidates:
        found = _published_slowdown(candidate)
        if found:
            return candidate, found
    return None


def _has_gain(candidate: Candidate) -> bool:
    return candidate.expected_speedup is not None and candidate.expected_speedup[1] >= 1.0


def set_verdict(advice: Advice, rule_verdicts: list[Verdict], rb: RuleBase) -> None:
    top = advice.candidates[0] if advice.candidates else None
    computed: Verdict = "unlikely" if top is None or top.score < 1.0 else "careful" if top.score < 2.0 else "speculate"
    level = max([computed, *rule_verdicts], key=_PESSIMISM.__getitem__)
    fresh = [high for e in (top.evidence if top else []) if e.local and not e.stale and (high := e.speedup_high) is not None]
    measured_slow = _slowdown_on_this_model(advice.candidates) if top and not fresh else None
    slowdown = measured_slow[1] if measured_slow else None
    if fresh:
        best = max(fresh)
        level = "speculate" if best >= 1.1 else "unlikely" if best < 1.0 else "careful"
        advice.trace.append(f"= verdict from local measurement: {best:.2f}x -> {level}")
    elif measured_slow and measured_slow[0] is top and level == "speculate":  # the rules' optimism never outvotes runs of this very model
        level = "careful"
        advice.trace.append(f"= every published run of this model with the top method was a slowdown ({slowdown}) -> careful")
    advice.verdict_level = level
    advice.speculation_unlikely = level == "unlikely"
    if top is None:
        advice.verdict = "Speculation is unlikely to pay here: no speculative method fits this model and vLLM version; serve without it."
        return
    label = _label(top, rb)
    if level == "speculate":
        advice.verdict = f"Speculation is likely to pay: start with {label} and sweep N over {top.n_grid} against the no-speculation baseline."
    elif level == "careful" and measured_slow and measured_slow[0] is top:
        advice.verdict = (
            f"Speculation may not pay here: {label} measured {slowdown} on this model family elsewhere; measure it against the baseline here first."
        )
    elif level == "careful" and measured_slow:
        advice.verdict = (
            f"Speculation may not pay here: {_label(measured_slow[0], rb)} measured {slowdown} on this model family elsewhere; "
            f"measure {label} against the baseline here first."
        )
    elif level == "careful":
        advice.verdict = f"Speculation may help modestly: measure {label} against the no-speculation baseline before adopting it."
    else:
        advice.verdict = f"Speculation is unlikely to pay here: keep the no-speculation baseline; measure {label} only to confirm."


def set_does_not_fit(advice: Advice, headline: str) -> None:
    """A plan that does not fit leads with that, whatever the methods promise: no method helps a
    server that cannot start, and no serve command is given until the user changes GPUs, TP or model."""
    advice.trace.append(f"= headline: {headline}")
    advice.verdict = headline


def set_headline(advice: Advice, headline: str) -> None:
    """A target this release cannot load (or whose loading nobody could check) leads with that."""
    advice.trace.append(f"= headline: {headline}")
    advice.verdict = headline
