"""Each sweep setting's bound, flag, help, default and unit, read from its one declaration on
`domain.SweepSettings` (the `setting(...)` fields).

The CLI builds its flags and range checks from `SPECS`, bundle import (`store/bundle_limits.py`)
and a rebuilt plan (`sweep/crossing.py`) check values against `problem`, and the TUI form takes its
bounds from `bound`: a new measurement setting is one field on the model (plus, if it is shown, one
form field; plus, if a bundle may carry it into a rebuild, the allow-list in `sweep/crossing.py`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal, get_args, get_origin

import annotated_types as at
from pydantic.fields import FieldInfo

from specadvisor.bounds import Bound
from specadvisor.domain import ConcurrencyLevel, SweepSettings


@dataclass(frozen=True)
class SettingSpec:
    """One setting as the command line sees it (values in the flag's unit: `scale` x the model's)."""

    name: str
    flag: str
    help: str
    unit: str
    default: Any  # the model's default, in the model's unit
    scale: float
    whole: bool
    bound: Bound  # in the model's unit
    optional: bool  # None is a valid value (off / not set)
    counts: bool  # the flag reads counts as people type them ("1k", "1,8")
    flag_default: Any  # the flag's default, in the flag's unit (None: decided later, e.g. by the prompt set)
    choices: tuple[str, ...] = ()  # a setting that is one of these words (a Literal field), not a number

    @property
    def cli_bound(self) -> Bound:
        """The bound in the flag's unit (percent, minutes)."""
        b = self.bound
        if self.scale == 1:
            return b  # ints stay ints: 2**63 - 1 is not exact as a float
        return Bound(self.flag, b.low * self.scale, b.high * self.scale, whole=b.whole, low_open=b.low_open, high_open=b.high_open)

    @property
    def kind(self) -> str:
        """How the command line reads it: count (`1k`), levels (`1,8`), int, float or choice (a word)."""
        if self.choices:
            return "choice"
        if self.counts:
            return "levels" if isinstance(self.default, list) else "count"
        return "int" if self.whole else "float"

    @property
    def metavar(self) -> str | None:
        if self.choices:
            return "|".join(self.choices)
        return {"%": "PCT", "min": "MIN"}.get(self.unit)

    def to_model(self, value: float) -> float:
        """A flag's value in the model's unit (95 % -> 0.95, 20 min -> 1200 s)."""
        if self.scale == 1:
            return value
        per = 1 / self.scale  # minutes: 60, exactly, so 20 min is 1200 s and not 1200.0000000000002
        return value * round(per) if abs(per - round(per)) < 1e-9 else value / self.scale


def _bound(flag: str, info: FieldInfo | Any, whole: bool) -> Bound:
    low: float = -math.inf
    high: float = math.inf
    low_open = high_open = False
    for m in getattr(info, "metadata", []):
        if isinstance(m, at.Ge):
            low = m.ge  # type: ignore[assignment]  # an int stays exact (2**63 - 1 is not a float)
        elif isinstance(m, at.Gt):
            low, low_open = m.gt, True  # type: ignore[assignment]
        elif isinstance(m, at.Le):
            high = m.le  # type: ignore[assignment]
        elif isinstance(m, at.Lt):
            high, high_open = m.lt, True  # type: ignore[assignment]
    return Bound(flag, low, high, whole=whole, low_open=low_open, high_open=high_open)


def _specs() -> dict[str, SettingSpec]:
    specs: dict[str, SettingSpec] = {}
    level = next(m for m in get_args(ConcurrencyLevel)[1:] if isinstance(m, FieldInfo))
    for name, info in SweepSettings.model_fields.items():
        extra = info.json_schema_extra
        if not isinstance(extra, dict) or "flag" not in extra:
            continue
        flag = str(extra["flag"])
        annotation = info.annotation
        optional = type(None) in get_args(annotation)
        choices = _choices(annotation)
        if name == "concurrency":  # a list: each level has the bound
            bound, whole = _bound(flag, level, True), True
        elif choices:
            bound, whole = Bound(flag, -math.inf, math.inf), False  # not a number: `problem` checks the word
        else:
            whole = annotation is int or (int in get_args(annotation) and float not in get_args(annotation))
            bound = _bound(flag, info, whole)
        default = info.get_default(call_default_factory=True)
        scale = float(extra.get("cli_scale", 1.0))  # type: ignore[arg-type]
        counts = bool(extra.get("counts", False))
        if "cli_default" in extra:
            flag_default = extra["cli_default"]
        elif default is None or scale == 1:
            flag_default = ",".join(map(str, default)) if isinstance(default, list) else str(default) if counts else default
        else:
            flag_default = float(round(default * scale, 10))
        specs[name] = SettingSpec(
            name, flag, info.description or "", str(extra.get("unit", "")), default, scale, whole, bound, optional, counts, flag_default, choices
        )
    return specs


def _choices(annotation: Any) -> tuple[str, ...]:
    """The words a Literal setting takes (`Literal["auto", "chat"] | None`); () for a number."""
    for arg in (annotation, *get_args(annotation)):
        if get_origin(arg) is Literal:
            return tuple(str(a) for a in get_args(arg))
    return ()


SPECS: dict[str, SettingSpec] = _specs()


def bound(name: str) -> Bound:
    """A setting's bound in the model's unit."""
    return SPECS[name].bound


def flag_table() -> str:
    """The flags as a Python module of plain data (`cli/setting_flags.py`, written by
    `python -m specadvisor.cli.doc --write`): building the parser then imports no pydantic."""
    rows = "\n".join(
        f"    SettingFlag({s.name!r}, {s.flag!r}, {s.help!r}, {s.flag_default!r}, {s.kind!r}, {s.metavar!r}{f', {s.choices!r}' if s.choices else ''}),"
        for s in SPECS.values()
    )
    return (
        '"""The sweep settings\' flags, GENERATED from `domain.SweepSettings` by `python -m specadvisor.cli.doc --write`:\n'
        "do not edit by hand (a test fails when this differs from the model). Plain data, so that building the\n"
        'parser imports no pydantic."""\n\n'
        "# fmt: off\n"
        "from __future__ import annotations\n\n"
        "from typing import Any, NamedTuple\n\n\n"
        "class SettingFlag(NamedTuple):\n"
        "    name: str  # the SweepSettings field (and the argparse dest)\n"
        "    flag: str\n"
        "    help: str\n"
        "    default: Any  # in the flag's unit\n"
        "    kind: str  # count | levels | int | float | choice\n"
        "    metavar: str | None\n"
        "    choices: tuple[str, ...] = ()  # the words a choice takes\n\n\n"
        f"FLAGS: tuple[SettingFlag, ...] = (\n{rows}\n)\n"
    )


def problem(name: str, value: object) -> str | None:
    """Why `value` (in the model's unit) is outside the setting's declared bound (or, for a choice,
    not one of its words); None when within."""
    spec = SPECS[name]
    if spec.choices:
        if value in spec.choices or (value is None and spec.optional):
            return None
        return f"is {str(value)[:40]!r}, not one of {', '.join(spec.choices)}"
    return spec.bound.problem(value)
