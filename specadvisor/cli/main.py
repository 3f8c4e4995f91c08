"""Entry point of the `specadvisor` command.

Each command group lives in its own module exposing `register(subparsers)`; the module sets
`func=<callable(args) -> int>` on its parser. Modules import their heavy dependencies inside the
command function so that `specadvisor detect` stays fast and free of textual/httpx.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from specadvisor import __version__
from specadvisor.errors import SpecAdvisorError

COMMAND_MODULES = (
    "detect",
    "inspect_cmd",
    "advise",
    "rules_cmd",
    "sweep",
    "report",
    "sessions",
    "engine",
    "demo",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="specadvisor",
        description="Choose, measure and export speculative-decoding settings for vLLM. "
        "Run without arguments to open the terminal UI.",
    )
    parser.add_argument("--version", action="version", version=f"specadvisor {__version__}")
    parser.add_argument("--db", type=Path, default=None, help="SQLite database to use (default: the user data dir; SPECADVISOR_HOME moves it)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"specadvisor.cli.{name}").register(subparsers)
    return parser


def _open_tui(args: argparse.Namespace) -> int:
    from specadvisor.tui.launch import run_tui  # imported here: Textual costs start-up time

    return run_tui(db_path=args.db)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command is None:
            return _open_tui(args)
        return int(args.func(args) or 0)
    except SpecAdvisorError as err:
        print(f"specadvisor: error: {err.one_line()}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("specadvisor: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
