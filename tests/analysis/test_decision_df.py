"""The interval's degrees of freedom follow its noise (figures.comparison_df): a comparison whose
variance is all within-run takes the within-run estimate's df, one limited by launch spread keeps the
launch df. Held to the launch prior's 4 df, the CPU control's 36%-per-request comparison stayed
undecided whatever the passes (benchmarks/README.md, "More requests on running servers")."""

from __future__ import annotations

from specadvisor.figures import comparison_df, comparison_quantile


def test_the_df_follow_the_component_that_carries_the_variance():
    assert comparison_df(0.0, 4, 0.01, 42) == 42  # all within-run
    assert comparison_df(0.01, 4, 0.0, 42) == 4  # all launch-to-launch
    assert comparison_df(0.01, 4, 0.01, 0) == 4  # no within-run estimate: nothing to add
    assert comparison_df(0.01, 4, 0.01, 42) == 14  # equal shares: (2v)^2 / (v^2/4 + v^2/42) = 14.6, rounded down
    assert comparison_df(0.01, 4, 0.0001, 42) == 4  # a negligible within-run share adds nothing


def test_a_late_look_on_within_run_noise_is_not_held_to_the_prior_df():
    # the third look's share (0.2 of 5%), one arm: t at the prior's 4 df against the 42 df of the estimate
    held = comparison_quantile(0.95, 3, True, 1, 4)
    now = comparison_quantile(0.95, 3, True, 1, comparison_df(0.0, 4, 0.0165, 42))
    assert held > 4.5 and now < 2.8
