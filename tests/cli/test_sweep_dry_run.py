"""`sweep --dry-run` (issue 41): what would run, printed as `vllm bench sweep serve --dry-run` prints its
commands, and nothing else: no server launched, no engine probed, no database opened or created."""

from __future__ import annotations

import json
import shlex
import subprocess

import pytest

from specadvisor.cli.main import main


@pytest.fixture
def engine(tmp_path):
    """An engine command that leaves a mark if anything runs it (a launch or a version probe)."""
    marker = tmp_path / "ran"
    script = tmp_path / "fake vllm"
    script.write_text(f"#!/bin/sh\ntouch {shlex.quote(str(marker))}\n")
    script.chmod(0o755)
    return script, marker


def test_a_dry_run_prints_every_launch_and_runs_and_stores_nothing(tmp_path, capsys, engine):
    script, marker = engine
    db = tmp_path / "s.db"
    argv = ["--db", str(db), "sweep", "--model", "Qwen/Qwen3-8B", "--method", "ngram", "--n", "2,4", "--concurrency", "1,8"]
    argv += ["--engine-cmd", f"{shlex.quote(str(script))} serve", "--server-arg=--max-model-len=4096", "--time-limit", "30", "--dry-run"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("dry run: nothing is launched, probed or stored\nplan: 6 arms on 4 server launches, about ")
    assert "workload: code, prompts humaneval x32, 256 output tokens, sent as chat" in out and "stopped after 30 min" in out
    assert "[1/6] baseline (no speculation) at concurrency 1" in out and "[6/6] n-gram N=4 · c8 at concurrency 8" in out
    commands = [block.split("\n", 1)[1].strip() for block in out.split("\n\n")[1:]]
    assert len(commands) == 6
    for command in commands:
        subprocess.run(["bash", "-n", "-c", command], check=True)  # each pastes as one valid command
        words = shlex.split(command.replace("\\\n", " "))
        assert words[:2] == [str(script), "serve"] and "--max-model-len=4096" in words
    assert '\'{"method":"ngram","num_speculative_tokens":4}\'' in commands[-1]
    assert not db.exists() and not marker.exists()


def test_a_dry_run_as_json_holds_each_arms_command(tmp_path, capsys):
    db = tmp_path / "s.db"
    assert main(["--db", str(db), "sweep", "--model", "m", "--method", "suffix", "--n", "8", "--dry-run", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["dry_run"] is True and doc["launches"] == 3 and [a["id"] for a in doc["arms"]] == ["baseline", "suffix-n8"]
    assert doc["arms"][1]["command"][:3] == ["vllm", "serve", "m"] and "--speculative-config" in doc["arms"][1]["command"]
    assert not db.exists()


def test_a_dry_run_of_an_endpoint_contacts_no_server(tmp_path, capsys):
    db = tmp_path / "s.db"
    assert main(["--db", str(db), "sweep", "--endpoint", "http://192.0.2.1:8000/v1", "--concurrency", "1,4", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "plan: 2 arms on no launch (a running server)" in out and out.count("measures the running server: nothing is launched") == 2
    assert not db.exists()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--resume", "abcd", "--dry-run"], "--dry-run shows a new sweep's plan"),
        (["--model", "m", "--method", "ngram", "--n", "0", "--dry-run"], "--n values must be from 1 to 64"),
    ],
)
def test_a_dry_run_checks_its_input_like_a_sweep(tmp_path, capsys, argv, message):
    db = tmp_path / "s.db"
    assert main(["--db", str(db), "sweep", *argv]) == 2
    assert message in capsys.readouterr().err and not db.exists()
