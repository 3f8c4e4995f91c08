"""`specadvisor rules check [DIR]`: validate rule files before the advisor relies on them."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import BaseModel

    from specadvisor.rulebase import RuleBase


def register(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="rules_command", metavar="SUBCOMMAND")
    check = commands.add_parser(
        "check",
        help="validate rule files: exit 0 with a summary, or exit 2 with the first problem's file and line",
        description="Loads the shipped rules, your rules folder and DIR (if given) in that order, as `advise` would.",
    )
    check.add_argument("directory", nargs="?", type=Path, metavar="DIR", help="a folder of *.toml rule files to check on top")
    check.add_argument("--json", action="store_true", help="print the summary as JSON")
    check.set_defaults(func=run_check)
    show = commands.add_parser(
        "show",
        help="print one entry (rule, evidence, method, drafter, model, gpu) and the file and line defining it",
        description="Follow a recommendation back: `advise --explain` names rule and evidence ids; this shows their source.",
    )
    show.add_argument("entry_id", metavar="ID", help="a rule, evidence, method, config key, model or GPU id, or a drafter name")
    show.add_argument("--rules", type=Path, action="append", default=[], metavar="DIR", help="extra rules folder, as for advise")
    show.add_argument("--json", action="store_true")
    show.set_defaults(func=run_show)


def run_check(args: argparse.Namespace) -> int:
    from specadvisor.rulebase import load_rulebase

    rulebase = load_rulebase([args.directory] if args.directory else [])
    summary: dict[str, Any] = {"valid": True, "files": [str(p) for p in rulebase.files], "counts": rulebase.counts()}
    if args.json:
        from specadvisor.cli.output import print_json

        print_json(summary)
        return 0
    counts = ", ".join(f"{n} {kind}" for kind, n in summary["counts"].items())
    print(f"rules OK: {len(rulebase.files)} files ({counts})")
    for path in rulebase.files:
        print(f"  {path}")
    return 0


def run_show(args: argparse.Namespace) -> int:
    from specadvisor.errors import InputError
    from specadvisor.rulebase import load_rulebase, locate

    rulebase = load_rulebase(args.rules)
    entries = _entries(rulebase)
    found = [(kind, key, entry) for (kind, key), entry in entries.items() if key.lower() == args.entry_id.strip().lower()]
    if not found:
        raise InputError(f"no rule-base entry with id {args.entry_id!r}", hint="use an id printed by `specadvisor advise --explain`")
    shown: list[dict[str, Any]] = []
    for kind, key, entry in found:
        origin = rulebase.origins[(kind, key)]
        line = locate.table_line(origin.text(), kind, origin.index)
        shown.append({"kind": kind, "defined_at": f"{origin.file}:{line}", "entry": entry.model_dump(mode="json")})
    if args.json:
        from specadvisor.cli.output import print_json

        print_json(shown)
        return 0
    for item in shown:
        print(f"{item['kind']} defined at {item['defined_at']}")
        for key, value in item["entry"].items():
            if value not in (None, "", [], {}):
                print(f"  {key}: {value}")
    return 0


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
