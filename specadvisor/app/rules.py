"""Use cases on the rule base: check rule files before the advisor relies on them (`rules check`),
and follow a recommendation back to the entry and file line that made it (`rules show`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from specadvisor.errors import InputError

if TYPE_CHECKING:
    from pydantic import BaseModel

    from specadvisor.rulebase import RuleBase


def check(directory: Path | None = None) -> dict[str, Any]:
    """The shipped rules, the user's folder and `directory` loaded as `advise` would; a bad file is an
    InputError naming its first problem's file and line."""
    from specadvisor.rulebase import load_rulebase

    rulebase = load_rulebase([directory] if directory else [])
    return {"valid": True, "files": [str(p) for p in rulebase.files], "counts": rulebase.counts()}


def show(entry_id: str, rules: list[Path]) -> list[dict[str, Any]]:
    """Every entry named `entry_id` (a rule, evidence, method, config key, model, GPU or drafter),
    with the file and line that define it and its TOML as written there."""
    from specadvisor.rulebase import load_rulebase, locate

    rulebase = load_rulebase(rules)
    found = [(kind, key, entry) for (kind, key), entry in _entries(rulebase).items() if key.lower() == entry_id.strip().lower()]
    if not found:
        raise InputError(f"no rule-base entry with id {entry_id!r}", hint="use an id printed by `specadvisor advise --explain`")
    shown: list[dict[str, Any]] = []
    for kind, key, entry in found:
        origin = rulebase.origins[(kind, key)]
        text = origin.text()
        line = locate.table_line(text, kind, origin.index)
        shown.append(
            {
                "kind": kind,
                "defined_at": f"{origin.file}:{line}",
                "entry": entry.model_dump(mode="json"),
                "toml": locate.table_source(text, kind, origin.index),
            }
        )
    return shown


def _entries(rulebase: RuleBase) -> dict[tuple[str, str], BaseModel]:
    """(kind, id) -> entry for every kind the rule base holds."""
    entries: dict[tuple[str, str], BaseModel] = {}
    for kind, items in (
        ("method", rulebase.methods.values()),
        ("config_key", rulebase.config_keys.values()),
        ("gpu", rulebase.gpus),
        ("model", rulebase.models),
        ("evidence", rulebase.evidence.values()),
        ("rule", rulebase.rules),
    ):
        entries.update({(kind, item.id): item for item in items})
    entries.update({("drafter", d.drafter): d for d in rulebase.drafters})
    return entries
