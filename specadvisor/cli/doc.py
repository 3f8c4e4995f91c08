"""Generated documentation that cannot drift: the README's CLI table, docs/schema.md and the sweep
settings' table (`app/setting_table.py`, read from `domain.SweepSettings`).

    python -m specadvisor.cli.doc --write    # regenerate them after changing a flag, a setting or a migration
    python -m specadvisor.cli.doc --check    # exit 1 naming the stale file (what the tests run)

The CLI table is read from the argparse parser itself (every command, subcommand and option with its
help); the schema page from the migrations applied to an empty in-memory database, so both say what
the code does.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from specadvisor.app import docs
from specadvisor.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SCHEMA_PAGE = ROOT / "docs" / "schema.md"
SETTING_TABLE = ROOT / "specadvisor" / "app" / "setting_table.py"
WRITE_COMMAND = "python -m specadvisor.cli.doc --write"
START = f"<!-- cli-table: generated from argparse by `{WRITE_COMMAND}`; do not edit by hand -->"
END = "<!-- /cli-table -->"


# --------------------------------------------------------------------------- the CLI table


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[argparse.ArgumentParser] | None:
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _option(action: argparse.Action) -> str:
    """`--model MODEL`, `--json`, `--baseline/--no-baseline` as the user types them."""
    name = "/".join(action.option_strings) if len(action.option_strings) > 1 and "--no-" in action.option_strings[-1] else action.option_strings[-1]
    if action.nargs == 0:
        return name
    metavar = action.metavar or (action.dest.upper() if action.choices is None else "|".join(map(str, action.choices)))
    return f"{name} {metavar}"


def _positionals(parser: argparse.ArgumentParser) -> str:
    names = []
    for action in parser._actions:
        if action.option_strings or isinstance(action, argparse._SubParsersAction):
            continue
        metavar = action.metavar or action.dest.upper()
        names.append(f"{metavar}..." if action.nargs in ("+", "*") else f"[{metavar}]" if action.nargs == "?" else str(metavar))
    return " ".join(names)


def _row(prog: str, parser: argparse.ArgumentParser, help_text: str) -> str:
    options = [_option(a) for a in parser._actions if a.option_strings and a.help != argparse.SUPPRESS and not isinstance(a, argparse._HelpAction)]
    command = " ".join(part for part in (prog, _positionals(parser)) if part)
    shown = ", ".join(f"`{o}`" for o in options) or "-"
    return f"| `{_cell(command)}` | {_cell(help_text)} | {_cell(shown)} |"


def cli_table() -> str:
    """One row per command and subcommand: synopsis, what it does, every option."""
    parser = build_parser()
    rows = ["| command | what it does | options |", "|---|---|---|"]
    rows.append(_row("specadvisor", parser, "the terminal UI (no command): Setup, Advice, Sweep, Results, Sessions; `F1` help"))
    commands = _subparsers(parser)
    assert commands is not None
    helps = {a.dest: a.help or "" for a in commands._choices_actions}
    for name, sub in commands.choices.items():
        nested = _subparsers(sub)
        if nested is None:
            rows.append(_row(f"specadvisor {name}", sub, helps.get(name, "")))
            continue
        nested_helps = {a.dest: a.help or "" for a in nested._choices_actions}
        for sub_name, leaf in nested.choices.items():
            rows.append(_row(f"specadvisor {name} {sub_name}", leaf, nested_helps.get(sub_name, "")))
    return "\n".join(rows)


def readme_with_table(readme: str) -> str:
    if START not in readme or END not in readme:
        raise SystemExit(f"{README}: the markers around the CLI table are missing ({START} ... {END})")
    head, rest = readme.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{cli_table()}\n{END}{tail}"


# --------------------------------------------------------------------------- entry point


def generated() -> dict[Path, str]:
    return {
        SETTING_TABLE: docs.setting_table(),  # first: the parser (and so the README table) is built from it
        README: readme_with_table(README.read_text(encoding="utf-8")),
        SCHEMA_PAGE: docs.schema_page(WRITE_COMMAND),
    }


def stale() -> list[Path]:
    return [path for path, text in generated().items() if not path.exists() or path.read_text(encoding="utf-8") != text]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m specadvisor.cli.doc", description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the generated parts")
    args = parser.parse_args(argv)
    if args.write:
        if SETTING_TABLE.read_text(encoding="utf-8") != docs.setting_table():
            SETTING_TABLE.write_text(docs.setting_table(), encoding="utf-8")
            # the parser already imported the old table: build the README from the new one in a fresh process
            import subprocess

            return subprocess.call([sys.executable, "-m", "specadvisor.cli.doc", "--write"])
        for path, text in generated().items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        return 0
    outdated = stale()
    for path in outdated:
        print(f"{path.relative_to(ROOT)} is out of date: run `{WRITE_COMMAND}`", file=sys.stderr)
    return 1 if outdated else 0


if __name__ == "__main__":
    sys.exit(main())
