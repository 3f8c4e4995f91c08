"""Tail requests (analysis.tails): found per arm against its run's median and the baseline's time on
the same prompt, classified where the prompts were served again, and named in the verdict when the
gain it rests on is lost to them (issue 38). On the real H200 bundles, and on sessions built here."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from specadvisor.analysis.recommend import recommend
from specadvisor.analysis.tails import TAIL_FACTOR, arm_tail, session_tails, verdict_line
from specadvisor.domain import RequestRecord, RunRecord, SweepSettings
from specadvisor.store.bundle import read_bundle
from specadvisor.sweep.plan import plan_from_methods

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sweep"))  # the shared fakes
from sweep_fakes import spec_result

FIXTURES = Path(__file__).parents[1] / "fixtures" / "h200"


def stripped(name: str):
    session = read_bundle(FIXTURES / name)
    session.recommendation = None
    return session


def test_the_h200_rename_tail_is_found_shown_and_named_in_the_verdict():
    """`--budget 8 --time-limit 8.5` on the H200: n-gram read 1.24x while most prompts ran 1.86x faster."""
    session = stripped("live-1203-rename-c1-budget8-limit8.5.bundle.json")
    tails = session_tails(session)
    assert not tails["baseline"].tail  # the baseline's slowest request, 840 ms, is within 2x of its median
    ngram = tails["ngram-n4"]
    assert [round(t.latency_ms) for t in sorted(ngram.tail, key=lambda t: -t.latency_ms)] == [2505, 1843, 1328, 979, 779]
    assert {t.index for t in ngram.tail} == {0, 6, 10, 22, 31} and all(t.ttft_ms < 50 for t in ngram.tail)  # decoding, not the prompt
    assert ngram.kind == "served once" and "cannot be told from the prompt's own" in ngram.text()
    assert 0.30 < ngram.tail_ms / ngram.total_ms < 0.34
    rec = recommend(session)
    assert rec.decision == "undecided"
    lost = next(r for r in rec.reasons if r.startswith("the gain is lost to a few requests"))
    assert rec.reasons.index(lost) == 1 and "it would read 1.83x, not 1.24x" in lost  # right after the comparison


def test_the_same_prompts_are_slow_in_every_launch_so_they_are_the_workloads():
    ngram = session_tails(stripped("live-rename-c1-t6.bundle.json"))["ngram-n4"]
    assert ngram.kind == "recurring"
    assert {i for i, slow in ngram.slow_runs.items() if slow == ngram.served_runs[i] == 6} == {6, 10, 22}
    assert "prompt(s) #6, #10, #22 slow every time they were served, #0, #31 some of the times" in ngram.text()


def test_under_load_there_is_no_what_if():
    session = stripped("live-1202-humaneval-c8.bundle.json")
    for arm in session.arms:
        tail = arm_tail(session, arm)
        assert verdict_line(0.5, arm.id, tail, arm.concurrency) is None  # at c=8 requests overlap: no arithmetic what-if


def two_runs(ngram_passes: list[dict[int, float]], base: dict[int, float] | None = None):
    """Baseline and ngram N=4 at c=1 over 10 prompts; each ngram pass maps prompt -> latency (default 300 ms)."""
    plan = plan_from_methods("m", [("ngram", {})], [4], SweepSettings(num_prompts=10))
    session = plan.session
    base = base or {}
    baseline = spec_result("baseline", None, 100.0)
    baseline.runs = [RunRecord(output_throughput=100.0, completed=10, requests=[RequestRecord(index=i, latency_ms=base.get(i, 600.0)) for i in range(10)])]
    ngram = spec_result("ngram-n4", 4, 150.0)
    ngram.runs = [
        RunRecord(output_throughput=150.0, completed=10, repeat=k + 1, requests=[RequestRecord(index=i, latency_ms=slow.get(i, 300.0)) for i in range(10)])
        for k, slow in enumerate(ngram_passes)
    ]
    session.results = [baseline, ngram]
    return session


def test_a_tail_that_does_not_come_back_is_a_start_up_effect_the_warm_up_covers():
    tail = session_tails(two_runs([{3: 1500.0}, {}]))["ngram-n4"]
    assert [t.index for t in tail.tail] == [3] and tail.tail[0].recurs is False
    assert tail.kind == "start-up" and "`--warmup` at least the prompt count" in tail.text()


def test_a_request_the_baseline_is_as_slow_on_is_not_a_tail():
    """A long prompt is slow for every arm: slower than the arm's median but not than not speculating."""
    tail = session_tails(two_runs([{3: 1500.0}], base={3: 2000.0}))["ngram-n4"]
    assert not tail.tail
    assert session_tails(two_runs([{3: 1500.0}], base={3: 1000.0}))["ngram-n4"].tail  # slower than the baseline: a tail


@pytest.mark.parametrize(("latency", "tail"), [(300.0 * TAIL_FACTOR, False), (300.0 * TAIL_FACTOR + 1, True)])
def test_the_threshold_is_strictly_over_twice_the_median(latency, tail):
    assert bool(session_tails(two_runs([{3: latency}], base={3: 100.0}))["ngram-n4"].tail) is tail


def test_every_view_shows_the_tail_per_arm(tmp_path, capsys):
    import json

    from specadvisor.cli.main import main

    db = tmp_path / "s.db"
    assert main(["--db", str(db), "sessions", "import", str(FIXTURES / "live-1203-rename-c1-budget8-limit8.5.bundle.json")]) == 0
    capsys.readouterr()
    sid = read_bundle(FIXTURES / "live-1203-rename-c1-budget8-limit8.5.bundle.json").id[:8]
    assert main(["--db", str(db), "sessions", "show", sid]) == 0
    shown = capsys.readouterr().out
    assert "tail requests, n-gram N=4" in shown and "5 of 32 requests over 2x the median 359 ms: 2.51 s" in shown.replace("\n", " ")
    assert main(["--db", str(db), "sessions", "show", sid, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tail_requests"]["ngram-n4"].startswith("5 of 32 requests")
    assert main(["--db", str(db), "report", sid, "--format", "md"]) == 0
    report = capsys.readouterr().out
    assert "## Tail requests" in report and "2.51 s" in report.split("## Tail requests")[1]
