"""`specadvisor rules check [DIR]`: validate rule files before the advisor relies on them."""

from __future__ import annotations

import argparse
from pathlib import Path


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
        help="print one entry (rule, evidence, method, drafter, model, gpu) as TOML and the file and line defining it",
        description="Follow a recommendation back: `advise --explain` names rule and evidence ids; this prints their TOML as"
        " written, ready to copy into your rules folder and edit (an entry there with the same id replaces the shipped one).",
    )
    show.add_argument("entry_id", metavar="ID", help="a rule, evidence, method, config key, model or GPU id, or a drafter name")
    show.add_argument("--rules", type=Path, action="append", default=[], metavar="DIR", help="extra rules folder, as for advise")
    show.add_argument("--json", action="store_true", help="print kind, defined_at, the parsed entry and its TOML as JSON")
    show.set_defaults(func=run_show)


def run_check(args: argparse.Namespace) -> int:
    from specadvisor.app import rules

    summary = rules.check(args.directory)
    if args.json:
        from specadvisor.cli.output import print_json

        print_json(summary)
        return 0
    counts = ", ".join(f"{n} {kind}" for kind, n in summary["counts"].items())
    print(f"rules OK: {len(summary['files'])} files ({counts})")
    for path in summary["files"]:
        print(f"  {path}")
    return 0


def run_show(args: argparse.Namespace) -> int:
    from specadvisor.app import rules

    shown = rules.show(args.entry_id, args.rules)
    if args.json:
        from specadvisor.cli.output import print_json

        print_json(shown)
        return 0
    for number, item in enumerate(shown):
        if number:
            print()
        print(f"# {item['kind']} defined at {item['defined_at']}")
        print(item["toml"])
    return 0
