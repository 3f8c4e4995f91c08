"""Each sweep setting is declared once, on `domain.SweepSettings`: the CLI's flag and range check,
the model's own validation, bundle import and the TUI form all take the same bound from it."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from specadvisor import setting_specs
from specadvisor.cli import validate
from specadvisor.cli.main import build_parser
from specadvisor.cli.setting_flags import FLAGS
from specadvisor.cli.sweep_args import SweepArgs
from specadvisor.domain import SweepSettings
from specadvisor.errors import InputError
from specadvisor.tui.setup_form import field_error


def _sweep_action(flag: str):
    sweep = next(a for a in build_parser()._actions if a.dest == "command").choices["sweep"]
    return next(a for a in sweep._actions if flag in a.option_strings)


def _over(spec: setting_specs.SettingSpec) -> float:
    """A value just past the high end, in the flag's unit."""
    high = spec.cli_bound.high
    return high + 1 if spec.whole else (high if spec.cli_bound.high_open else high * 1.5)


NUMBERS = sorted(name for name, spec in setting_specs.SPECS.items() if not spec.choices)
CHOICES = sorted(name for name, spec in setting_specs.SPECS.items() if spec.choices)


@pytest.mark.parametrize("name", NUMBERS)
def test_the_flag_the_check_the_model_and_a_bundle_share_one_bound(name):
    spec = setting_specs.SPECS[name]
    action = _sweep_action(spec.flag)
    assert action.dest == name and spec.help.replace("%", "%%") in action.help
    assert action.default == spec.flag_default
    over = _over(spec)
    text = str(int(over)) if spec.whole else repr(over)
    ns = build_parser().parse_args(["sweep", "--model", "m", spec.flag, text])
    with pytest.raises(InputError, match=spec.flag):
        validate.sweep_args(SweepArgs.from_namespace(ns))
    in_model_units = [int(over)] if name == "concurrency" else (int(over) if spec.whole else spec.to_model(over))
    with pytest.raises(ValidationError):
        SweepSettings(**{name: in_model_units})
    assert setting_specs.problem(name, in_model_units[0] if name == "concurrency" else in_model_units) is not None


@pytest.mark.parametrize("name", CHOICES)
def test_a_choice_setting_takes_only_its_words_everywhere(name):
    spec = setting_specs.SPECS[name]
    action = _sweep_action(spec.flag)
    assert action.dest == name and tuple(action.choices) == spec.choices and action.default == spec.flag_default
    with pytest.raises(InputError, match=spec.flag):
        build_parser().parse_args(["sweep", "--model", "m", spec.flag, "sideways"])
    with pytest.raises(InputError, match=spec.flag):  # a SweepArgs built without argparse is checked too
        validate.measurement(SweepArgs(settings={**{f.name: f.default for f in FLAGS}, name: "sideways"}))
    with pytest.raises(ValidationError):
        SweepSettings(**{name: "sideways"})
    assert setting_specs.problem(name, "sideways") is not None  # what bundle import checks
    assert all(setting_specs.problem(name, word) is None for word in spec.choices)


def test_parsed_once_in_the_models_units():
    argv = ["sweep", "--model", "m", "--num-prompts", "1k", "--concurrency", "1,8", "--drift-threshold", "7", "--confidence", "90", "--budget", "20"]
    values = validate.sweep_args(SweepArgs.from_namespace(build_parser().parse_args(argv))).measurement
    assert values["num_prompts"] == 1000 and values["concurrency"] == [1, 8]
    assert values["drift_threshold"] == pytest.approx(0.07) and values["confidence"] == pytest.approx(0.9) and values["budget_s"] == 1200
    assert "output_len" not in values and "request_rate" not in values  # unset: the prompt set's length, as fast as possible
    SweepSettings(**values)  # every parsed value is one the model takes


def test_the_tui_form_takes_the_same_temperature_bound():
    high = setting_specs.bound("temperature").high
    assert high == 2.0  # vLLM's SamplingParams refuses a temperature above 2
    assert field_error("temperature", f"{high:g}") is None
    assert field_error("temperature", f"{high + 0.5:g}") is not None
    assert field_error("num_prompts", str(int(setting_specs.bound("num_prompts").high) + 1)) is not None


def test_the_generated_flag_table_is_the_models():
    from pathlib import Path

    from specadvisor.cli import setting_flags

    assert [f.name for f in FLAGS] == list(setting_specs.SPECS)
    assert Path(setting_flags.__file__).read_text(encoding="utf-8") == setting_specs.flag_table()
