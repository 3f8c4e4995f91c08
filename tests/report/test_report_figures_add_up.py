"""Figures in the reports that count or place things say what happened (issue 22 item 7): server
launches, not runs; no launches for an endpoint; versions render as text; an imported session is
not "measured on this machine"."""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))
from specadvisor.domain import Arm, ArmResult, Provenance, RunRecord, Session
from specadvisor.provenance import provenance_facts
from specadvisor.report import markdown
from specadvisor.report.content import schedule_facts, server_launches
from specadvisor.store.compare import compare_sessions
from store_samples import T0, make_session


def two_levels_two_trials_and_a_bracket(**overrides) -> Session:
    """The H200 HumanEval sweep's shape: baseline and ngram N=4 at c=1 and c=8, two interleaved
    trials and the baseline's bracket: 5 launches, 10 runs (each launch measures both levels)."""
    spec = {"method": "ngram", "num_speculative_tokens": 4}
    arms = [Arm(id=f"baseline-c{c}", label=f"baseline c{c}", concurrency=c) for c in (1, 8)]
    arms += [Arm(id=f"ngram-n4-c{c}", label=f"ngram N=4 c{c}", method="ngram", n=4, speculative_config=spec, concurrency=c) for c in (1, 8)]
    launches = {"baseline": [(1, "trial", 1), (2, "trial", 3), (2, "bracket", 5)], "ngram": [(1, "trial", 2), (2, "trial", 4)]}
    results = []
    for arm in arms:
        family = "baseline" if arm.is_baseline else "ngram"
        runs = [RunRecord(trial=t, role=role, wave=w, started_at=T0 + timedelta(minutes=w), output_throughput=100.0) for t, role, w in launches[family]]
        results.append(ArmResult(arm_id=arm.id, output_throughput=100.0, completed=64, runs=runs))
    session = make_session(**overrides)
    return session.model_copy(update={"arms": arms, "results": results, "recommendation": None, "samples": []})


def test_a_launch_that_measures_two_concurrency_levels_counts_once():
    session = two_levels_two_trials_and_a_bracket()
    assert server_launches(session) == 5
    runs = dict(schedule_facts(session, None))["runs"]
    assert runs.startswith("5 server launch(es) in 5 wave(s) (10 runs:"), runs


def test_an_endpoint_session_launched_nothing():
    session = two_levels_two_trials_and_a_bracket()
    session.settings = session.settings.replace(endpoint="http://127.0.0.1:8000/v1", engine_cmd=[])
    runs = dict(schedule_facts(session, None))["runs"]
    assert "launch" not in runs.replace("no server launched", "") and runs.startswith("10 measurement run(s) against the endpoint"), runs


def test_the_markdown_report_shows_a_version_as_text():
    from markdown_it import MarkdownIt

    session = make_session()
    session.vllm_version = "0.26.0"
    text = markdown(session)
    assert "\\0.26.0" not in text and "- **vLLM**: 0.26.0\n" in text
    assert "<strong>vLLM</strong>: 0.26.0</li>" in MarkdownIt("commonmark").render(text)


def test_an_imported_session_says_where_it_was_measured_not_this_machine():
    local = make_session(provenance=Provenance(entry_point="sweep", measured_on="this machine"))
    assert dict(provenance_facts(local))["measured on"] == "this machine"
    imported = make_session(provenance=Provenance(entry_point="sweep", measured_on="this machine", origin="imported", imported_from="h200.json"))
    where = dict(provenance_facts(imported))["measured on"]
    assert where == "another machine (imported; 1x NVIDIA H200)"
    assert "measured on**: this machine" not in markdown(imported) and "another machine (imported; 1x NVIDIA H200)" in markdown(imported)
    comparison = compare_sessions([local, imported])
    assert [c.measured_on for c in comparison.sessions] == ["this machine", "another machine (imported; 1x NVIDIA H200)"]
    remote = make_session(provenance=Provenance(measured_on="remote endpoint", origin="imported"))
    assert dict(provenance_facts(remote))["measured on"] == "a remote endpoint (imported)"
    from specadvisor.domain import HardwareProfile

    bare = make_session(hardware=HardwareProfile(), provenance=Provenance(measured_on="this machine", origin="imported"))
    assert dict(provenance_facts(bare))["measured on"] == "another machine (imported)"


def test_a_mean_power_merged_the_old_way_is_re_derived_from_its_readings():
    """Bundles exported before the merge fix carry a mean below every reading (34 W beside 121-153 W on
    the H200): the report re-derives it from the readings; a plausible stored mean is shown as stored."""
    from specadvisor.domain import GpuReading, GpuTelemetry
    from specadvisor.report.content import _gpu_row

    runs = [(0, 140.0), (300, 150.0), (600, 130.0)]  # three 20 s runs, minutes apart
    samples = [GpuReading(t=start + i, gpu=0, power_w=power) for start, power in runs for i in range(21)]
    energy = sum(20 * power for _, power in runs)
    old = GpuTelemetry(gpus=[0], samples=samples, energy_j=energy, mean_power_w=round(energy / 620, 2))  # the pauses counted
    assert old.mean_power_w < 130 and _gpu_row("baseline", old)[2] == "140"  # 8400 J over 60 sampled seconds
    fresh = old.model_copy(update={"mean_power_w": 139.0})
    assert _gpu_row("baseline", fresh)[2] == "139"
