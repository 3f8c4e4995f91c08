"""What a vLLM server can physically report, checked before a figure becomes a measurement.

An endpoint is not trusted (docs/security.md): its /metrics counters and its usage chunks are
claims. A claim no vLLM server could make (more tokens accepted than drafted, a counter that runs
backwards, 10^12 tokens for a request capped at 256, a count of 1e300 or NaN) fails the arm with
one line naming the field, instead of being stored as acceptance 333 or 10^15 tok/s.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from specadvisor.errors import EngineError

# A float counter beyond 2^53 no longer counts exactly; no server gets there (10^6 tok/s for 285 years).
MAX_COUNT = 2**53
# A prompt's usage above this is no prompt a server accepted (the longest context windows are 10^7).
MAX_PROMPT_TOKENS = 2**31
_NOT_MEASURED = "not a vLLM counter; arm not measured"


class ImplausibleFigures(EngineError):
    """The endpoint reported figures no vLLM server could produce: the arm fails, the sweep goes on."""


def count(value: object, field: str, *, high: float = MAX_COUNT) -> int:
    """`value` as a whole count in [0, high], or ImplausibleFigures naming `field`."""
    if isinstance(value, int) and not isinstance(value, bool):
        if 0 <= value <= high:
            return value
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer() and 0 <= value <= high:
        return int(value)
    raise ImplausibleFigures(f"the endpoint's {field} was {_shown(value)}, not a token count in [0, {high:.0f}]; arm not measured")


def _shown(value: object) -> str:
    """A short rendering of a hostile value (a 5,000-digit integer has no repr in Python 3.11+)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an integer of {value.bit_length()} bits"
    if isinstance(value, float):
        return f"{value:.6g}"
    return repr(value)[:40] if isinstance(value, (int, str, bool, type(None))) else type(value).__name__


def counter_delta(name: str, before: float, after: float) -> int:
    """after - before of one cumulative counter: both finite, non-negative and exact, never decreasing."""
    for value in (before, after):
        if not (math.isfinite(value) and 0 <= value <= MAX_COUNT):
            raise ImplausibleFigures(f"the endpoint's /metrics reported {name} = {value:.6g}: {_NOT_MEASURED}")
    if after < before:
        raise ImplausibleFigures(f"the endpoint's /metrics counter {name} went backwards ({before:.0f} -> {after:.0f}): server restarted or {_NOT_MEASURED}")
    return round(after - before)


def gauge(values: Mapping[str, float], name: str, high: float) -> float | None:
    """A gauge when it is a plausible reading; an impossible one is left out, not shown."""
    value = values.get(name)
    return value if value is not None and math.isfinite(value) and 0 <= value <= high else None


def check_speculation(*, drafts: int, draft_tokens: int, accepted: int, per_position: Sequence[int], generated: int | None, n: int | None) -> None:
    """vLLM's counters over a finished trial: accepted <= draft tokens <= drafts x N, drafts <= generated
    tokens (every verified draft yields a token), each position accepted at most once per draft.
    Mid-run (`generated` None) only the relations that hold at every instant are checked."""
    if accepted > draft_tokens:
        raise ImplausibleFigures(f"the endpoint's /metrics reported {accepted} accepted tokens for {draft_tokens} drafted: {_NOT_MEASURED}")
    width = n or len(per_position) or None
    if width is not None and draft_tokens > drafts * width:
        raise ImplausibleFigures(f"the endpoint's /metrics reported {draft_tokens} draft tokens for {drafts} drafts of at most {width}: {_NOT_MEASURED}")
    if generated is not None and drafts > generated:
        raise ImplausibleFigures(f"the endpoint's /metrics reported {drafts} drafts but {generated} generated tokens: {_NOT_MEASURED}")
    if n is not None and len(per_position) > n:
        raise ImplausibleFigures(f"the endpoint's /metrics reported acceptance at {len(per_position)} positions for N={n}: {_NOT_MEASURED}")
    for position, value in enumerate(per_position):
        if value > drafts:
            raise ImplausibleFigures(f"the endpoint's /metrics reported {value} accepted tokens at position {position} for {drafts} drafts: {_NOT_MEASURED}")


def check_acceptance(rate: float | None, mean_length: float | None, n: int | None) -> None:
    """The derived figures, whatever produced them: rate in [0, 1], mean length in [1, N + 1]."""
    if rate is not None and not (math.isfinite(rate) and 0.0 <= rate <= 1.0):
        raise ImplausibleFigures(f"the endpoint's counters give an acceptance rate of {rate:.6g}, outside [0, 1]: {_NOT_MEASURED}")
    top = (n + 1) if n else MAX_COUNT
    if mean_length is not None and not (math.isfinite(mean_length) and 1.0 <= mean_length <= top):
        raise ImplausibleFigures(f"the endpoint's counters give a mean acceptance length of {mean_length:.6g}, outside [1, {top}]: {_NOT_MEASURED}")


def check_usage(usage: object, max_tokens: int) -> tuple[int, int]:
    """(completion_tokens, prompt_tokens) of a usage chunk: whole, non-negative, and the output within
    the max_tokens the request asked for (vLLM never exceeds it)."""
    if not isinstance(usage, dict):
        raise ImplausibleFigures(f"the endpoint's usage chunk was {_shown(usage)}, not an object; arm not measured")
    completion = count(usage.get("completion_tokens") or 0, "usage.completion_tokens", high=MAX_COUNT)
    if completion > max_tokens:
        raise ImplausibleFigures(f"the endpoint's usage.completion_tokens was {completion} for a request of max_tokens {max_tokens}; arm not measured")
    prompt = count(usage.get("prompt_tokens") or 0, "usage.prompt_tokens", high=MAX_PROMPT_TOKENS)
    return completion, prompt
