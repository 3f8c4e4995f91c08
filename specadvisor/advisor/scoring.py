"""Fire the ordered rules over the per-method tallies, recording every change in the trace."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from specadvisor.advisor.facts import Facts, unmet_conditions
from specadvisor.domain import Advice
from specadvisor.rulebase import RuleBase
from specadvisor.rulebase.schema import Verdict


@dataclass
class Tally:
    """Per-method state while rules fire."""

    score: float
    grid: list[int]
    config: dict[str, Any] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    n_rule: str = ""  # the rule that set the starting N (its config's num_speculative_tokens), for the citation
    n_evidence: list[str] = field(default_factory=list)
    n_only: dict[str, str] = field(default_factory=dict)  # reason -> rule id, of rules that touched this method only to set its N or grid


def apply_rules(rb: RuleBase, facts: Facts, tallies: dict[str, Tally], advice: Advice, user_methods: set[str]) -> list[Verdict]:
    """Fire rules in order; returns the verdict levels the fired rules asked for."""
    verdicts = []
    for rule in rb.rules:
        unmet = unmet_conditions(rule.when, facts)
        if unmet:
            advice.trace.append(f"- {rule.id}: does not apply ({'; '.join(unmet)})")
            continue
        advice.fired_rules.append(rule.id)
        then = rule.then
        effects = []
        touched = set(then.about) | set(then.score) | set(then.n_grid) | set(then.config) | set(then.exclude)
        for method, delta in then.score.items():
            if method in tallies and delta:
                tallies[method].score += delta
                effects.append(f"{method} {delta:+g}")
        for method, grid in then.n_grid.items():
            if method in tallies:
                tallies[method].grid = list(grid)
                effects.append(f"{method} N grid {grid}")
        for method, keys in then.config.items():
            if method in tallies:
                tallies[method].config.update(keys)
                effects.append(f"{method} config {keys}")
                if "num_speculative_tokens" in keys:
                    tallies[method].n_rule, tallies[method].n_evidence = rule.id, list(rule.evidence)
        for method in then.exclude:
            if method in user_methods:
                advice.warnings.append(f"{rule.why} Your {method} drafter is still measured because you asked for it.")
                effects.append(f"{method} kept (your drafter)")
            elif tallies.pop(method, None) is not None:
                effects.append(f"{method} excluded")
        general = not touched
        n_setting = set(then.n_grid) | {m for m, keys in then.config.items() if set(keys) == {"num_speculative_tokens"}}
        for method, tally in tallies.items():
            if general or method in touched:
                tally.reasons.append(rule.why)
                tally.evidence.extend(rule.evidence)
                if method in n_setting and method not in then.score and method not in then.about and method not in then.exclude:
                    tally.n_only[rule.why] = rule.id
        advice.warnings.extend(w for w in then.warnings if w not in advice.warnings)
        if then.verdict:
            verdicts.append(then.verdict)
            effects.append(f"verdict at most '{then.verdict}'")
        if then.suggest_training:
            advice.suggest_training = True
        if touched and not effects:
            effects.append("no candidate affected")
        advice.trace.append(
            f"+ {rule.id}: {rule.why}" + (f" [{'; '.join(effects)}]" if effects else "") + (f" (evidence: {', '.join(rule.evidence)})" if rule.evidence else "")
        )
    return verdicts
