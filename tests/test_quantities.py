"""Numbers as people type them, shared by the TUI's forms and the CLI."""

from __future__ import annotations

import pytest

from specadvisor.errors import InputError
from specadvisor.quantities import parse_count, parse_count_list, parse_duration, parse_number


@pytest.mark.parametrize("text,value", [("256", 256), ("2k", 2000), ("2K", 2000), ("1.5k", 1500), ("2,048", 2048), ("4_096", 4096), (" 8 ", 8)])
def test_counts(text, value):
    assert parse_count(text, "Output tokens") == value


def test_empty_means_the_default_and_errors_name_the_label():
    assert parse_count("", "Requests", default=32) == 32
    assert parse_count_list("  ", "Concurrency", default=[1]) == [1]
    assert parse_number("", "Temperature", default=0.0) == 0.0
    with pytest.raises(InputError, match=r"^Requests: 'lots' is not a whole number"):
        parse_count("lots", "Requests", default=32)
    with pytest.raises(InputError, match="Requests must be at least 1, got 0"):
        parse_count("0", "Requests")
    with pytest.raises(InputError, match="not a whole number"):
        parse_count("1.5", "Requests")


def test_levels_and_decimals():
    assert parse_count_list("1,8", "Concurrency") == [1, 8]
    assert parse_count_list("8 1; 1", "Concurrency") == [1, 8]
    with pytest.raises(InputError, match="Concurrency needs positive integers: 'x' is not one"):
        parse_count_list("1,x", "Concurrency")
    assert parse_number("0,7", "Temperature") == pytest.approx(0.7)
    with pytest.raises(InputError, match="Temperature must be between 0 and 2"):
        parse_number("3", "Temperature", maximum=2)
    with pytest.raises(InputError, match="finite"):
        parse_number("nan", "Temperature")


@pytest.mark.parametrize(
    "text,seconds",
    [("30 min", 1800), ("about 30 min", 1800), ("1h", 3600), ("1 h 30 min", 5400), ("2 hours", 7200), ("90s", 90), ("45", 2700), ("1,5 h", 5400)],
)
def test_durations(text, seconds):
    assert parse_duration(text, "Time budget") == seconds


def test_bad_durations_and_no_budget():
    assert parse_duration("", "Time budget") is None
    assert parse_duration("none", "Time budget", default=60) is None
    for bad in ("soon", "30 parsecs", "0 min"):
        with pytest.raises(InputError, match=r"^Time budget"):
            parse_duration(bad, "Time budget")
