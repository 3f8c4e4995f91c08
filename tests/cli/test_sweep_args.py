"""The sweep command's typed arguments cover every option its parser defines."""

from __future__ import annotations

import pytest

from specadvisor.cli.main import build_parser
from specadvisor.cli.sweep_args import SweepArgs


def test_every_sweep_option_becomes_a_typed_field_and_the_settings_given_are_kept_apart():
    argv = ["sweep", "--model", "m", "--method", "ngram", "--method", "suffix", "--n", "2,4", "--server-arg=--x=1", "--no-bracket", "--num-prompts", "1k"]
    args = SweepArgs.from_namespace(build_parser().parse_args(argv))
    assert args.method == ("ngram", "suffix") and args.n == "2,4" and args.baseline is True and args.db is None
    assert args.settings == {"server_args": ["--x=1"], "bracket": False, "num_prompts": "1k"}, "only what was given, as typed"


def test_a_flag_without_a_field_is_named():
    ns = build_parser().parse_args(["sweep", "--model", "m"])
    ns.brand_new_flag = True
    with pytest.raises(TypeError, match="brand_new_flag have no field in SweepArgs"):
        SweepArgs.from_namespace(ns)
