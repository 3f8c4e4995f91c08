"""The N an emitted config starts from, and the sweep grid centred on it.

The config a user pastes should carry the N the evidence expects to be best for this method,
drafter and concurrency, not the grid's smallest value. In order of authority:

1. the N at which a measurement of this method on this very model peaked (rules/evidence.toml
   `best_n`; advisor.measured picks it); a grid that misses it is moved around it;
2. a rule that sets `num_speculative_tokens` (EAGLE-3 peaks near 3 and wants fewer at high
   concurrency, P-EAGLE keeps gaining to 7, MTP per model card), citing the rule's evidence;
3. a block drafter's own block: DFlash drafts block - 1 tokens and DSpark the whole block, which is
   what their model cards serve;
4. the drafter's own config (a speculators checkpoint's `speculative_tokens`);
5. else the smallest grid value the method's default grid starts at, said to rest on no evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise

from specadvisor.advisor.measured import MeasuredN
from specadvisor.advisor.options import Option
from specadvisor.advisor.scoring import Tally
from specadvisor.rulebase import RuleBase, registry

BLOCK_EVIDENCE = "{method}-block-n"
"""The evidence id (rules/evidence.toml) for "this block drafter starts at its full block"."""


@dataclass(frozen=True)
class StartN:
    n: int
    grid: list[int]
    why: str
    evidence: list[str] = field(default_factory=list)


def n_limit(option: Option, rb: RuleBase) -> int | None:
    """The largest N vLLM and the drafter accept: the method's limit, the block, the drafter's own cap."""
    limit = registry.n_limit(option.method.vllm_method, option.block_size, rb)
    if option.max_n:
        limit = min(limit, option.max_n) if limit else option.max_n
    return limit


def centre(grid: list[int], n: int, limit: int | None) -> list[int]:
    """The grid with `n` in it and, where the limit allows, one step above it, so the sweep can see
    whether the evidence's N is a peak. The grid's floor is kept: rules set it on purpose."""
    kept = sorted({g for g in grid if limit is None or g <= limit} | {n})
    if kept[-1] == n and limit is not None and n < limit:
        step = n - kept[-2] if len(kept) > 1 else 1
        kept.append(min(limit, n + step))
    if len(kept) == 1 and kept[0] > 1:  # one value is not a sweep: step down as the AMD block-16 grid does (3, 7, 11, 15)
        step = max(1, kept[0] // 3)
        kept = [max(1, kept[0] - 2 * step), kept[0] - step, kept[0]]
    return sorted(set(kept))


def around(grid: list[int], n: int, limit: int | None) -> list[int]:
    """The grid re-centred on a measured best N: the rule's values within two of its steps of `n`,
    and one step either side of `n` where the limit allows (EAGLE-3 [1, 2, 3, 4] peaking at 5 -> 3-6)."""
    values = sorted(set(grid))
    step = min((b - a for a, b in pairwise(values)), default=1)
    kept = {g for g in values if abs(g - n) <= 2 * step and (limit is None or g <= limit)} | {n}
    kept |= {m for m in (n - step, n + step) if m >= 1 and (limit is None or m <= limit)}
    return centre(sorted(kept), n, limit)


def _fallback(grid: list[int], default_grid: list[int]) -> int:
    floor = min(default_grid) if default_grid else 1
    at_or_above = [n for n in grid if n >= floor]
    return at_or_above[0] if at_or_above else grid[0]


def choose(option: Option, tally: Tally, grid: list[int], rb: RuleBase, *, drafter_k: int | None = None, measured: MeasuredN | None = None) -> StartN:
    """The starting N for one candidate, its centred grid and why (with evidence ids)."""
    spec = option.method
    limit = n_limit(option, rb)
    if measured is not None:
        n = min(measured.n, limit) if limit else measured.n
        cut = f" (cut to {n}, the drafter's limit)" if n != measured.n else ""
        ev = measured.evidence
        where = "on this model and GPU" if measured.same_gpu else f"on this model ({ev.hardware or 'hardware not stated'})"
        kept = n in grid  # a rule's grid that already holds the measured peak was chosen on purpose (deep N on math)
        sweep = "the rule's grid holds it" if kept else "the grid is moved around it"
        why = f"Starts at N={n}{cut}: {spec.label} peaked at N={measured.n} measured {where} ({ev.dataset or 'its benchmark'}; {ev.id}); {sweep}."
        return StartN(n, centre(grid, n, limit) if kept else around(grid, n, limit), why, [ev.id])
    ruled = tally.config.get("num_speculative_tokens")
    if isinstance(ruled, int) and not isinstance(ruled, bool) and ruled >= 1:
        n = min(ruled, limit) if limit else ruled
        cut = f" (cut to {n}, the drafter's limit)" if n != ruled else ""
        why = f"Starts at N={n}{cut}: rule {tally.n_rule} sets the N its evidence found best ({', '.join(tally.n_evidence) or 'no evidence id'})."
        return StartN(n, centre(grid, n, limit), why, list(tally.n_evidence))
    if option.block_size and spec.block_n_offset is not None and limit:
        cited = BLOCK_EVIDENCE.format(method=spec.id)
        evidence = [cited] if cited in rb.evidence else []
        why = (
            f"Starts at N={limit}: the drafter's block is {option.block_size} and {spec.label} serves up to "
            f"{limit} draft tokens per block, which its model cards use; the grid keeps shorter N to compare."
        )
        return StartN(limit, centre(grid, limit, limit), why, evidence)
    if drafter_k and (limit is None or drafter_k <= limit):
        why = f"Starts at N={drafter_k}: the drafter's own config proposes {drafter_k} speculative tokens."
        return StartN(drafter_k, centre(grid, drafter_k, limit), why)
    n = _fallback(grid, spec.default_n_grid)
    unknown_block = " (the drafter's block size is unknown: inspect it with --drafter)" if spec.block_n_offset is not None else ""
    why = f"Starts at N={n}, the low end of {spec.label}'s grid: no published evidence names a better start for this situation{unknown_block}."
    return StartN(n, sorted(set(grid)), why)
