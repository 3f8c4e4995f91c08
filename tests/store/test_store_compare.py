"""compare_sessions and best_arm: the figures `sessions compare` and the TUI show."""

from __future__ import annotations

import uuid

import pytest

from specadvisor.domain import ArmStatus, Recommendation, WorkloadKind
from specadvisor.figures import arm_speedup
from specadvisor.store.compare import compare_sessions
from specadvisor.store.summary import best_arm
from store_samples import h200_hardware, make_session


def test_best_arm_follows_the_recommendation():
    session = make_session()
    arm, speedup = best_arm(session)
    assert arm.id == "ngram-n4-c1" and speedup == pytest.approx(1.725)


def test_best_arm_without_recommendation_is_the_fastest_measured():
    session = make_session(recommendation=None)
    arm, speedup = best_arm(session)
    assert arm.id == "ngram-n4-c1" and speedup == pytest.approx(1.725)


def test_do_not_speculate_resolves_to_the_baseline():
    session = make_session(recommendation=Recommendation(arm_id=None, do_not_speculate=True))
    arm, speedup = best_arm(session)
    assert arm.is_baseline and speedup == 1.0


def test_failed_arms_have_no_speedup():
    session = make_session(recommendation=None)
    results = [r.model_copy(update={"status": ArmStatus.failed}) if r.arm_id == "ngram-n4-c1" else r for r in session.results]
    session = session.model_copy(update={"results": results})
    assert arm_speedup(session, session.arms[2]) is None
    assert best_arm(session)[0].id == "ngram-n2-c1"


def test_compare_lines_up_arms_and_flags_differences():
    a = make_session()
    b = make_session(
        id=str(uuid.uuid4()),
        hardware=h200_hardware(count=2),
        vllm_version="0.31.0",
        workload=WorkloadKind.chat,
        arms=make_session().arms[:2],
        results=make_session().results[:2],
        recommendation=None,
    )
    comparison = compare_sessions([a, b])
    assert [c.best_arm for c in comparison.sessions] == ["ngram N=4 c1", "ngram N=2 c1"]
    assert [c.best_throughput for c in comparison.sessions] == [172.5, 151.25]
    rows = {r.arm_id: r for r in comparison.arms}
    assert list(rows) == ["baseline-c1", "ngram-n2-c1", "ngram-n4-c1"]
    assert rows["ngram-n4-c1"].cells[1].status is None  # b never ran N=4
    assert rows["ngram-n2-c1"].cells[0].speedup == pytest.approx(1.5125)
    assert rows["ngram-n4-c1"].cells[0].mean_acceptance_length == pytest.approx(3.4)
    joined = " | ".join(comparison.differences)
    assert "hardware differs: 1x NVIDIA H200" in joined and "2x NVIDIA H200" in joined
    assert "vLLM version differs: 0.32.0" in joined
    assert "workload differs: code" in joined


def test_identical_conditions_report_no_difference():
    comparison = compare_sessions([make_session(), make_session(id=str(uuid.uuid4()))])
    assert comparison.differences == []


def test_the_same_prompts_under_another_path_are_no_difference():
    """Issue 41: Compare flagged 'prompt source differs' for the same prompts read from another path (the
    prompt hashes matched). Only the content counts; a path that names other prompts still differs."""

    def measured(source: str, digest: str):
        session = make_session(id=str(uuid.uuid4()))
        session.settings = session.settings.replace(prompt_source=source)
        session.provenance.prompt_sha256 = digest
        return session

    same = compare_sessions([measured("/home/alice/prompts.jsonl", "ab" * 32), measured("/data/team/prompts.jsonl", "ab" * 32)])
    assert same.differences == []
    other = compare_sessions([measured("/home/alice/prompts.jsonl", "ab" * 32), measured("/data/team/prompts.jsonl", "cd" * 32)])
    assert any(n.startswith("prompt source differs") for n in other.differences) and any(n.startswith("prompt content differs") for n in other.differences)
    unhashed = compare_sessions([measured("/home/alice/prompts.jsonl", ""), measured("/data/team/prompts.jsonl", "")])
    assert any(n.startswith("prompt source differs") for n in unhashed.differences)  # nothing says they are the same
