"""Statistics: checked against hand-computed and textbook values."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from specadvisor.stats import latency_stats, mean_ci, percentile, t_critical_975, wilson


def test_percentile_interpolates_like_numpy():
    values = [10.0, 20.0, 30.0, 40.0]
    assert percentile(values, 0) == 10.0
    assert percentile(values, 100) == 40.0
    assert percentile(values, 50) == 25.0
    assert percentile(values, 90) == pytest.approx(37.0)  # numpy.percentile([10,20,30,40], 90)
    assert percentile([], 50) is None
    with pytest.raises(ValueError):
        percentile(values, 101)


def test_latency_stats_fields():
    s = latency_stats([1.0, 2.0, 3.0, 4.0, 100.0])
    assert s.mean == pytest.approx(22.0)
    assert s.median == 3.0
    assert s.p99 == pytest.approx(96.16)
    assert s.std == pytest.approx(math.sqrt(sum((x - 22.0) ** 2 for x in [1, 2, 3, 4, 100]) / 5))
    assert latency_stats([]).mean is None


def test_wilson_textbook_values():
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = wilson(5, 10)
    assert (lo, hi) == (pytest.approx(0.2366, abs=1e-4), pytest.approx(0.7634, abs=1e-4))
    assert wilson(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson(11, 10)


@given(st.integers(1, 10_000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_contains_the_estimate_and_stays_in_unit_interval(kn):
    k, n = kn
    lo, hi = wilson(k, n)
    assert 0.0 <= lo <= k / n + 1e-12 <= hi + 2e-12 <= 1.0 + 2e-12


def test_mean_ci_t_interval():
    lo, hi = mean_ci([1.0, 2.0, 3.0, 4.0, 5.0])
    half = 2.776 * math.sqrt(2.5) / math.sqrt(5)
    assert (lo, hi) == (pytest.approx(3 - half), pytest.approx(3 + half))
    assert mean_ci([7.0]) is None
    assert t_critical_975(1) == 12.706 and 1.96 < t_critical_975(100) < 2.0


def test_t_quantile_matches_the_table_and_the_normal_limit():
    from specadvisor.stats import t_cdf, t_quantile

    for df, expected in ((1, 12.706), (2, 4.303), (5, 2.571), (30, 2.042)):
        assert abs(t_quantile(0.975, df) - expected) < 1e-3
    assert abs(t_quantile(0.995, 4) - 4.604) < 1e-3  # a level the 95% table cannot give
    assert abs(t_quantile(0.975, 10_000) - 1.960) < 1e-3
    assert t_quantile(0.025, 7) == -t_quantile(0.975, 7)
    assert abs(t_cdf(t_quantile(0.9, 3), 3) - 0.9) < 1e-9
