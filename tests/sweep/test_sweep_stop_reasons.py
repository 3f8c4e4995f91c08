"""Why a sweep stopped measuring is recorded and said (issue 38). On the H200, `--budget 8 --time-limit
8.5` stopped after its first look, undecided, with 1.0 of its 8 minutes measured: the next step did
not fit what the time limit left, and the runner said so only in a warning that --json, sessions show,
the report and the bundle dropped. The real runner and store, fakes only at the process boundary."""

from __future__ import annotations

import asyncio
import json

from test_sweep_sequential import Launches, sweep

from specadvisor.analysis.rejudge import rejudge
from specadvisor.cli.main import main
from specadvisor.sweep import runner as runner_module
from specadvisor.sweep.plan import plan_from_methods
from specadvisor.sweep.runner import SweepRunner
from sweep_fakes import FakeServer, no_prompts


async def test_a_step_the_time_limit_cannot_pay_for_is_said_in_the_verdict_and_kept(store):
    """The issue's case: a budget far from spent, a time limit too close for one more round (a round
    costs 2 x 11.5 s here; the limit leaves under 10 s)."""
    session, _ = await sweep(store, Launches(1.15), budget_s=480, time_limit_s=10)
    rec, stop = session.recommendation, session.provenance.stopped
    assert rec.decision == "undecided" and stop.code == "step exceeds time left" and stop.looks == 1
    assert stop.step_s > stop.time_left_s and stop.spent_s == 0.0 and stop.budget_s == 480
    assert rec.verdict.startswith("undecided after 3 launches over 2 arm(s)")
    assert "; stopped at look 1: the next step needs about 1.1 min, more than the 0.2 min the 10 s time limit leaves, so it was not started" in rec.verdict
    assert rec.verdict.endswith("(0.0 min of the 8 min budget spent)")
    assert rejudge(session).verdict == rec.verdict  # recomputed anywhere (an import too), the same words


async def test_a_budget_too_small_for_the_next_step_says_so(store):
    session, _ = await sweep(store, Launches(1.15), budget_s=20)  # one round costs 23 s serially
    stop = session.provenance.stopped
    assert stop.code == "budget too small" and stop.step_s == 23.0
    assert "more than the 0.3 min left of the 20 s budget (0.0 min spent)" in session.recommendation.verdict


async def test_a_fixed_design_says_it_measured_its_plan(store):
    undecided, _ = await sweep(store, Launches(1.15))
    assert undecided.provenance.stopped.code == "planned runs measured"
    assert undecided.recommendation.verdict.endswith("; stopped after the planned runs: no --budget was given to measure the step that would decide it")
    decided, _ = await sweep(store, Launches(1.6))
    assert decided.recommendation.verdict == "speculate: ngram N=2"  # nothing was cut short: the verdict is the whole answer
    assert decided.recommendation.reasons[-1] == "why measuring stopped: decided on the planned runs"


async def test_a_cancelled_sweep_records_it(store):
    plan = plan_from_methods("m", [("ngram", {})], [2], plan_settings())
    started = asyncio.Event()

    async def hang(*, arm, settings, **kw):
        started.set()
        await asyncio.sleep(3600)
        yield  # pragma: no cover - never reached

    runner = SweepRunner(plan, store, server_factory=lambda arm, s: FakeServer(arm), measure=hang, prompt_loader=no_prompts)

    async def consume():
        return [e async for e in runner.events()]

    task = asyncio.create_task(consume())
    await started.wait()
    runner.cancel()
    await asyncio.gather(task, return_exceptions=True)
    stored = store.get_session(plan.session.id)
    assert stored.status == "interrupted" and stored.provenance.stopped.code == "cancelled"


def plan_settings():
    from specadvisor.domain import SweepSettings

    return SweepSettings(num_prompts=8)


def test_every_view_says_why_it_stopped(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(runner_module, "VllmServerFactory", lambda env=None: lambda arm, session: FakeServer(arm))
    monkeypatch.setattr(runner_module, "_default_measure", Launches(1.15))
    monkeypatch.setattr(runner_module, "_default_prompt_loader", no_prompts)
    db = tmp_path / "s.db"
    argv = ["--db", str(db), "sweep", "--model", "m", "--method", "ngram", "--n", "2", "--num-prompts", "8", "--budget", "8", "--time-limit", "0.17", "--json"]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    said = "the next step needs about 1.1 min, more than the"
    assert data["stopped"]["code"] == "step exceeds time left" and said in data["stopped"]["text"]
    assert said in data["recommendation"]["verdict"]
    sid = data["session_id"][:8]
    assert main(["--db", str(db), "sessions", "show", sid]) == 0
    shown = capsys.readouterr().out
    assert "stopped: stopped at look 1: the next step needs about 1.1 min" in shown and shown.count(said) >= 2  # the fact and the verdict
    assert main(["--db", str(db), "sessions", "show", sid, "--json"]) == 0
    assert said in json.loads(capsys.readouterr().out)["stopped"]
    assert main(["--db", str(db), "report", sid, "--format", "md"]) == 0
    assert capsys.readouterr().out.count(said) >= 2
    bundle = tmp_path / "b.json"
    assert main(["--db", str(db), "sessions", "export", sid, "-o", str(bundle)]) == 0
    assert json.loads(bundle.read_text())["session"]["provenance"]["stopped"]["code"] == "step exceeds time left"
    other = tmp_path / "other.db"
    assert main(["--db", str(other), "sessions", "import", str(bundle)]) == 0
    capsys.readouterr()
    assert main(["--db", str(other), "sessions", "show", sid, "--recompute", "--json"]) == 0
    assert said in json.loads(capsys.readouterr().out)["recommendation"]["verdict"]  # an imported session re-judged says it too


async def test_a_resumed_sequential_sweep_continues_its_looks(store):
    """The step an undecided verdict names is measured by `sweep --resume ID --budget MIN`; the looks
    its first run took have spent their share of the error, so the resumed run continues the plan
    (the look it stopped at is taken again on the same data) instead of starting it over."""
    session, _ = await sweep(store, Launches(1.02), budget_s=30)  # a round costs 23 s: look 1, one round, then look 2 stops
    assert session.provenance.stopped.code == "budget too small" and session.settings.looks == 2
    session.settings = session.settings.replace(budget_s=600.0)  # what --resume --budget does
    runner = SweepRunner(session, store, server_factory=lambda arm, s: FakeServer(arm), measure=Launches(1.02), prompt_loader=no_prompts)
    events = [e async for e in runner.events()]
    looks = [e.message.split(",")[0] for e in events if getattr(e, "message", "").startswith("look ")]
    assert looks == ["look 2"], looks  # the stopped look again, then look 3 is the plan's last
    stored = store.get_session(session.id)
    assert stored.settings.looks == 3 and stored.provenance.stopped.looks == 3  # at most the plan's 3 looks over both runs
