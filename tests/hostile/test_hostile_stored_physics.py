"""One physics check every stored measurement passes (specadvisor.physics), whatever produced it: a
bundle, an `import-bench` file, or a runner writing a result. Impossible figures (more accepted than
drafted, per-position counts that rise or do not add up, a mean acceptance length beyond N + 1,
latency quantiles out of order, fractional counts) are stored as `failed` with the violation
named, never as ok, and no verdict rests on them (round three, high 3)."""

from __future__ import annotations

import json

import pytest
from hostile_helpers import assert_one_line_error

from specadvisor.domain import ArmResult, ArmStatus, LatencyStats, PositionStats
from specadvisor.store import Store
from specadvisor.store.bundle import bundle_document
from store_samples import make_session


def _positions(counts: list[int], drafts: int = 1000) -> list[PositionStats]:
    return [PositionStats(position=i, accepted=a, drafts=drafts, rate=a / drafts) for i, a in enumerate(counts)]


def _lie_in(result: ArmResult, lie: str) -> None:
    """Replace one figure of an honest N=4 result (1000 drafts, 2400 accepted) with a lie."""
    if lie == "accepted-over-drafted":
        result.num_accepted_tokens = result.num_draft_tokens + 1
        result.per_position = []
    elif lie == "per-position-rising":
        result.per_position = _positions([300, 500, 700, 900])
    elif lie == "per-position-3x-accepted":
        result.per_position = _positions([900, 900, 900, 900])
    elif lie == "draft-tokens-over-n":
        result.num_drafts = 1
        result.num_draft_tokens = result.num_accepted_tokens = 1000
        result.mean_acceptance_length = 5.0  # within 1..N+1: the range check alone lets it in
        result.per_position = []
    elif lie == "length-not-its-counters":
        result.mean_acceptance_length = 4.9
    elif lie == "p50-over-p99":
        result.tpot_ms = LatencyStats(mean=7.0, median=90.0, p90=8.0, p99=9.5)
    else:
        raise AssertionError(lie)


LIES = {
    "accepted-over-drafted": "accepted tokens for",
    "per-position-rising": "more acceptances at position 1",
    "per-position-3x-accepted": "per-position acceptances summing to 3600 for 2400",
    "draft-tokens-over-n": "1000 draft tokens for 1 drafts of at most 4",
    "length-not-its-counters": "mean acceptance length 4.9 where its counters give 3.4",
    "p50-over-p99": "tpot_ms quantiles out of order",
}


def _import(tmp_path, cli, session) -> tuple:
    path = tmp_path / "b.json"
    path.write_text(json.dumps(bundle_document(session)), encoding="utf-8")
    db = tmp_path / "s.db"
    code, _, err = cli(["--db", str(db), "sessions", "import", str(path)])
    assert code == 0, err
    with Store.open(db) as store:
        return db, store.get_session(session.id)


@pytest.mark.parametrize("lie", list(LIES))
def test_a_bundles_impossible_result_is_stored_failed_naming_the_violation(tmp_path, cli, lie):
    session = make_session()
    _lie_in(session.results[2], lie)  # ngram N=4: the bundle's own recommended arm
    db, stored = _import(tmp_path, cli, session)
    result = stored.result_for(session.arms[2].id)
    assert result.status == ArmStatus.failed and LIES[lie] in result.error and "not a measurement" in result.error
    assert stored.recommendation.arm_id != session.arms[2].id  # the bundle's verdict rested on it: judged here
    code, out, err = cli(["--db", str(db), "sessions", "show", session.id[:8], "--json"])
    assert code == 0, err
    shown = {r["arm_id"]: r for r in json.loads(out)["results"]}
    assert shown[session.arms[2].id]["status"] == "failed"
    assert stored.result_for(session.arms[1].id).status == ArmStatus.ok  # the honest arm stays a measurement


def test_the_store_itself_refuses_to_keep_an_impossible_result_as_ok(tmp_path):
    """The runner's path (save_arm_result) and a whole session's (save_session) pass the same check."""
    session = make_session()
    with Store.open(tmp_path / "s.db") as store:
        store.save_session(session)
        result = session.results[2].model_copy(deep=True)
        _lie_in(result, "per-position-3x-accepted")
        store.save_arm_result(session.id, result)
        assert result.status == ArmStatus.failed  # the caller's copy says what was stored
        stored = store.get_session(session.id).result_for(result.arm_id)
        assert stored.status == ArmStatus.failed and "summing to 3600" in stored.error
        other = make_session()
        _lie_in(other.results[1], "p50-over-p99")
        store.save_session(other)
        assert store.get_session(other.id).result_for(other.results[1].arm_id).status == ArmStatus.failed


def _bench_file(tmp_path, name: str, **changes) -> str:
    data = {
        "completed": 8,
        "max_concurrency": 1,
        "total_output_tokens": 512,
        "output_throughput": 120.0,
        "duration": 4.0,
        "spec_decode_acceptance_rate": 65.38,
        "spec_decode_acceptance_length": 3.615,
        "spec_decode_num_drafts": 130,
        "spec_decode_draft_tokens": 520,
        "spec_decode_accepted_tokens": 340,
        "spec_decode_per_position_acceptance_rates": [120 / 130, 100 / 130, 80 / 130, 40 / 130],
        **changes,
    }
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("field", ["spec_decode_num_drafts", "spec_decode_draft_tokens", "spec_decode_accepted_tokens"])
def test_import_bench_refuses_a_fractional_count(tmp_path, cli, field):
    db = tmp_path / "s.db"
    code, _, err = cli(["--db", str(db), "import-bench", _bench_file(tmp_path, "b.json", **{field: 130.5}), "--model", "m"])
    assert_one_line_error(code, err, 2)
    assert field in err and "whole count" in err and not db.exists()


def test_import_bench_stores_impossible_figures_as_failed(tmp_path, cli):
    db = tmp_path / "s.db"
    honest = _bench_file(tmp_path, "honest.json")
    lying = _bench_file(tmp_path, "lying.json", spec_decode_accepted_tokens=600, spec_decode_acceptance_length=5.6, spec_decode_acceptance_rate=100)
    code, out, err = cli(["--db", str(db), "import-bench", honest, lying, "--model", "m", "--spec-config", '{"method":"ngram","num_speculative_tokens":4}'])
    assert code == 0, err
    with Store.open(db) as store:
        session = store.get_session(out.strip())
    assert session.result_for("bench-honest").status == ArmStatus.ok
    lied = session.result_for("bench-lying")
    assert lied.status == ArmStatus.failed and "600 accepted tokens for 520 drafted" in lied.error


# ------------------------------------------------------------------ a baseline of 5e-324 tok/s


def _tiny_baseline():
    session = make_session()
    base = session.results[0]
    base.output_throughput, base.output_throughput_ci, base.trials = 5e-324, (5e-324, 5e-324), [5e-324, 5e-324]
    return session


def test_a_tiny_baseline_is_no_measurement_and_every_view_survives_it(tmp_path, cli):
    session = _tiny_baseline()
    db, stored = _import(tmp_path, cli, session)
    base = stored.result_for(session.arms[0].id)
    assert base.status == ArmStatus.failed and "less than one token in" in base.error
    sid = session.id[:8]
    for argv in (
        ["sessions", "show", sid],
        ["sessions", "show", sid, "--json"],
        ["sessions", "show", sid, "--recompute"],
        ["report", sid],
        ["report", sid, "--format", "html"],
    ):
        code, out, err = cli(["--db", str(db), *argv])
        assert code == 0, (argv, err)
        assert "Traceback" not in err and "Infinity" not in out


def test_the_views_survive_a_tiny_baseline_read_from_an_older_database():
    """Stored before this check existed: the figures give "-" (no speedup), never an OverflowError."""
    from specadvisor.analysis.rejudge import rejudge
    from specadvisor.figures import all_speedups
    from specadvisor.report import html, markdown

    session = _tiny_baseline()
    speedups = all_speedups(session)
    assert all(s is None or s.reference or s.text() == "-" or s.value > 1e300 for s in speedups.values())
    rejudge(session)
    assert markdown(session) and html(session)
