"""`specadvisor sweep --trials/--parallel/--drift-threshold/--ci-target` with fakes at the process boundary."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sweep"))
from specadvisor.cli.main import main
from specadvisor.sweep import runner as runner_module
from sweep_fakes import FakeMeasure, FakeServer


@pytest.fixture
def fake_engine(monkeypatch):
    measure = FakeMeasure(lambda arm: {None: 100.0, 2: 150.0, 4: 140.0}[arm.n])
    placed = []

    def factory(env=None):
        def make(arm, session, placement=None):
            placed.append(placement)
            return FakeServer(arm)

        return make

    monkeypatch.setattr(runner_module, "VllmServerFactory", factory)
    monkeypatch.setattr(runner_module, "_default_measure", measure)
    monkeypatch.setattr(runner_module, "_default_prompt_loader", lambda session: None)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.setattr("specadvisor.hardware.detect_gpus", lambda **probe_options: ([], []))
    measure.placed = placed
    return measure


def sweep(db, capsys, *extra):
    code = main(["--db", str(db), "sweep", "--model", "m", "--method", "ngram", "--n", "2,4", "--num-prompts", "4", "--json", *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_trials_are_interleaved_and_drift_is_in_the_json(tmp_path, capsys, fake_engine):
    code, out, _ = sweep(tmp_path / "s.db", capsys, "--trials", "2")
    assert code == 0
    data = json.loads(out)
    assert fake_engine.calls == ["baseline", "ngram-n2", "ngram-n4"] * 2 + ["baseline"]
    assert data["order"] == [
        "baseline:trial1@w1",
        "ngram-n2:trial1@w2",
        "ngram-n4:trial1@w3",
        "baseline:trial2@w4",
        "ngram-n2:trial2@w5",
        "ngram-n4:trial2@w6",
        "baseline:bracket@w7",
    ]
    assert data["drift"]["change"] == 0 and data["drift"]["measurements"] == 3 and data["drift"]["threshold"] == 0.05
    assert data["launches_used"] == 7 == data["launches_full_grid"]
    assert data["recommendation"]["drift"]["measurements"] == 3


def test_parallel_two_on_a_cpu_host_pins_core_ranges(tmp_path, capsys, fake_engine):
    code, out, _ = sweep(tmp_path / "s.db", capsys, "--parallel", "2", "--drift-threshold", "10")
    assert code == 0
    data = json.loads(out)
    slots = [p.slot for p in fake_engine.placed]
    assert {s.label for s in slots} == {"cores 0-1", "cores 2-3"}
    assert {s.server_env()["VLLM_CPU_OMP_THREADS_BIND"] for s in slots} == {"0-1", "2-3"}
    assert data["settings"]["parallel"] == 2 and data["settings"]["drift_threshold"] == 0.1
    placements = {r["placement"] for a in data["arms"] for r in a["runs"]}
    assert placements == {"cores 0-1", "cores 2-3"}
    assert data["recommendation"]["arm_id"] == "ngram-n2"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--parallel", "lots"], "--parallel 'lots' is neither 'auto' nor a whole number"),
        (["--parallel", "9"], "--parallel 9 needs 9 CPU cores, this host offers 4"),
        (["--drift-threshold", "-1"], "--drift-threshold must be a finite number from 0 to"),
        (["--ci-target", "-3"], "--ci-target must be a finite number from 0 to"),
    ],
)
def test_bad_scheduling_input_is_one_line_and_writes_nothing(tmp_path, capsys, fake_engine, flags, message):
    db = tmp_path / "s.db"
    code, out, err = sweep(db, capsys, *flags)
    assert code == 2 and out == ""
    assert err.startswith("specadvisor: error: ") and message in err and err.count("\n") == 1
    assert fake_engine.calls == []


def test_adaptive_turns_on_the_three_percent_interval_target(tmp_path, capsys, fake_engine):
    from specadvisor.store import Store

    db = tmp_path / "s.db"
    code, out, _ = sweep(db, capsys, "--adaptive", "--no-bracket")
    assert code == 0
    session = Store.open(db).get_session(json.loads(out)["session_id"])
    assert session.settings.ci_target == 0.03 and session.settings.bracket is False


def test_the_live_view_prints_drift_order_and_runs(tmp_path, capsys, fake_engine):
    code = main(["--db", str(tmp_path / "s.db"), "sweep", "--model", "m", "--method", "ngram", "--n", "2", "--num-prompts", "4", "--trials", "2"])
    out = " ".join(capsys.readouterr().out.split())  # the console wraps at its width
    assert code == 0
    assert "baseline drift: +0.0% (100.0 -> 100.0 tok/s over 3 measurements; threshold 5%)" in out
    assert "run order (arm:role@wave): baseline:trial1@w1 ngram-n2:trial1@w2 baseline:trial2@w3 ngram-n2:trial2@w4 baseline:bracket@w5" in out
    assert "runs 150.0, 150.0 tok/s" in out
