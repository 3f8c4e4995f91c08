"""An endpoint that lies in its figures (issue 20, class 4): /metrics counters and usage chunks no vLLM
server could report. The arm fails with one line naming the endpoint's field, none of its figures
is stored as a measurement, the session finishes (never `interrupted`), and its bundle re-imports.
An honest endpoint of the same shape is measured: the checks do not refuse real physics."""

from __future__ import annotations

import json

import pytest
from hostile_helpers import assert_one_line_error
from lying_stub import LyingEndpoint, honest_counters

from specadvisor.domain import ArmStatus
from specadvisor.store import Store

FAST = ["--num-prompts", "2", "--output-len", "4", "--warmup", "0"]
PYTHON_ERRORS = ("Traceback", "OverflowError", "ValueError", "TypeError", "KeyError", "AttributeError", "ZeroDivisionError")


def counters_with(**changes):
    """Honest counters with some replaced: a value, or a function of the finished requests."""

    def counters(requests: int, output_len: int, scrape: int) -> dict:
        values = honest_counters(requests, output_len)
        for short, value in changes.items():
            name = {
                "accepted": "vllm:spec_decode_num_accepted_tokens_total",
                "drafts": "vllm:spec_decode_num_drafts_total",
                "draft_tokens": "vllm:spec_decode_num_draft_tokens_total",
                "generated": "vllm:generation_tokens_total",
            }[short]
            values[name] = value(requests, scrape) if callable(value) else value
        return values

    return counters


def usage_of(completion, prompt=7):
    return lambda n: {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": 0}


# (case, stub keywords, what the one line must name)
LIES = [
    ("accepted-1000x-requests", dict(counters=counters_with(accepted=lambda r, s: 1000 * r)), "accepted tokens for"),
    ("draft-tokens-over-drafts-x-n", dict(counters=counters_with(draft_tokens=lambda r, s: 500 * r)), "draft tokens for"),
    ("drafts-over-generated", dict(counters=counters_with(generated=0)), "generated tokens"),
    ("counter-1e300", dict(counters=counters_with(accepted=1e300)), "spec_decode_num_accepted_tokens_total = 1e+300"),
    ("counter-nan", dict(counters=counters_with(drafts=float("nan"))), "spec_decode_num_drafts_total = nan"),
    ("counter-inf", dict(counters=counters_with(generated=float("inf"))), "generation_tokens_total = inf"),
    ("counter-negative", dict(counters=counters_with(generated=-1088653)), "generation_tokens_total = -1.08865e+06"),
    ("counter-backwards", dict(counters=counters_with(generated=lambda r, s: 10**6 - 1000 * s)), "went backwards"),
    ("counter-past-2-53", dict(counters=counters_with(generated=lambda r, s: 2**60 + r)), "generation_tokens_total = 1.15292e+18"),
    ("position-label-text", dict(metrics_extra='vllm:spec_decode_num_accepted_tokens_per_pos_total{position="abc"} 1\n'), "draft position 'abc'"),
    ("position-label-999", dict(metrics_extra='vllm:spec_decode_num_accepted_tokens_per_pos_total{position="999"} 1\n'), "draft position '999'"),
    ("position-over-drafts", dict(per_position=lambda r, n: [1000.0 * r, 0.0, 0.0]), "at position 0"),
    ("positions-over-n", dict(per_position=lambda r, n: [0.0] * 5), "5 positions for N=3"),
    ("usage-10e12-tokens", dict(usage=usage_of(10**12)), "usage.completion_tokens was 1000000000000 for a request of max_tokens 4"),
    ("usage-negative", dict(usage=usage_of(-1088653)), "usage.completion_tokens was -1088653"),
    ("usage-text", dict(usage=usage_of("many")), "usage.completion_tokens was 'many'"),
    ("usage-1e300", dict(usage=usage_of(1e300)), "usage.completion_tokens was 1e+300"),
    ("usage-infinity", dict(usage=usage_of(float("inf"))), "usage.completion_tokens was inf"),
    ("usage-fraction", dict(usage=usage_of(2.5)), "usage.completion_tokens was 2.5"),
    ("usage-bool", dict(usage=usage_of(True)), "usage.completion_tokens was True"),
    ("usage-400-digits", dict(usage=usage_of(10**400)), "an integer of 1329 bits"),
    ("usage-prompt-tokens-10e12", dict(usage=usage_of(4, prompt=10**12)), "usage.prompt_tokens was 1000000000000"),
    ("usage-not-an-object", dict(usage=lambda n: 5), "usage chunk was 5"),
    ("usage-a-list", dict(usage=lambda n: [4]), "usage chunk was list"),
    ("more-chunks-than-max-tokens", dict(stream="tokens-forever"), "content chunks for this request's max_tokens"),
    # round three: N unknown, accepted beyond generated, per-position shapes, fractions, duplicates
    (
        "n-unknown-1000-tokens-per-draft",
        dict(
            server_info=False,
            per_position=lambda r, n: None,
            counters=counters_with(drafts=lambda r, s: r, draft_tokens=lambda r, s: 1000 * r, accepted=lambda r, s: 1000 * r),
        ),
        "drafts of at most 64 (N unknown",
    ),
    (
        "accepted-3x-generated-n-known",
        dict(
            counters=counters_with(drafts=lambda r, s: 4 * r, draft_tokens=lambda r, s: 12 * r, accepted=lambda r, s: 12 * r),
            per_position=lambda r, n: [4.0 * r, 4.0 * r, 4.0 * r],
        ),
        "generated tokens over",
    ),
    ("per-position-rising", dict(per_position=lambda r, n: [0.0, 0.0, 2.0 * r]), "more acceptances at position 2"),
    ("per-position-3x-accepted", dict(per_position=lambda r, n: [2.0 * r, 2.0 * r, 2.0 * r]), "per-position acceptances summing to"),
    ("counter-fraction", dict(counters=counters_with(generated=lambda r, s: 4 * r + 0.5)), "not a whole count"),
    ("series-duplicated", dict(metrics_extra='vllm:generation_tokens_total{engine="0",model_name="m"} 0\n'), "same labels twice"),
]


@pytest.mark.parametrize("kwargs, names", [(k, n) for _, k, n in LIES], ids=[c for c, _, _ in LIES])
def test_lying_endpoint_fails_the_arm_in_one_line(tmp_path, cli, kwargs, names):
    db = tmp_path / "s.db"
    with LyingEndpoint(**kwargs) as stub:
        code, out, err = cli(["--db", str(db), "sweep", "--endpoint", stub.url, *FAST, "--json"])
    assert_one_line_error(code, err, 4)
    assert names in err, err  # the sweep's one line carries the first cause, naming the field
    assert not any(word in err + out for word in PYTHON_ERRORS), err
    json.loads(out)
    with Store.open(db) as store:
        (summary,) = store.list_sessions()
        assert summary.status == "finished"  # never `interrupted`: a resume would hit the same wall
        session = store.get_session(summary.id)
    (result,) = session.results
    assert result.status == ArmStatus.failed and names in result.error and "arm not measured" in result.error
    # none of the endpoint's figures is kept as a measurement
    assert result.output_throughput is None and result.acceptance_rate is None and result.mean_acceptance_length is None
    assert result.output_tokens == 0 and not result.num_accepted_tokens and result.completed == 0
    for sample in session.samples:  # live samples are shown as acceptance too: none stored breaks physics
        assert sample.num_accepted_tokens <= sample.num_draft_tokens <= 3 * sample.num_drafts <= 3 * sample.generation_tokens
    # what was stored travels: its bundle exports and imports again (the old failure: import refused it)
    bundle = tmp_path / "b.json"
    assert cli(["--db", str(db), "sessions", "export", summary.id[:8], "-o", str(bundle)])[0] == 0
    code, _, err = cli(["--db", str(tmp_path / "other.db"), "sessions", "import", str(bundle)])
    assert code == 0, err


def test_honest_endpoint_of_the_same_shape_is_measured(tmp_path, cli):
    """The control: the stub's honest figures pass every check and are stored as they were reported."""
    db = tmp_path / "s.db"
    with LyingEndpoint() as stub:
        code, _out, err = cli(["--db", str(db), "sweep", "--endpoint", stub.url, *FAST, "--json"])
    assert code == 0, err
    with Store.open(db) as store:
        (summary,) = store.list_sessions()
        (result,) = store.get_session(summary.id).results
    assert result.status == ArmStatus.ok and result.completed == 2 and result.output_tokens == 8
    assert result.acceptance_rate == pytest.approx(1 / 3) and result.mean_acceptance_length == pytest.approx(2.0)
    assert result.num_drafts == 4 and result.num_accepted_tokens == 4


def test_a_lie_in_the_warmup_is_not_measured_either(tmp_path, cli):
    """A usage lie during the warmups: the arm is not measured at all (no trial runs after it)."""
    db = tmp_path / "s.db"
    with LyingEndpoint(usage=usage_of(-1)) as stub:
        code, _out, err = cli(["--db", str(db), "sweep", "--endpoint", stub.url, "--num-prompts", "2", "--output-len", "4", "--warmup", "2"])
        posts = stub.posts
    assert_one_line_error(code, err, 4)
    assert "usage.completion_tokens was -1" in err
    assert posts == 2  # the two warmups, then nothing
