"""Up-front checks of command-line values: everything a sweep is given is range-checked here before
anything is launched, opened or written, and a problem is one InputError (exit 2) naming the flag.

The sweep settings' bounds and kinds are declared once, on `domain.SweepSettings` (read here through
the generated plain table `app/setting_table.py`; bundle import and a rebuilt plan use the same
declaration); the other flags' in `specadvisor.bounds.FLAGS`. Each flag is parsed once, here:
`sweep_args` returns the settings given as one validated `SweepSettings`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from specadvisor import bounds
from specadvisor.app.engine_args import endpoint_url as endpoint_url  # one home (app), the CLI names kept
from specadvisor.app.engine_args import engine_cmd as engine_cmd
from specadvisor.app.engine_args import server_args as server_args
from specadvisor.errors import InputError
from specadvisor.quantities import parse_count, parse_count_list
from specadvisor.redact import redact_text
from specadvisor.textsafe import line

if TYPE_CHECKING:
    from specadvisor.app.setting_table import SettingRow
    from specadvisor.cli.sweep_args import SweepArgs
    from specadvisor.domain import SweepSettings

MAX_N = bounds.MAX_N
MAX_NAME_CHARS = 200

# Keys --spec-extra may not set: they come from --method and --n.
_RESERVED_SPEC_KEYS = ("method", "num_speculative_tokens")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


def _show(text: object, limit: int = 60) -> str:
    return repr(line(redact_text(str(text)), limit))


def finite(value: float | None, b: bounds.Bound, *, optional: bool = False) -> float | None:
    """`value` when it is a finite number within the bound."""
    if value is None:
        if optional:
            return None
        raise InputError(f"{b.flag} needs a number", hint=f"pass {b.flag} with a value")
    if not b.contains(value):
        example = min(max(b.low, 1), b.high) if math.isfinite(b.high) else max(b.low, 1)
        raise InputError(f"{b.flag} must be a finite number {b.range_text()}, got {value!r}", hint=f"e.g. {b.flag} {example:g}")
    return value


def flag_bound(name: str) -> bounds.Bound:
    """A flag's bound in its own unit: bounds.FLAGS, else a sweep setting's from its declaration on the
    model (the two name different flags). In that order so that `detect --timeout` does not load the
    domain model to check one number."""
    if name in bounds.FLAGS:
        return bounds.FLAGS[name]
    from specadvisor.app.setting_table import BY_NAME

    found = BY_NAME[name].bound
    assert found is not None, f"{name} is not a number"
    return found


def setting(name: str, value: float | None, *, optional: bool = False) -> float | None:
    """A flag's value checked against its declared bound (`flag_bound`)."""
    b = flag_bound(name)
    if b.whole and value is not None:
        return integer(int(value), b.flag, low=int(b.low), high=int(b.high))
    return finite(value, b, optional=optional)


def integer(value: int, flag: str, *, low: int, high: int) -> int:
    if not low <= value <= high:
        raise InputError(f"{flag} must be a whole number from {low} to {high}, got {_show(value, 30)}", hint=f"e.g. {flag} {max(low, 1)}")
    return value


def int_list(text: str, flag: str, *, low: int, high: int) -> list[int]:
    """A comma-separated list of whole numbers: no empty items (`1,,2`), nothing out of range."""
    items = [item.strip() for item in str(text).split(",")]
    if not items or any(not re.fullmatch(r"\+?\d{1,19}", item) for item in items):
        raise InputError(f"{flag} {_show(text)} is not a comma-separated list of whole numbers", hint=f"e.g. {flag} 1,3,5")
    values = [int(item) for item in items]
    bad = next((v for v in values if not low <= v <= high), None)
    if bad is not None:
        raise InputError(f"{flag} values must be from {low} to {high}, got {bad}", hint=f"e.g. {flag} 1,3,5")
    return values


def method_names(raw: list[str]) -> list[str]:
    """`--method` values: no empty items, each known to the method registry (rules/methods.toml)."""
    from specadvisor.app.sweeps import known_methods, require_method

    names = [m.strip() for item in raw for m in item.split(",")]
    if any(not name for name in names):
        raise InputError("--method has an empty item", hint="e.g. --method ngram,eagle3")
    for name in names:
        if len(name) > 64 or line(name) != name:
            raise InputError(f"unknown method {_show(name, 40)}", hint=f"known methods: {', '.join(known_methods())}")
        require_method(name)
    return names


def spec_extra(value: dict[str, Any], raw: str) -> dict[str, Any]:
    reserved = [key for key in _RESERVED_SPEC_KEYS if key in value]
    if reserved:
        raise InputError(f"--spec-extra {_show(raw)} sets {reserved[0]!r}", hint="the method comes from --method and N from --n; remove it from --spec-extra")
    return value


def env_name(text: str | None, flag: str) -> str | None:
    if text is not None and not _ENV_NAME.match(text):
        raise InputError(f"{flag} {_show(text)} is not an environment variable name", hint=f"e.g. {flag} OPENAI_API_KEY")
    return text


def name(text: str) -> str:
    if len(text) > MAX_NAME_CHARS or line(text) != text:
        raise InputError(f"--name must be one line of at most {MAX_NAME_CHARS} printable characters", hint="pick a shorter, plain name")
    return text


def settings(args: SweepArgs) -> SweepSettings:
    """Every sweep setting's flag given (those declared on `domain.SweepSettings`), parsed and
    range-checked once, in the model's units (percent -> fraction, minutes -> seconds), as one
    validated `SweepSettings` whose `model_fields_set` is what was given."""
    from specadvisor.app.setting_table import BY_NAME
    from specadvisor.domain import SweepSettings

    values = {name: setting_value(BY_NAME[name], raw) for name, raw in args.settings.items()}
    return SweepSettings.of(**values)


def _within(row: SettingRow, value: float | None) -> float | None:
    """A number checked against its row's declared bound (in the flag's unit)."""
    b = row.bound
    assert b is not None, f"{row.name} is not a number"
    if b.whole and value is not None:
        return integer(int(value), b.flag, low=int(b.low), high=int(b.high))
    return finite(value, b, optional=row.optional)


def setting_value(row: SettingRow, raw: Any) -> Any:
    """One flag's text as the model's value, by the kind its declaration gives it."""
    kind = row.kind
    if kind == "levels":
        levels = parse_count_list(str(raw), row.flag)
        for level in levels:
            _within(row, level)
        if len(set(levels)) > bounds.MAX_CONCURRENCY_LEVELS:
            raise InputError(
                f"{row.flag} has {len(set(levels))} levels, over the {bounds.MAX_CONCURRENCY_LEVELS} limit",
                hint=f"measure fewer levels, e.g. {row.flag} 1,8,32",
            )
        return levels
    if kind in ("count", "int", "float"):
        value = parse_count(str(raw), row.flag) if kind == "count" and isinstance(raw, str) else raw
        _within(row, value)
        return row.to_model(value)
    if kind == "choice":  # a word (argparse offers only these; a caller building SweepArgs may not)
        if raw not in row.choices:
            raise InputError(f"{row.flag} {_show(raw, 30)} is not one of {', '.join(row.choices)}", hint=f"e.g. {row.flag} {row.default or row.choices[0]}")
        return raw
    readers: dict[str, Any] = {
        "url": lambda text: endpoint_url(text, row.flag),
        "command": engine_cmd,
        "args": lambda given: server_args(list(given), row.flag),
        "parallel": _parallel,
        "text": lambda text: _text(text, row.flag),
    }
    return readers[kind](raw) if kind in readers else raw  # switch, negatable: argparse's own True/False


def _text(text: str, flag: str) -> str:
    if not text.strip() or len(text) > 4096 or line(text, 4096) != text:
        raise InputError(f"{flag} {_show(text)} is not one line of text", hint=f"e.g. {flag} humaneval")
    return text


def _parallel(text: str) -> str:
    from specadvisor.app.running import parallel_choice

    return parallel_choice(text)


@dataclass(frozen=True)
class CheckedSweep:
    """The sweep flags that needed parsing, parsed once: the front end builds its request from these."""

    settings: SweepSettings  # the settings given, validated (`settings`)
    n_values: list[int]
    methods: list[str]  # known to the method registry


def sweep_args(args: SweepArgs) -> CheckedSweep:
    """Every numeric and list flag of `specadvisor sweep`, checked before anything starts, and parsed once."""
    given = settings(args)
    n_values = int_list(args.n, "--n", low=1, high=bounds.MAX_N) if args.n is not None else []
    if args.n is not None and not args.method:
        raise InputError("--n given without --method", hint="name the method(s) to sweep, e.g. --method ngram --n 1,3,5")
    methods = method_names(list(args.method)) if args.method else []
    env_name(args.api_key_env, "--api-key-env")
    name(args.name)
    if args.resume is not None and not args.resume.strip():
        raise InputError("--resume needs a session id", hint="see `specadvisor sessions list` for the ids")
    return CheckedSweep(given, n_values, methods)
