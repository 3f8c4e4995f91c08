"""Reading a trained drafter's measurements: which N to sweep, and whether serving drifted from training.

Both rest on vLLM's per-position acceptance (accepted at position k / drafts), never on the
trainer's own accuracy: a head's teacher-forced accuracy on its training data is the optimistic
bound, what vLLM accepts while serving is the fact.
"""

from __future__ import annotations

from dataclasses import dataclass

from specadvisor.domain import ArmResult

USEFUL_POSITION_RATE = 0.2  # a position accepted less often than this no longer pays for its draft
DRIFT_DROP = 0.15  # a fall of the accepted tokens per draft past this share is named


def position_rates(result: ArmResult) -> list[float]:
    return [p.rate for p in sorted(result.per_position, key=lambda p: p.position)]


def n_grid(rates: list[float], *, floor: float = USEFUL_POSITION_RATE) -> tuple[list[int], str]:
    """The N values to sweep from the per-position acceptance measured on held-out prompts: around
    the last position still accepted at least `floor` of the time (seed 000: "if later draft
    positions no longer contribute, reduce N"), never one value. Returns (grid, the reason)."""
    if not rates:
        return [1, 2, 3], "no per-position acceptance was read: sweeping N = 1, 2, 3"
    useful = max((k + 1 for k, rate in enumerate(rates) if rate >= floor), default=1)
    top = len(rates) + 1
    grid = sorted({max(1, useful - 1), useful, min(top, useful + 1)})
    if len(grid) < 2:
        grid = sorted({1, 2})
    shown = " ".join(f"{r:.2f}" for r in rates)
    past = (
        f"positions past {useful} are accepted under {floor:.0%} of the time"
        if useful < len(rates)
        else f"every measured position is accepted at least {floor:.0%} of the time"
    )
    return grid, f"held-out acceptance per position {shown}: {past}, so N is swept over {', '.join(map(str, grid))}"


@dataclass(frozen=True)
class DrafterDrift:
    """The drafter's acceptance on held-out prompts of its training set beside the serving prompts'."""

    n: int
    heldout_al: float
    serving_al: float
    heldout_rates: list[float]
    serving_rates: list[float]
    drop: float  # share of the accepted tokens per draft lost on the serving prompts (negative: gained)
    named: bool  # the drop is past DRIFT_DROP: "trained on X, serving Y"
    summary: str


def drafter_drift(heldout: ArmResult, serving: ArmResult, *, trained_on: str, serving_on: str, threshold: float = DRIFT_DROP) -> DrafterDrift | None:
    """Compare the two at the positions both measured; None when either lacks an acceptance length."""
    if heldout.mean_acceptance_length is None or serving.mean_acceptance_length is None:
        return None
    h_rates, s_rates = position_rates(heldout), position_rates(serving)
    depth = min(len(h_rates), len(s_rates))
    h_al = 1 + sum(h_rates[:depth]) if depth else heldout.mean_acceptance_length
    s_al = 1 + sum(s_rates[:depth]) if depth else serving.mean_acceptance_length
    gained_h, gained_s = h_al - 1, s_al - 1
    drop = 1 - gained_s / gained_h if gained_h > 0 else 0.0
    named = drop > threshold
    where = f"at N={depth}" if depth else ""
    if named:
        summary = (
            f"trained on {trained_on}, serving {serving_on}: acceptance length {s_al:.2f} against {h_al:.2f} on held-out training prompts {where} "
            f"({drop:.0%} fewer accepted tokens per draft); retrain on prompts like the serving ones"
        )
    else:
        summary = f"acceptance length {s_al:.2f} on {serving_on} against {h_al:.2f} on held-out prompts of {trained_on} {where}: no drift past {threshold:.0%}"
    return DrafterDrift(
        n=depth,
        heldout_al=h_al,
        serving_al=s_al,
        heldout_rates=h_rates[:depth],
        serving_rates=s_rates[:depth],
        drop=drop,
        named=named,
        summary=" ".join(summary.split()),
    )
