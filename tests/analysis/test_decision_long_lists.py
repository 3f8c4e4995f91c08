"""A verdict over many arms stays readable: its headline names at most SHOWN_NAMES arms and counts the
rest, and its reasons list at most SHOWN_ALSO_MEASURED other arms (a 100,000-arm session's undecided
verdict named all 99,936 arms in a 1.1 MB headline and listed each twice in 20 MB of reasons)."""

from __future__ import annotations

from specadvisor.analysis.decision import SHOWN_ALSO_MEASURED, SHOWN_NAMES, _also_measured, _listed


def test_a_headline_names_a_few_arms_and_counts_the_rest():
    names = [f"ngram N={n}" for n in range(1, 100_001)]
    text = _listed(names)
    assert text.startswith("ngram N=1, ngram N=2") and text.endswith(f"and {100_000 - SHOWN_NAMES} more arms")
    assert text.count("ngram") == SHOWN_NAMES and len(text) < 200
    assert _listed(names[:SHOWN_NAMES]) == ", ".join(names[:SHOWN_NAMES])  # a short list is unchanged


def test_the_other_arms_are_listed_closest_first_then_counted():
    lines = [f"arm {k}" for k in range(50_000)]
    reasons = _also_measured(iter(lines))
    assert reasons[:2] == ["also measured: arm 0", "also measured: arm 1"]
    assert (
        len(reasons) == SHOWN_ALSO_MEASURED + 1
        and reasons[-1] == f"also measured: {50_000 - SHOWN_ALSO_MEASURED} more arms, each with its speedup in its own row"
    )
    assert _also_measured(lines[:3]) == ["also measured: arm 0", "also measured: arm 1", "also measured: arm 2"]
