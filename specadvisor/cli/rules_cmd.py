"""`specadvisor rules check [DIR]`: validate rule files before the advisor relies on them."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("rules", help="check the rule base (shipped rules, your rules folder, DIR)")
    commands = parser.add_subparsers(dest="rules_command", metavar="SUBCOMMAND", required=True)
    check = commands.add_parser(
        "check",
        help="validate rule files: exit 0 with a summary, or exit 2 with the first problem's file and line",
        description="Loads the shipped rules, your rules folder and DIR (if given) in that order, as `advise` would.",
    )
    check.add_argument("directory", nargs="?", type=Path, metavar="DIR", help="a folder of *.toml rule files to check on top")
    check.add_argument("--json", action="store_true", help="print the summary as JSON")
    check.set_defaults(func=run_check)


def run_check(args: argparse.Namespace) -> int:
    from specadvisor.rulebase import load_rulebase

    rulebase = load_rulebase([args.directory] if args.directory else [])
    summary = {"valid": True, "files": [str(p) for p in rulebase.files], "counts": rulebase.counts()}
    if args.json:
        from specadvisor.cli.output import print_json

        print_json(summary)
        return 0
    counts = ", ".join(f"{n} {kind}" for kind, n in summary["counts"].items())
    print(f"rules OK: {len(rulebase.files)} files ({counts})")
    for path in rulebase.files:
        print(f"  {path}")
    return 0
