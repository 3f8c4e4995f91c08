"""Which N to sweep for a trained drafter, and whether serving drifted from its training prompts."""

from __future__ import annotations

from specadvisor.analysis.trained import drafter_drift, n_grid
from specadvisor.domain import ArmResult, PositionStats


def _result(rates: list[float], drafts: int = 100) -> ArmResult:
    positions = [PositionStats(position=k, accepted=round(r * drafts), drafts=drafts, rate=r) for k, r in enumerate(rates)]
    return ArmResult(arm_id="eagle3-n4", per_position=positions, mean_acceptance_length=1 + sum(rates), num_drafts=drafts)


def test_grid_centres_on_the_last_position_still_paying() -> None:
    grid, reason = n_grid([0.62, 0.41, 0.24, 0.11])
    assert grid == [2, 3, 4]
    assert "positions past 3" in reason and "2, 3, 4" in reason


def test_grid_is_never_one_value() -> None:
    assert n_grid([0.05, 0.0, 0.0, 0.0])[0] == [1, 2]
    assert len(n_grid([])[0]) >= 2


def test_grid_reaches_one_past_the_measured_depth_when_every_position_pays() -> None:
    grid, reason = n_grid([0.9, 0.8, 0.7, 0.6])
    assert grid == [3, 4, 5]
    assert "every measured position" in reason


def test_a_large_drop_on_other_prompts_is_named() -> None:
    found = drafter_drift(_result([0.6, 0.4, 0.2, 0.1]), _result([0.3, 0.1, 0.05]), trained_on="sharegpt", serving_on="humaneval")
    assert found is not None and found.named
    assert found.n == 3
    assert "trained on sharegpt, serving humaneval" in found.summary
    assert abs(found.drop - (1 - 0.45 / 1.2)) < 1e-9


def test_no_drift_within_the_threshold() -> None:
    found = drafter_drift(_result([0.6, 0.4, 0.2]), _result([0.58, 0.39, 0.19]), trained_on="a", serving_on="a")
    assert found is not None and not found.named and "no drift" in found.summary


def test_no_comparison_without_acceptance() -> None:
    assert drafter_drift(ArmResult(arm_id="x"), _result([0.5]), trained_on="a", serving_on="b") is None
