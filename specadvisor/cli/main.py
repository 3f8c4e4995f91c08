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
from typing import NoReturn

from specadvisor import __version__
from specadvisor.errors import InputError, SpecAdvisorError

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


class _OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is the same one line (exit 2) as every other bad input."""

    def error(self, message: str) -> NoReturn:
        raise InputError(_one_line(message), hint=f"see `{self.prog} --help`")


def _one_line(text: str) -> str:
    from specadvisor.textsafe import line

    return line(" ".join(str(text).split()), 300)


def build_parser() -> argparse.ArgumentParser:
    parser = _OneLineParser(
        prog="specadvisor",
        description="Choose, measure and export speculative-decoding settings for vLLM. Run without arguments to open the terminal UI.",
    )
    parser.add_argument("--version", action="version", version=f"specadvisor {__version__}")
    parser.add_argument("--db", type=Path, default=None, help="SQLite database to use (default: the user data dir; SPECADVISOR_HOME moves it)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_OneLineParser)
    for name in COMMAND_MODULES:
        importlib.import_module(f"specadvisor.cli.{name}").register(subparsers)
    return parser


def _open_tui(args: argparse.Namespace) -> int:
    # imported here: Textual costs start-up time
    from specadvisor.tui.launch import run_tui

    return run_tui(db_path=args.db)


def main(argv: list[str] | None = None) -> int:
    from specadvisor.redact import remember_argv, remember_environment

    # Every secret this run was given, so that it is removed wherever it comes back (an endpoint's 401
    # body, vLLM's echo of its arguments), not only where a pattern recognises its shape.
    remember_environment()
    remember_argv(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(argv)
        if args.command is None:
            return _open_tui(args)
        return int(args.func(args) or 0)
    except SpecAdvisorError as err:
        print(f"specadvisor: error: {error_line(err)}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("specadvisor: interrupted", file=sys.stderr)
        return 130


def error_line(err: SpecAdvisorError) -> str:
    """The one line shown for an error: secrets (a URL's password, a token) redacted, controls escaped."""
    from specadvisor.redact import redact_text

    return _one_line(redact_text(err.one_line()))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
