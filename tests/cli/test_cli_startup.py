"""Start-up stays cheap by construction: a command's module is imported only when it runs, and
building the parser imports no heavy library. Asserted on the set of imported modules (timings
belong to benchmarks/startup.py), each case in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from specadvisor.cli.advise import WORKLOADS
from specadvisor.cli.main import COMMANDS, build_parser, command_named
from specadvisor.domain import WorkloadKind

CHILD = """
import json, sys
from specadvisor.cli.main import main
try:
    code = main(sys.argv[1:])
except SystemExit as done:  # --help, --version
    code = done.code
print("\\nMODULES " + json.dumps(sorted(sys.modules)))
"""

HEAVY = {
    "numpy",
    "sqlite_utils",
    "textual",
    "httpx",
    "pydantic",
    "rich",
    "specadvisor.domain",
    "specadvisor.sweep",
    "specadvisor.analysis",
    "specadvisor.store.store",
}
COMMAND_MODULES = {c.module for c in COMMANDS}


def imported(tmp_path, *argv: str) -> set[str]:
    env = {"SPECADVISOR_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", CHILD, *argv], capture_output=True, text=True, env=env, timeout=120)
    line = next(ln for ln in done.stdout.splitlines() if ln.startswith("MODULES "))
    return set(json.loads(line.removeprefix("MODULES ")))


@pytest.mark.parametrize(
    "argv, loaded",
    [
        (["--help"], set()),
        (["--version"], set()),
        (["sweep", "--help"], {"specadvisor.cli.sweep"}),
        (["sessions", "--help"], {"specadvisor.cli.sessions"}),
        (["advise", "--help"], {"specadvisor.cli.advise"}),
        (["detect", "--help"], {"specadvisor.cli.detect"}),
    ],
)
def test_help_imports_no_heavy_library_and_only_its_command(tmp_path, argv, loaded):
    modules = imported(tmp_path, *argv)
    assert not HEAVY & modules, sorted(HEAVY & modules)
    assert COMMAND_MODULES & modules == loaded


def test_sessions_list_on_an_empty_database_imports_no_store(tmp_path):
    from specadvisor.store import Store

    Store.open(tmp_path / "empty.db").close()
    for db in (tmp_path / "empty.db", tmp_path / "absent.db"):
        modules = imported(tmp_path, "--db", str(db), "sessions", "list")
        assert not HEAVY & modules, sorted(HEAVY & modules)
    assert not (tmp_path / "absent.db").exists()


def test_detect_imports_neither_the_store_nor_the_ui(tmp_path):
    modules = imported(tmp_path, "detect")
    assert not {"numpy", "sqlite_utils", "textual", "httpx", "specadvisor.sweep", "specadvisor.analysis", "specadvisor.store.store"} & modules
    assert COMMAND_MODULES & modules == {"specadvisor.cli.detect"}


def test_the_full_parser_has_every_registered_command():
    parser = build_parser()
    choices = next(a for a in parser._actions if a.dest == "command").choices
    assert list(choices) == [c.name for c in COMMANDS]
    for name, sub in choices.items():
        assert sub._defaults.get("func") is not None, name


def test_the_command_is_found_after_global_options():
    assert command_named(["--db", "x.db", "sessions", "list"]) == "sessions"
    assert command_named(["--db=x.db", "detect"]) == "detect"
    assert command_named(["--db", "detect", "advise"]) == "advise"  # a --db value is not a command
    assert command_named(["--version"]) is None and command_named([]) is None


def test_the_workload_choices_are_the_domain_s():
    assert list(WORKLOADS) == [k.value for k in WorkloadKind]
