"""A side-by-side comparison whose arm and baseline each ran on one slot only says so beside its
verdict (analysis.placement): on the 2-core CPU box the baseline's slot, which also carried the
client, once read as a 1.15x n-gram gain. Rotated slots (sweep.scheduler.rotated) and serial sweeps
carry no such line."""

from __future__ import annotations

from specadvisor.analysis.recommend import recommend
from specadvisor.domain import ArmResult, ArmStatus, RunRecord, SweepSettings
from specadvisor.sweep.plan import plan_from_methods

SLOT_LINE = "reads as the arm's gain or loss"


def session_with(placements: dict[str, list[str]], tput: dict[str, float]):
    """Baseline and n-gram N=4, one run per wave on the given slots ("" = the whole host)."""
    session = plan_from_methods("m", [("ngram", {})], [4], SweepSettings(num_prompts=8, bracket=False, parallel=2)).session
    results = []
    for arm in session.arms:
        runs = [
            RunRecord(trial=wave, wave=wave, placement=slot, completed=8, duration_s=10.0, output_throughput=tput[arm.id] * (1 + 0.01 * wave))
            for wave, slot in enumerate(placements[arm.id], start=1)
        ]
        results.append(ArmResult(arm_id=arm.id, status=ArmStatus.ok, output_throughput=tput[arm.id], completed=8, runs=runs))
    session.results = results
    return session


def reasons(session) -> str:
    return " | ".join(recommend(session).reasons)


def test_each_arm_on_one_slot_of_its_own_is_said():
    text = reasons(session_with({"baseline": ["cores 0"] * 3, "ngram-n4": ["cores 1"] * 3}, {"baseline": 100.0, "ngram-n4": 150.0}))
    assert "side by side, ngram N=4 ran only on cores 1 and the baseline only on cores 0" in text and SLOT_LINE in text


def test_rotated_slots_and_serial_sweeps_say_nothing_of_slots():
    rotated = session_with(
        {"baseline": ["cores 0", "cores 1", "cores 0"], "ngram-n4": ["cores 1", "cores 0", "cores 1"]}, {"baseline": 100.0, "ngram-n4": 150.0}
    )
    serial = session_with({"baseline": ["", "", ""], "ngram-n4": ["", "", ""]}, {"baseline": 100.0, "ngram-n4": 150.0})
    for session in (rotated, serial):
        assert SLOT_LINE not in reasons(session)


def test_the_line_follows_the_judged_arm_whatever_the_verdict():
    loss = session_with({"baseline": ["GPU 0"] * 2, "ngram-n4": ["GPU 1"] * 2}, {"baseline": 100.0, "ngram-n4": 50.0})
    rec = recommend(loss)
    assert rec.decision == "do not speculate" and "ngram N=4 ran only on GPU 1 and the baseline only on GPU 0" in " ".join(rec.reasons)
