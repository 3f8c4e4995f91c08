"""The text charts are pure functions: check bar lengths, the absolute scale and alignment."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from specadvisor.charts import (
    ThroughputPoint,
    acceptance_chart,
    acceptance_rows,
    hbar,
    scale_axis,
    throughput_rows,
)

EIGHTHS_PER_CELL = 8


def filled_eighths(bar: str) -> int:
    return sum(" ▏▎▍▌▋▊▉█".index(ch) for ch in bar)


def test_hbar_extremes_and_half():
    assert hbar(0.0, 10) == " " * 10
    assert hbar(1.0, 10) == "█" * 10
    assert hbar(0.5, 10) == "█" * 5 + " " * 5
    assert hbar(0.55, 10) == "█" * 5 + "▌" + " " * 4


def test_hbar_clamps_and_handles_missing():
    assert hbar(1.7, 4) == "████"
    assert hbar(-0.2, 4) == "    "
    assert hbar(None, 4) == "    "
    assert hbar(float("nan"), 4) == "    "
    assert hbar(0.5, 0) == ""


@given(st.floats(min_value=0, max_value=1), st.integers(min_value=1, max_value=200))
def test_hbar_is_exact_width_and_within_an_eighth(fraction, width):
    bar = hbar(fraction, width)
    assert len(bar) == width
    assert abs(filled_eighths(bar) - fraction * width * EIGHTHS_PER_CELL) <= 0.5 + 1e-9


def test_acceptance_is_absolute_not_rescaled():
    """0.90 and 0.95 must look nearly equal, not like empty and full (the Sparkline pitfall)."""
    rows = acceptance_rows([0.90, 0.95], 60)
    a, b = (filled_eighths(r.bar) for r in rows)
    assert b > a and (b - a) / b < 0.06
    assert rows[0].value == " 90.0%" and rows[1].value == " 95.0%"


def test_acceptance_rows_fit_the_width_and_align():
    rows = acceptance_rows([0.923, 0.769, 0.615, 0.308], 50)
    lines = [r.text() for r in rows]
    assert all(len(line) == 50 for line in lines)
    assert [r.label for r in rows] == ["pos 1", "pos 2", "pos 3", "pos 4"]
    assert len({line.index("%") for line in lines}) == 1


def test_labels_pad_for_ten_or_more_positions():
    rows = acceptance_rows([0.5] * 12, 60)
    assert rows[0].label == "pos 1 " and rows[11].label == "pos 12"


def test_scale_axis_marks_line_up_with_the_bar_column():
    rows = acceptance_rows([1.0], 40)
    axis = scale_axis(40, len(rows[0].label))
    bar_start = len(rows[0].label) + 1
    assert axis.index("0%") == bar_start
    assert axis.rstrip().endswith("100%")
    assert axis.rstrip().index("100%") + 4 == bar_start + len(rows[0].bar)


def test_acceptance_chart_text_and_empty_case():
    text = acceptance_chart([0.923, 0.769], 40)
    assert text.splitlines()[0].startswith("pos 1 ") and text.splitlines()[0].endswith("92.3%")
    assert "50%" in text.splitlines()[-1]
    assert acceptance_chart([]) == "no speculative positions measured yet"


def test_throughput_scale_starts_at_zero_and_shows_predictions():
    rows = throughput_rows(
        [ThroughputPoint("baseline", 10.0), ThroughputPoint("ngram N=4", 20.0, predicted=18.0), ThroughputPoint("ngram N=8", None, predicted=16.0)],
        70,
    )
    base, best, pending = rows
    assert filled_eighths(best.bar) == len(best.bar) * 8  # the largest value fills the bar
    assert abs(filled_eighths(base.bar) * 2 - filled_eighths(best.bar)) <= 1  # half the value, half the bar
    assert pending.bar.strip() == "" and pending.value.strip() == "- tok/s"
    assert best.secondary == "pred    18.0" and base.secondary == ""
    assert all(len(r.label) == len("ngram N=4") for r in rows)


def test_throughput_rows_empty_and_all_pending():
    assert throughput_rows([], 60) == []
    rows = throughput_rows([ThroughputPoint("baseline", None)], 60)
    assert rows[0].fraction is None and rows[0].bar.strip() == ""
