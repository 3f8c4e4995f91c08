"""The sweep command's typed arguments cover every option its parser defines."""

from __future__ import annotations

import pytest

from specadvisor.cli.main import build_parser
from specadvisor.cli.sweep_args import SweepArgs


def test_every_sweep_option_becomes_a_typed_field():
    ns = build_parser().parse_args(["sweep", "--model", "m", "--method", "ngram", "--method", "suffix", "--n", "2,4", "--server-arg=--x=1"])
    args = SweepArgs.from_namespace(ns)
    assert args.method == ("ngram", "suffix") and args.server_arg == ("--x=1",) and args.n == "2,4"
    assert args.baseline is True and args.settings["temperature"] == 0.0 and args.db is None
    assert args.settings["num_prompts"] == "32" and args.settings["drift_threshold"] == 5.0


def test_a_flag_without_a_field_is_named():
    ns = build_parser().parse_args(["sweep", "--model", "m"])
    ns.brand_new_flag = True
    with pytest.raises(TypeError, match="brand_new_flag have no field in SweepArgs"):
        SweepArgs.from_namespace(ns)
