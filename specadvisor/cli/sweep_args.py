"""The sweep command's arguments as one typed, immutable object (as vLLM's SweepServeArgs is).

argparse hands back a Namespace whose attributes nothing checks; the sweep's helpers take this
instead, so a renamed or mistyped option is a type error, not an AttributeError mid-sweep. The
sweep settings (the flags generated from `domain.SweepSettings`' declarations) travel together in
`settings`, only those given, as typed on the command line ("1k", "1,8"); `cli.validate.settings`
parses them once into one validated `SweepSettings`.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any

from specadvisor.app.setting_table import SETTINGS


@dataclass(frozen=True)
class SweepArgs:
    model: str | None = None
    drafter: str | None = None
    method: tuple[str, ...] = ()
    n: str | None = None
    baseline: bool = True
    workload: str | None = None  # None: the built-in set's own (bench.prompts.workload_of), chat for a file
    spec_extra: tuple[str, ...] = ()
    api_key_env: str | None = None
    ray: str | None = None
    cpu: bool = False
    name: str = ""
    json: bool = False
    dry_run: bool = False  # print what would run and exit
    resume: str | None = None
    rebuild: bool = False
    entry_point: str | None = None  # hidden: the demo says it started the session (provenance)
    db: Path | None = None  # the global --db option
    # the settings' flags given (None: not given), as typed, by SweepSettings field name (`cli.validate.settings` parses them)
    settings: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def from_namespace(cls, ns: argparse.Namespace) -> SweepArgs:
        """Every field from the parsed arguments. A new `sweep` flag needs a field here: until it has
        one, every sweep run stops with this error (and so do the sweep CLI tests)."""
        known = {f.name for f in fields(cls)} - {"settings"}
        missing = sorted(set(vars(ns)) - known - _SETTINGS - _NOT_SWEEP_OPTIONS)
        if missing:
            raise TypeError(f"sweep option(s) {', '.join(missing)} have no field in SweepArgs (specadvisor/cli/sweep_args.py)")
        values: dict[str, Any] = {}
        for name in known:
            value = getattr(ns, name)
            values[name] = tuple(value) if isinstance(value, list) else value
        settings = {name: getattr(ns, name) for name in _SETTINGS if getattr(ns, name, None) is not None}
        return cls(**values, settings=MappingProxyType(settings))


_NOT_SWEEP_OPTIONS = {"command", "func"}  # set by the top-level parser
_SETTINGS = {row.name for row in SETTINGS}  # the settings' flags (declared on domain.SweepSettings)
