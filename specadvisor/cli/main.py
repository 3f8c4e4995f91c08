"""Entry point of the `specadvisor` command.

The parser is built from a registry of commands (name, one-line help, the module that implements
it). A command's module is imported only when that command runs: `specadvisor --help` and the TUI
import none, `specadvisor detect` imports only `cli.detect`. The module's `register(parser)` adds
the command's arguments and sets `func=<callable(args) -> int>`; it imports nothing heavy, and the
command function imports what it needs. The generated docs build the full parser (every module).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import NamedTuple, NoReturn

from specadvisor import __version__
from specadvisor.errors import InputError, SpecAdvisorError


class Command(NamedTuple):  # not a dataclass: `dataclasses` (and `inspect`) would cost --help a third of its imports
    name: str
    help: str
    module: str  # imported only when the command runs
    register: str = "register"  # the module's function that fills in the command's parser


COMMANDS = (
    Command("detect", "show GPUs, CPU and the vLLM version that will serve", "specadvisor.cli.detect"),
    Command("inspect", "read a model's (and a drafter's) config: size, MoE, MTP heads, published drafters", "specadvisor.cli.inspect_cmd"),
    Command("advise", "rank speculative methods for a model, GPU and workload, with reasons, evidence and ready commands", "specadvisor.cli.advise"),
    Command("rules", "check the rule base (shipped rules, your rules folder, DIR)", "specadvisor.cli.rules_cmd"),
    Command("sweep", "measure speculative configs on real vLLM servers and recommend one", "specadvisor.cli.sweep"),
    Command("report", "write a session's report (Markdown or self-contained HTML)", "specadvisor.cli.report", "register_report"),
    Command(
        "snippet",
        "print the recommended --speculative-config (exit 1 when the advice is not to speculate, 5 while undecided)",
        "specadvisor.cli.report",
        "register_snippet",
    ),
    Command("import-bench", "import `vllm bench serve --save-result` JSON files as arms of a session", "specadvisor.cli.report", "register_import_bench"),
    Command("export-plan", "export a session's arms as `vllm bench sweep serve` serve-params JSON", "specadvisor.cli.report", "register_export_plan"),
    Command("sessions", "list, show, delete, export, import or compare stored sessions", "specadvisor.cli.sessions"),
    Command("engine", "the vLLM engine: CPU engine setup, status, attach checks", "specadvisor.cli.engine"),
    Command("train", "train an EAGLE-3 drafter for a model with Speculators on your prompts, then sweep it", "specadvisor.cli.train"),
    Command("drafters", "list, show or judge the drafters trained here", "specadvisor.cli.train", "register_drafters"),
    Command("demo", "run a real sweep of SmolLM2 on the CPU build of vLLM, live in the TUI", "specadvisor.cli.demo"),
)


class _OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is the same one line (exit 2) as every other bad input."""

    def error(self, message: str) -> NoReturn:
        raise InputError(_one_line(message), hint=f"see `{self.prog} --help`")


def _one_line(text: str) -> str:
    from specadvisor.textsafe import line

    return line(" ".join(str(text).split()), 300)


def build_parser(load: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The whole parser, or (`load`) one with only the named commands' arguments: the others are
    listed with their help but their modules are not imported."""
    parser = _OneLineParser(
        prog="specadvisor",
        description="Choose, measure and export speculative-decoding settings for vLLM. Run without arguments to open the terminal UI.",
    )
    parser.add_argument("--version", action="version", version=f"specadvisor {__version__}")
    parser.add_argument("--db", type=Path, default=None, help="SQLite database to use (default: the user data dir; SPECADVISOR_HOME moves it)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_OneLineParser)
    for command in COMMANDS:
        sub = subparsers.add_parser(command.name, help=command.help)
        sub.set_defaults(func=show_help(sub))  # a group run without its action (`specadvisor sessions`)
        if load is None or command.name in load:
            getattr(importlib.import_module(command.module), command.register)(sub)
    return parser


def show_help(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """A command function printing `parser`'s help, exit 0: what `gh pr` and `docker container` do."""

    def run(_args: argparse.Namespace) -> int:
        parser.print_help()
        return 0

    return run


def command_named(argv: Sequence[str]) -> str | None:
    """The command in `argv` (the first word that is not a global option or its value)."""
    words = iter(argv)
    for word in words:
        if word == "--db":
            next(words, None)
        elif word == "--":
            return next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def _open_tui(args: argparse.Namespace) -> int:
    # imported here: Textual costs start-up time
    from specadvisor.tui.launch import run_tui

    return run_tui(db_path=args.db)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    from specadvisor.redact import remember_argv, remember_environment

    # Every secret this run was given, so that it is removed wherever it comes back (an endpoint's 401
    # body, vLLM's echo of its arguments), not only where a pattern recognises its shape.
    remember_environment()
    remember_argv(argv)
    try:
        command = command_named(argv)
        args = build_parser(load=[command] if command else []).parse_args(argv)
        if args.command is None:
            return _open_tui(args)
        return int(args.func(args) or 0)
    except BrokenPipeError:  # `specadvisor ... | head`: the reader left; say nothing, like other tools
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
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
