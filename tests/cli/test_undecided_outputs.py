"""Undecided is not "do not speculate" (issue 38): the report printed "Serve it with:" and the plain
no-speculation command for an undecided session, and `snippet` printed that command with exit 1, the
same as a verdict against speculation. Now both name the step that would decide it and the command
that measures it; `snippet` exits 5. Through main() on a real SQLite file, fakes at the process boundary."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sweep"))
from test_sweep_sequential import Launches

from specadvisor.cli.main import main
from specadvisor.sweep import runner as runner_module
from sweep_fakes import FakeServer, no_prompts


@pytest.fixture
def engine(monkeypatch):
    def use(speedup: float) -> Launches:
        measure = Launches(speedup)
        monkeypatch.setattr(runner_module, "_default_measure", measure)
        return measure

    monkeypatch.setattr(runner_module, "VllmServerFactory", lambda env=None: lambda arm, session: FakeServer(arm))
    monkeypatch.setattr(runner_module, "_default_prompt_loader", no_prompts)
    return use


def sweep(db, capsys, *extra) -> dict:
    argv = ["--db", str(db), "sweep", "--model", "m", "--method", "ngram", "--n", "2", "--num-prompts", "8", "--json", *extra]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_snippet_and_report_of_an_undecided_session_name_the_step_not_a_serve_command(tmp_path, capsys, engine):
    engine(1.15)  # a 15% gain on a machine spreading 1-5%: one launch each does not decide it
    db = tmp_path / "s.db"
    data = sweep(db, capsys)
    assert data["recommendation"]["decision"] == "undecided"
    sid = data["session_id"][:8]
    for flags in ([], ["--command"]):
        assert main(["--db", str(db), "snippet", sid, *flags]) == 5
        out, err = capsys.readouterr()
        assert out == ""  # nothing to paste into a server
        assert err.startswith("specadvisor: undecided, nothing to serve yet: undecided after 3 launches")
        assert f"to decide it: specadvisor sweep --resume {sid} --budget " in err and "vllm serve" not in err
    assert main(["--db", str(db), "sessions", "show", sid]) == 0
    shown = capsys.readouterr().out
    assert f"to decide it: specadvisor sweep --resume {sid} --budget" in shown and "serve with:" not in shown
    assert main(["--db", str(db), "report", sid, "--format", "md"]) == 0
    report = capsys.readouterr().out
    assert "Serve it with:" not in report and "vllm serve m" not in report.split("## Results")[0]
    assert "Undecided: nothing to serve yet (this is not an answer against speculation)" in report
    assert f"specadvisor sweep --resume {sid} --budget" in report


def test_the_printed_step_measures_and_decides_when_resumed(tmp_path, capsys, engine):
    engine(1.15)
    db = tmp_path / "s.db"
    sid = sweep(db, capsys)["session_id"][:8]
    assert main(["--db", str(db), "snippet", sid]) == 5
    command = capsys.readouterr().err.split("to decide it: ", 1)[1].split(" (", 1)[0]
    argv = shlex.split(command)
    assert argv[:4] == ["specadvisor", "sweep", "--resume", sid] and argv[4] == "--budget"
    measure = engine(1.15)
    assert main(["--db", str(db), *argv[1:], "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(measure.calls) >= 2  # the step's launches, on the stored session
    assert data["settings"]["budget_s"] == int(argv[5]) * 60 and data["stopped"]["code"] == "decided"
    assert data["recommendation"]["decision"] == "speculate"
    assert main(["--db", str(db), "snippet", sid]) == 0
    assert json.loads(capsys.readouterr().out)["method"] == "ngram"


def test_do_not_speculate_still_prints_the_plain_command_with_exit_1(tmp_path, capsys, engine):
    engine(0.6)
    db = tmp_path / "s.db"
    sid = sweep(db, capsys)["session_id"][:8]
    assert main(["--db", str(db), "snippet", sid, "--command"]) == 1
    out, err = capsys.readouterr()
    assert out.startswith("vllm serve m") and err.startswith("do not speculate")
    assert main(["--db", str(db), "report", sid, "--format", "md"]) == 0
    assert "Serve it with:" in capsys.readouterr().out


@pytest.mark.parametrize("speedup, decision", [(0.7, "do not speculate"), (1.15, "undecided")])
def test_sessions_show_states_each_level_s_verdict_once(tmp_path, capsys, engine, speedup, decision):
    """Issue 41: "Verdict: do not speculate" over "- do not speculate here: ...", and with two levels each
    level's verdict three times (the headline, an 'at concurrency' line, the first reason)."""
    engine(speedup)
    db = tmp_path / "s.db"
    data = sweep(db, capsys, "--concurrency", "1,8")
    assert data["recommendation"]["decision"] == decision
    assert main(["--db", str(db), "sessions", "show", data["session_id"][:8]]) == 0
    shown = capsys.readouterr().out
    verdict = shown[shown.index("Verdict: ") :]
    assert "do not speculate here" not in verdict and "undecided: " not in verdict
    # the level's three reasons; its answer only in the headline (which names each level where they are undecided)
    assert verdict.count("at concurrency 8: ") == 3 + (decision == "undecided")
    if decision == "undecided":
        assert verdict.count("undecided after 3 launches") == 2  # one per level
    else:
        assert verdict.startswith("Verdict: do not speculate (at concurrency 1 and 8)") and verdict.count("do not speculate") == 1


@pytest.mark.parametrize("planned_for", [None, "H100x8"])
def test_a_plan_that_never_ran_says_run_it_not_serve_it(tmp_path, capsys, planned_for):
    """Issue 41: the report of a plan never run offered a serve command ("Serve it with"), later "no step
    within reach would decide it"; it names the command that runs the plan (there, for a planned GPU)."""
    from specadvisor.domain import SweepSettings
    from specadvisor.hardware import hypothetical
    from specadvisor.store import Store
    from specadvisor.sweep.plan import plan_from_methods

    session = plan_from_methods("org/target", [("ngram", {})], [2, 4], SweepSettings()).session
    if planned_for:
        session.hardware = hypothetical(planned_for)
    db = tmp_path / "s.db"
    with Store.open(db) as store:
        store.save_session(session)
    sid = session.id[:8]
    assert main(["--db", str(db), "report", sid, "--format", "md"]) == 0
    report = capsys.readouterr().out
    recommendation = report.split("## Recommendation")[1].split("## Results")[0]
    assert "Serve it with" not in report and "vllm serve" not in recommendation and "no step within reach" not in report
    assert "What would decide it: running this plan (it has not run yet)." in report
    expected = f"specadvisor sessions export {sid} -o specadvisor-plan-{sid}.json" if planned_for else f"specadvisor sweep --resume {sid}"
    assert f"```sh\n{expected}\n```" in report
    assert main(["--db", str(db), "snippet", sid]) == 5
    assert f"to decide it: {expected} (" in capsys.readouterr().err
