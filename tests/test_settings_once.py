"""Each sweep setting is declared once, on `domain.SweepSettings`: the CLI's flag and range check,
the model's own validation, bundle import and the TUI form all take the same declaration, and a new
setting needs its declaration (and its behaviour) only."""

from __future__ import annotations

import argparse
from pathlib import Path
from types import ModuleType

import pytest
from pydantic import ValidationError

from specadvisor import setting_specs
from specadvisor.app import setting_table
from specadvisor.cli import validate
from specadvisor.cli.main import build_parser
from specadvisor.cli.setting_flags import add_setting_flags
from specadvisor.cli.sweep_args import SweepArgs
from specadvisor.domain import SweepSettings, setting
from specadvisor.errors import InputError
from specadvisor.tui.setup_form import field_error, setting_fields

NUMERIC = sorted(name for name, spec in setting_specs.SPECS.items() if spec.numeric)
CHOICES = sorted(name for name, spec in setting_specs.SPECS.items() if spec.choices)


def _sweep_action(flag: str) -> argparse.Action:
    sweep = next(a for a in build_parser()._actions if a.dest == "command").choices["sweep"]
    return next(a for a in sweep._actions if flag in a.option_strings)


def _over(spec: setting_specs.SettingSpec) -> float:
    """A value just past the high end, in the flag's unit."""
    high = spec.cli_bound.high
    return high + 1 if spec.whole else (high if spec.cli_bound.high_open else high * 1.5)


def test_every_field_is_a_declared_setting_with_a_flag_or_the_runners_own_record():
    """All 27 fields: 24 settings, each a `sweep` flag generated from its declaration (--bracket,
    --adaptive, --goodput, --parallel, --prompts, --request-format among them), and the runner's 3 records."""
    fields = SweepSettings.model_fields
    internal = {name for name, info in fields.items() if isinstance(info.json_schema_extra, dict) and info.json_schema_extra.get("internal")}
    assert set(setting_specs.SPECS) | internal == set(fields) and not set(setting_specs.SPECS) & internal
    assert internal == {"parallel", "looks", "max_model_len"} and len(fields) == 27
    for spec in setting_specs.SPECS.values():
        action = _sweep_action(spec.flag)
        assert action.dest == spec.name and spec.help.replace("%", "%%") in action.help
        assert action.default is None, "a flag not given stays None: the request knows what was asked"
    for flag in ("--bracket", "--adaptive", "--goodput", "--parallel", "--prompts", "--engine-cmd", "--endpoint", "--server-arg"):
        _sweep_action(flag)


@pytest.mark.parametrize("name", NUMERIC)
def test_the_flag_the_check_the_model_and_a_bundle_share_one_bound(name):
    spec = setting_specs.SPECS[name]
    over = _over(spec)
    text = str(int(over)) if spec.whole else repr(over)
    ns = build_parser().parse_args(["sweep", "--model", "m", spec.flag, text])
    with pytest.raises(InputError, match=spec.flag):
        validate.sweep_args(SweepArgs.from_namespace(ns))
    in_model_units = [int(over)] if name == "concurrency" else (int(over) if spec.whole else spec.to_model(over))
    with pytest.raises(ValidationError):
        SweepSettings(**{name: in_model_units})
    with pytest.raises(InputError, match=spec.flag):
        SweepSettings.of(**{name: in_model_units})
    assert setting_specs.problem(name, in_model_units[0] if name == "concurrency" else in_model_units) is not None


@pytest.mark.parametrize("name", CHOICES)
def test_a_choice_setting_takes_only_its_words_everywhere(name):
    spec = setting_specs.SPECS[name]
    action = _sweep_action(spec.flag)
    assert action.dest == name and tuple(action.choices) == spec.choices and action.default is None
    with pytest.raises(InputError, match=spec.flag):
        build_parser().parse_args(["sweep", "--model", "m", spec.flag, "sideways"])
    with pytest.raises(InputError, match=spec.flag):  # a SweepArgs built without argparse is checked too
        validate.sweep_args(SweepArgs(settings={name: "sideways"}))
    with pytest.raises(ValidationError):
        SweepSettings(**{name: "sideways"})
    assert setting_specs.problem(name, "sideways") is not None  # what bundle import checks
    assert all(setting_specs.problem(name, word) is None for word in spec.choices)


def test_parsed_once_in_the_models_units_and_only_what_was_given():
    argv = ["sweep", "--model", "m", "--num-prompts", "1k", "--concurrency", "1,8", "--drift-threshold", "7", "--confidence", "90", "--budget", "20"]
    argv += ["--no-bracket", "--adaptive", "--parallel", "2", "--prompts", "math", "--engine-cmd", "/opt/v serve", "--server-arg=--a=1", "--server-arg=--b"]
    settings = validate.sweep_args(SweepArgs.from_namespace(build_parser().parse_args(argv))).settings
    assert settings.num_prompts == 1000 and settings.concurrency == [1, 8]
    assert settings.drift_threshold == pytest.approx(0.07) and settings.confidence == pytest.approx(0.9) and settings.budget_s == 1200
    assert (settings.bracket, settings.adaptive, settings.parallel_choice, settings.prompt_source) == (False, True, "2", "math")
    assert settings.engine_cmd == ["/opt/v", "serve"] and settings.server_args == ["--a=1", "--b"]
    assert "output_len" not in settings.model_fields_set and "request_rate" not in settings.model_fields_set  # the prompt set's length, as fast as possible
    with pytest.raises(ValidationError):
        settings.num_prompts = 3  # type: ignore[misc]  # frozen: a change is `replace`, validated


def test_every_change_is_validated_and_keeps_what_was_given():
    asked = SweepSettings.of(num_prompts=64)
    changed = asked.replace(time_limit_s=600.0)
    assert changed.given() == {"num_prompts": 64, "time_limit_s": 600.0} and asked.time_limit_s is None
    with pytest.raises(InputError) as caught:
        asked.replace(slo_tpot_ms=1e12)
    assert caught.value.one_line() == (
        "p99 TPOT target (--slo-tpot-ms) must be at most 86,400,000 ms, got 1000000000000.0 (enter a value at most 86,400,000 ms)"
    )


def test_the_tui_form_takes_the_same_bounds():
    high = setting_specs.bound("temperature").high
    assert high == 2.0  # vLLM's SamplingParams refuses a temperature above 2
    assert field_error("temperature", f"{high:g}") is None
    assert field_error("temperature", f"{high + 0.5:g}") is not None
    assert field_error("num_prompts", str(int(setting_specs.bound("num_prompts").high) + 1)) is not None
    assert [f.id for f in setting_fields()] == [name for name, spec in setting_specs.SPECS.items() if spec.form]


def test_the_generated_setting_table_is_the_models():
    assert [row.name for row in setting_table.SETTINGS] == list(setting_specs.SPECS)
    assert Path(setting_table.__file__).read_text(encoding="utf-8") == setting_specs.setting_table()


class _WithTopP(SweepSettings):
    """SweepSettings with one setting more, declared as any other: nothing else is written for it."""

    top_p: float = setting(1.0, "nucleus sampling of every request", flag="--top-p", label="Top-p", form=True, gt=0.0, le=1.0, allow_inf_nan=False)


def test_a_new_setting_is_its_declaration_only():
    """The flag, its parsing and range check, the TUI form's field and its check all follow from
    the declaration: the generators are handed a model with one field more and nothing else."""
    specs = setting_specs.specs_of(_WithTopP)
    table = ModuleType("table")
    exec(compile(setting_specs.setting_table(specs), "setting_table", "exec"), table.__dict__)  # the generated module, as --write writes it
    row = table.BY_NAME["top_p"]
    parser = argparse.ArgumentParser()
    add_setting_flags(parser, table.SETTINGS)
    assert parser.parse_args(["--top-p", "0.9"]).top_p == 0.9 and parser.parse_args([]).top_p is None
    assert validate.setting_value(row, 0.9) == 0.9
    with pytest.raises(InputError, match="--top-p"):
        validate.setting_value(row, 1.5)
    (field,) = (f for f in setting_fields(table.SETTINGS) if f.id == "top_p")
    assert (field.label, field.default) == ("Top-p", "1")
    assert field.parse("0.5", field.label, field.default) == 0.5
    with pytest.raises(InputError, match="Top-p"):
        field.parse("2", field.label, field.default)
    assert _WithTopP.of(top_p=0.5).replace(seed=3).top_p == 0.5
