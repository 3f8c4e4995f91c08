"""Read rules/*.toml directories into one validated RuleBase; later files replace earlier ones by id.

Errors are one line naming the file and line and what to change, because the people who write
rule files are users extending the catalog, not developers reading tracebacks.
"""

from __future__ import annotations

import functools
import re
import tomllib
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from specadvisor.errors import InputError
from specadvisor.rulebase import locate
from specadvisor.rulebase.references import check_references
from specadvisor.rulebase.schema import (
    KINDS,
    ConfigKeySpec,
    DrafterEntry,
    Evidence,
    GpuSpec,
    MethodSpec,
    ModelFamily,
    Rule,
    WorkloadDefaults,
)


@dataclass(frozen=True)
class Origin:
    """Where an entry was defined: for error messages and for `rules check`'s summary."""

    file: Path
    kind: str
    index: int  # position among the file's [[kind]] tables

    def text(self) -> str:
        return self.file.read_text(encoding="utf-8")


@dataclass
class RuleBase:
    methods: dict[str, MethodSpec] = field(default_factory=dict)
    config_keys: dict[str, ConfigKeySpec] = field(default_factory=dict)
    gpus: list[GpuSpec] = field(default_factory=list)
    models: list[ModelFamily] = field(default_factory=list)
    drafters: list[DrafterEntry] = field(default_factory=list)
    evidence: dict[str, Evidence] = field(default_factory=dict)
    rules: list[Rule] = field(default_factory=list)
    workloads: dict[str, WorkloadDefaults] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)
    origins: dict[tuple[str, str], Origin] = field(default_factory=dict)

    @property
    def vllm_methods(self) -> set[str]:
        return {m.vllm_method for m in self.methods.values()}

    def counts(self) -> dict[str, int]:
        return {
            "methods": len(self.methods),
            "config keys": len(self.config_keys),
            "gpus": len(self.gpus),
            "models": len(self.models),
            "drafters": len(self.drafters),
            "evidence": len(self.evidence),
            "rules": len(self.rules),
            "workloads": len(self.workloads),
        }


def _entry_id(kind: str, raw: dict[str, Any]) -> str:
    key = raw.get("drafter" if kind == "drafter" else "id")
    return str(key) if key is not None else "?"


def _model_at(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel]:
    """The nested pydantic model addressed by a validation error's location (for listing allowed keys)."""
    for part in loc:
        if not isinstance(part, str) or part not in model.model_fields:
            break
        annotation = model.model_fields[part].annotation
        candidates = [annotation, *typing.get_args(annotation)]
        nested = next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)
        if nested is None:
            break
        model = nested
    return model


def _validation_error(path: Path, text: str, kind: str, index: int, raw: dict[str, Any], exc: ValidationError) -> InputError:
    err = exc.errors()[0]
    loc = tuple(err["loc"])
    keys = [str(p) for p in loc if isinstance(p, str)]
    line = locate.key_line(text, kind, index, keys) if err["type"] != "missing" else locate.table_line(text, kind, index)
    where = f"{path}:{line}: {kind} {_entry_id(kind, raw)!r}"
    dotted = ".".join(str(p) for p in loc)
    if err["type"] == "extra_forbidden":
        allowed = ", ".join(_model_at(KINDS[kind], loc[:-1]).model_fields)
        return InputError(f"{where}: unknown key '{dotted}'", hint=f"check the spelling; allowed keys here: {allowed}")
    if err["type"] == "missing":
        return InputError(f"{where}: missing required key '{dotted}'", hint=f"add `{keys[-1] if keys else dotted} = ...` to the table")
    message = err["msg"].removeprefix("Value error, ")
    return InputError(f"{where}: '{dotted}' {message}", hint=f"got {err.get('input')!r}; fix the value")


def _read_file(path: Path) -> tuple[str, dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read the rules file: {exc}", hint="check the file's permissions and encoding (UTF-8)") from exc
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"at line (\d+)", str(exc))
        where = f"{path}:{found.group(1)}" if found else str(path)
        raise InputError(f"{where}: not valid TOML: {exc}", hint="fix the syntax at that line") from exc


def _load_file(path: Path, merged: dict[str, dict[str, tuple[BaseModel, Origin]]]) -> None:
    text, data = _read_file(path)
    for kind, tables in data.items():
        if kind not in KINDS:
            line = locate.top_key_line(text, kind)
            raise InputError(
                f"{path}:{line}: unknown table '{kind}'",
                hint=f"rules files hold only [[{']], [['.join(KINDS)}]] tables",
            )
        if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
            line = locate.top_key_line(text, kind)
            raise InputError(f"{path}:{line}: '{kind}' must be written as [[{kind}]] tables", hint=f"start each entry with a [[{kind}]] header")
        seen: set[str] = set()
        for index, raw in enumerate(tables):
            try:
                entry = KINDS[kind].model_validate(raw)
            except ValidationError as exc:
                raise _validation_error(path, text, kind, index, raw, exc) from None
            key = _entry_id(kind, raw)
            if key in seen:
                line = locate.table_line(text, kind, index)
                raise InputError(f"{path}:{line}: {kind} {key!r} is defined twice in this file", hint="rename or delete one of them")
            seen.add(key)
            merged.setdefault(kind, {})[key] = (entry, Origin(path, kind, index))


def _rules_files(directory: Path) -> list[Path]:
    if not directory.is_dir():
        raise InputError(f"rules folder not found: {directory}", hint="pass an existing folder of *.toml files")
    return sorted(directory.glob("*.toml"))


def _default_dirs(include_user: bool) -> list[Path]:
    from specadvisor.resources import rules_dir
    from specadvisor.settings import paths

    dirs = [rules_dir()]
    if include_user and paths().user_rules.is_dir():
        dirs.append(paths().user_rules)
    return dirs


def rules_sha256(*, include_user: bool = True) -> str:
    """One hash over every rules file the advisor reads (name and bytes, in load order): two sessions
    advised from the same rules carry the same value, a local override changes it."""
    import hashlib

    digest = hashlib.sha256()
    for directory in _default_dirs(include_user):
        for path in sorted(directory.glob("*.toml")) if directory.is_dir() else []:
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def load_rulebase(extra_dirs: typing.Iterable[Path] = (), *, include_user: bool = True) -> RuleBase:
    """Shipped rules, then the user's rules folder, then `extra_dirs`; later entries replace earlier by id."""
    merged: dict[str, dict[str, tuple[BaseModel, Origin]]] = {}
    files: list[Path] = []
    for directory in [*_default_dirs(include_user), *map(Path, extra_dirs)]:
        for path in _rules_files(directory):
            _load_file(path, merged)
            files.append(path)
    rb = _assemble(merged, files)
    check_references(rb)
    return rb


@functools.lru_cache(maxsize=1)
def default_rulebase() -> RuleBase:
    """The shipped + user rule base, loaded once per process (look-ups are called often)."""
    return load_rulebase()


def _assemble(merged: dict[str, dict[str, tuple[BaseModel, Origin]]], files: list[Path]) -> RuleBase:
    def entries(kind: str) -> list[Any]:
        return [entry for entry, _ in merged.get(kind, {}).values()]

    rb = RuleBase(
        methods={m.id: m for m in entries("method")},
        config_keys={k.id: k for k in entries("config_key")},
        gpus=entries("gpu"),
        models=entries("model"),
        drafters=entries("drafter"),
        evidence={e.id: e for e in entries("evidence")},
        rules=entries("rule"),
        workloads={w.id: w for w in entries("workload")},
        files=files,
    )
    rb.origins = {(kind, key): origin for kind, table in merged.items() for key, (_, origin) in table.items()}
    return rb
