"""Reading an arm typed on the advice screen ("ngram 6") into what SweepPlan.add_arm takes.

An added arm reuses the advised candidate's extra speculative-config keys (drafter model, lookup
sizes), so "eagle3 6" keeps the drafter the advisor chose. No Textual here.
"""

from __future__ import annotations

from typing import Any

from specadvisor.domain import Advice, Arm
from specadvisor.errors import InputError


def parse_arm_spec(text: str) -> tuple[str, int]:
    """ "ngram 6" or "ngram N=6" -> ("ngram", 6); anything else is an InputError with the expected form."""
    parts = text.replace("N=", " ").replace("n=", " ").split()
    if len(parts) != 2 or not parts[1].isdigit() or int(parts[1]) < 1:
        raise InputError(f"cannot read arm {text!r}", hint='type a candidate id and N, e.g. "ngram 6"')
    return parts[0], int(parts[1])


def arm_request(advice: Advice | None, text: str) -> tuple[str, int, dict[str, Any]]:
    """(method id, N, extra config keys) for SweepPlan.add_arm, from the user's text and the advice."""
    name, n = parse_arm_spec(text)
    candidates = advice.candidates if advice else []
    cand = next((c for c in candidates if c.id == name), None) or next((c for c in candidates if c.method == name), None)
    if cand is None:
        known = ", ".join(sorted({c.id for c in candidates})) or "none"
        raise InputError(f"no advised candidate named {name!r}", hint=f"use one of: {known}")
    extra = {k: v for k, v in cand.speculative_config.items() if k not in ("method", "num_speculative_tokens")}
    if cand.parallel_drafting:
        extra.setdefault("parallel_drafting", True)
    return cand.method, n, extra


def family_of(arm: Arm) -> tuple[str, dict[str, Any]]:
    """(vLLM method, extra config keys) of a planned arm: adding N to it keeps everything else."""
    config = dict(arm.speculative_config or {})
    method = str(config.pop("method"))
    config.pop("num_speculative_tokens", None)
    return method, config
