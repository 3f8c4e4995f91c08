"""The sweep settings' flags, built from their declarations on `domain.SweepSettings` (through the
plain table `app/setting_table.py`): name, help, default, unit and kind are not restated where a
command offers them (`sweep` offers every one; `train` the judging sweep's, under its own spellings).
A flag not given stays None, so a request knows what was asked; counts stay text ("1k", "1,8") for
`cli.validate.setting_value`, which parses each once."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from specadvisor.app.setting_table import BY_NAME, SETTINGS, SettingRow


def add_setting_flags(p: argparse.ArgumentParser, rows: Iterable[SettingRow] | None = None) -> None:
    """One flag per setting (every declared one unless `rows` says which), in declaration order."""
    groups: dict[str, argparse._MutuallyExclusiveGroup] = {}
    for row in SETTINGS if rows is None else rows:
        if row.exclusive and row.exclusive not in groups:
            groups[row.exclusive] = p.add_mutually_exclusive_group()
        add_setting_flag(groups[row.exclusive] if row.exclusive else p, row)


def add_setting_flag(target: argparse._ActionsContainer, row: SettingRow, *, dest: str | None = None, help: str | None = None) -> None:
    """The flag of one setting, with its declared kind, metavar and help (or `help`), default None."""
    types: dict[str, Callable[[str], Any]] = {"int": int, "float": float}
    text = (help or row.help).replace("%", "%%") + _default_text(row.default, help or row.help)
    name = dest or row.name
    metavar = row.metavar or row.flag.lstrip("-").upper().replace("-", "_")  # as argparse names it from the flag
    if row.kind == "switch":
        target.add_argument(row.flag, dest=name, action="store_true", default=None, help=text)
    elif row.kind == "negatable":
        target.add_argument(row.flag, dest=name, action=argparse.BooleanOptionalAction, default=None, help=text)
    elif row.kind == "args":
        target.add_argument(row.flag, dest=name, action="append", default=None, metavar=metavar, help=text)
    else:
        choices = list(row.choices) or None  # a choice's words: argparse refuses the rest in one line
        target.add_argument(row.flag, dest=name, type=types.get(row.kind, str), default=None, metavar=metavar, help=text, choices=choices)


def spelled(name: str, flag: str) -> SettingRow:
    """A declared setting under another spelling of its flag (`train --sweep-num-prompts`): its
    checks and messages name that flag."""
    row = BY_NAME[name]
    return row._replace(flag=flag, bound=replace(row.bound, flag=flag) if row.bound is not None else None)


def _default_text(default: Any, help: str) -> str:
    """(default: X) in the flag's unit, unless the help says it or there is none."""
    if default is None or default == [] or "default" in help:
        return ""
    return f" (default: {'yes' if default is True else 'no' if default is False else default})"
