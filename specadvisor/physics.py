"""What a vLLM server can physically report: the one check every measurement passes.

An endpoint is not trusted (docs/security.md), and neither is a bundle or a `vllm bench` file: its
counters, usage chunks and stored figures are claims. A claim no vLLM server could make (more tokens
accepted than drafted, more accepted than generated, a counter that runs backwards or is fractional,
per-position counts that rise or add up to more than the accepted total, 10^12 tokens for a request
capped at 256, a count of 1e300 or NaN) is refused with one line naming the field:

- while measuring (`bench.metrics`, `bench.measure`, `bench.loadgen`): the arm fails, none of its
  figures is stored as a measurement;
- on every result written to the store, whatever produced it (a launched server, an endpoint, a
  bundle, `import-bench`): `enforce` stores a result that breaks it as `failed`, its error naming
  the violation, never as ok (`store.Store` calls it on every write).

The relations (vLLM's rejection sampler accepts a prefix of each draft and adds one token):
accepted <= draft tokens <= drafts x N (N unknown: `bounds.MAX_N`); accepted + drafts <= generated
tokens, up to N per finished request (a request that stops mid-step drops accepted tokens it never
emits; checked on a trial, where both are the server's counters); per position at most one
acceptance per draft, counts non-increasing with the position and summing to the accepted total;
every count whole.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

from specadvisor import bounds
from specadvisor.domain import ArmResult, ArmStatus
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
    """after - before of one cumulative counter: both finite, non-negative, whole and exact, never decreasing."""
    for value in (before, after):
        if not (math.isfinite(value) and 0 <= value <= MAX_COUNT):
            raise ImplausibleFigures(f"the endpoint's /metrics reported {name} = {value:.6g}: {_NOT_MEASURED}")
        if not float(value).is_integer():
            raise ImplausibleFigures(f"the endpoint's /metrics reported {name} = {value:.6g}, not a whole count: {_NOT_MEASURED}")
    if after < before:
        raise ImplausibleFigures(f"the endpoint's /metrics counter {name} went backwards ({before:.0f} -> {after:.0f}): server restarted or {_NOT_MEASURED}")
    return round(after - before)


def gauge(values: Mapping[str, float], name: str, high: float) -> float | None:
    """A gauge when it is a plausible reading; an impossible one is left out, not shown."""
    value = values.get(name)
    return value if value is not None and math.isfinite(value) and 0 <= value <= high else None


def check_speculation(
    *, drafts: int, draft_tokens: int, accepted: int, per_position: Sequence[int], generated: int | None, n: int | None, finished: int = 0
) -> None:
    """vLLM's counters over a finished trial (`generated`: its generation tokens, `finished`: the
    requests it finished), or mid-run (`generated` None: counters read one after another while they
    move, so only the relations that hold at every instant are checked). See `relation_problem`."""
    problem = relation_problem(
        drafts=drafts, draft_tokens=draft_tokens, accepted=accepted, per_position=per_position, n=n, whole=generated is not None
    ) or _generated_problem(drafts, accepted, generated, n or len(per_position) or bounds.MAX_N, finished)
    if problem:
        raise ImplausibleFigures(f"the endpoint's /metrics reported {problem}: {_NOT_MEASURED}")


def relation_problem(*, drafts: int, draft_tokens: int, accepted: int, per_position: Sequence[int], n: int | None, whole: bool = True) -> str | None:
    """The first relation the speculation counts break, or None: accepted <= draft tokens <= drafts
    x N (N unknown: vLLM's limit), at most N positions, each accepted at most once per draft; for a
    `whole` reading (not one taken mid-run) also the per-position series non-increasing and summing
    to the accepted total."""
    width = n or len(per_position) or bounds.MAX_N
    if accepted > draft_tokens:
        return f"{accepted} accepted tokens for {draft_tokens} drafted"
    if draft_tokens > drafts * width:
        return f"{draft_tokens} draft tokens for {drafts} drafts of at most {width}" + ("" if n or per_position else " (N unknown: vLLM's limit)")
    if n is not None and len(per_position) > n:
        return f"acceptance at {len(per_position)} positions for N={n}"
    for position, value in enumerate(per_position):
        if value > drafts:
            return f"{value} accepted tokens at position {position} for {drafts} drafts"
    if not whole:
        return None
    for position in range(1, len(per_position)):
        if per_position[position] > per_position[position - 1]:
            return f"more acceptances at position {position} ({per_position[position]}) than at position {position - 1} ({per_position[position - 1]})"
    if per_position and sum(per_position) != accepted:
        return f"per-position acceptances summing to {sum(per_position)} for {accepted} accepted tokens"
    return None


def _generated_problem(drafts: int, accepted: int, generated: int | None, width: int, finished: int) -> str | None:
    """Each draft step yields its accepted tokens plus one: accepted + drafts <= generated, up to N
    per finished request (a request that stops mid-step never emits the rest of what was accepted)."""
    if generated is None or accepted + drafts <= generated + width * finished:
        return None
    return f"{accepted} accepted tokens and {drafts} drafts but {generated} generated tokens over {finished} finished requests"


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


# ---------------------------------------------------------------------- stored results

MEASURED = frozenset({ArmStatus.ok, ArmStatus.stopped_early})  # the statuses every figure reads
MIN_TOKENS_PER_S = 1 / bounds.MAX_DURATION_S  # one token in the longest run a result may record


def result_problem(result: ArmResult, n: int | None) -> str | None:
    """The first impossible figure of a result, or None: its speculation counters against each
    other (`relation_problem`), its derived acceptance against its counters (or, where a source kept
    no counters, against N), its latency quantiles in order. Not its counters against its output
    tokens: an endpoint's counters include other clients' requests (a trial's own check compares
    them with the server's generation counter)."""
    for name in ("completed", "failed", "output_tokens", "input_tokens"):
        value = getattr(result, name)
        if not 0 <= value <= MAX_COUNT:
            return f"{name} {_shown(value)} is not a count"
    for name, value in (("output_throughput", result.output_throughput), *((f"trials[{i}]", t) for i, t in enumerate(result.trials))):
        if value is not None and 0 < value < MIN_TOKENS_PER_S:  # the read side survives it (figures.ratio_of_logs); it is no measurement
            return f"{name} of {value:.3g} tok/s is less than one token in {bounds.MAX_DURATION_S:g} s"
    positions = [p.accepted for p in result.per_position]
    if any(p.position != i for i, p in enumerate(result.per_position)):
        return "per-position acceptances are not numbered 0, 1, 2, ..."
    width = n or len(positions) or bounds.MAX_N
    drafts, drafted, accepted = result.num_drafts, result.num_draft_tokens, result.num_accepted_tokens
    if drafts is not None and drafted is not None and accepted is not None:
        for name, value in (("num_drafts", drafts), ("num_draft_tokens", drafted), ("num_accepted_tokens", accepted)):
            if not 0 <= value <= MAX_COUNT:
                return f"{name} {_shown(value)} is not a count"
        problem = relation_problem(drafts=drafts, draft_tokens=drafted, accepted=accepted, per_position=positions, n=n)
        if problem:
            return problem
        # a source may state its figures rounded (vLLM's log line: two decimals, its rate a percent to one)
        if drafts and result.mean_acceptance_length is not None and not math.isclose(result.mean_acceptance_length, 1 + accepted / drafts, abs_tol=0.006):
            return f"mean acceptance length {result.mean_acceptance_length:.6g} where its counters give {1 + accepted / drafts:.6g}"
        if drafted and result.acceptance_rate is not None and not math.isclose(result.acceptance_rate, accepted / drafted, abs_tol=0.001):
            return f"acceptance rate {result.acceptance_rate:.6g} where its counters give {accepted / drafted:.6g}"
    else:  # a source without counters (an older bundle): what its own figures allow
        if n is not None and len(positions) > n:
            return f"acceptance at {len(positions)} positions for N={n}"
        for position, p in enumerate(result.per_position):
            if not 0 <= p.accepted <= p.drafts:
                return f"{p.accepted} accepted tokens at position {position} for {p.drafts} drafts"
            if position and p.drafts == result.per_position[0].drafts and p.accepted > result.per_position[position - 1].accepted:
                return f"more acceptances at position {position} ({p.accepted}) than at position {position - 1} ({positions[position - 1]})"
    length = result.mean_acceptance_length
    if length is not None and not (math.isfinite(length) and 1 <= length <= width + 1):
        return f"mean acceptance length {length:.6g}, outside [1, {width + 1}] for drafts of at most {width}"
    for name in ("ttft_ms", "tpot_ms", "itl_ms", "e2el_ms"):
        q = getattr(result, name)
        ordered = [v for v in (q.median, q.p90, q.p99) if v is not None]
        if any(a > b * (1 + 1e-9) for a, b in itertools.pairwise(ordered)):
            return f"{name} quantiles out of order (median {q.median}, p90 {q.p90}, p99 {q.p99})"
    return None


def enforce(result: ArmResult, n: int | None) -> str | None:
    """Mark a measured result that breaks physics as failed, its error naming the violation (in
    place: the caller's session and the store then agree). Returns the violation, or None."""
    if result.status not in MEASURED:
        return None
    problem = result_problem(result, n)
    if problem is not None:
        result.status = ArmStatus.failed
        result.error = f"impossible figures: {problem}; not a measurement"
    return problem
