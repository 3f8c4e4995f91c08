"""The store keeps a Session exactly, writes arms as they finish and is safe across threads."""

from __future__ import annotations

import sqlite3
import threading
import uuid

import pytest

from specadvisor.domain import ArmResult, ArmStatus, MetricsSample, PositionStats, Recommendation
from specadvisor.errors import InputError, StoreError
from specadvisor.store import Store
from specadvisor.store.store import _SUMMARY_SQL
from specadvisor.store.summary import summarize
from specadvisor.store.verdicts import decision_code_version
from store_samples import make_session


def test_save_and_get_reproduces_the_session_exactly(store):
    session = make_session()
    store.save_session(session)
    assert store.get_session(session.id).model_dump() == session.model_dump()


def test_reopening_the_file_gives_the_same_session(tmp_path):
    session = make_session()
    with Store.open(tmp_path / "a.db") as first:
        first.save_session(session)
    with Store.open(tmp_path / "a.db") as second:
        assert second.get_session(session.id).model_dump() == session.model_dump()


def test_raw_position_counts_are_queryable_rows(store):
    session = make_session()
    store.save_session(session)
    rows = store.db.execute(
        "SELECT position, accepted, drafts FROM position_counts WHERE session_id = ? AND arm_id = ? ORDER BY position",
        [session.id, "ngram-n4-c1"],
    ).fetchall()
    assert rows == [(0, 900, 1000), (1, 700, 1000), (2, 500, 1000), (3, 300, 1000)]


def test_arm_result_is_committed_immediately_and_visible_to_another_connection(store):
    session = make_session(results=[], samples=[], recommendation=None, status="running")
    store.save_session(session)
    result = ArmResult(arm_id="ngram-n2-c1", output_throughput=150.0, per_position=[PositionStats(position=0, accepted=8, drafts=10, rate=0.8)])
    store.save_arm_result(session.id, result)
    other = sqlite3.connect(store.path)
    try:
        assert other.execute("SELECT output_throughput FROM arm_results WHERE session_id = ?", [session.id]).fetchall() == [(150.0,)]
        assert other.execute("SELECT accepted, drafts FROM position_counts WHERE session_id = ?", [session.id]).fetchall() == [(8, 10)]
    finally:
        other.close()


def test_save_arm_result_replaces_the_arm_and_its_counts(store):
    session = make_session()
    store.save_session(session)
    shorter = session.results[2].model_copy(update={"status": ArmStatus.failed, "per_position": session.results[2].per_position[:1]})
    store.save_arm_result(session.id, shorter)
    loaded = store.get_session(session.id)
    assert [r.arm_id for r in loaded.results] == [r.arm_id for r in session.results]
    assert loaded.result_for("ngram-n4-c1").status is ArmStatus.failed
    assert len(loaded.result_for("ngram-n4-c1").per_position) == 1
    assert loaded.updated_at > session.updated_at


def test_samples_append_in_order_and_are_idempotent(store):
    session = make_session(samples=[])
    store.save_session(session)
    first = [MetricsSample(arm_id="ngram-n2-c1", t=float(t), generation_tokens=t * 10.0) for t in (1, 2)]
    store.add_samples(session.id, first)
    store.add_samples(session.id, [*first, MetricsSample(arm_id="ngram-n2-c1", t=3.0)])
    assert [s.t for s in store.get_session(session.id).samples] == [1.0, 2.0, 3.0]


def test_recommendation_and_status_updates(store):
    session = make_session(recommendation=None, status="running")
    store.save_session(session)
    store.set_recommendation(session.id, Recommendation(arm_id=None, do_not_speculate=True, reasons=["baseline fastest"]))
    store.set_status(session.id, "finished")
    loaded = store.get_session(session.id)
    assert loaded.recommendation.do_not_speculate and loaded.status == "finished"
    store.set_recommendation(session.id, None)
    assert store.get_session(session.id).recommendation is None


def test_unknown_status_is_an_input_error(store):
    session = make_session()
    store.save_session(session)
    with pytest.raises(InputError, match="unknown session status 'done'"):
        store.set_status(session.id, "done")


def test_writes_to_a_missing_session_are_refused(store):
    with pytest.raises(InputError, match="no session"):
        store.save_arm_result("nope", ArmResult(arm_id="a"))


def test_prefix_lookup_unique_ambiguous_and_missing(store):
    a = make_session(id="abcd0000-0000-4000-8000-000000000001")
    b = make_session(id="abcd1111-0000-4000-8000-000000000002")
    store.save_session(a)
    store.save_session(b)
    assert store.get_session("abcd0").id == a.id
    assert store.get_session(b.id).id == b.id
    with pytest.raises(InputError, match="ambiguous"):
        store.get_session("abcd")
    with pytest.raises(InputError, match="no session matches"):
        store.get_session("ffff")
    with pytest.raises(InputError, match="no session matches"):
        store.get_session("%")  # not a LIKE wildcard


def test_list_is_newest_first_with_best_arm(store):
    old = make_session()
    new = make_session(id=str(uuid.uuid4()), created_at=old.created_at.replace(year=2027), name="newer")
    store.save_session(old)
    store.save_session(new)
    summaries = store.list_sessions()
    assert [s.id for s in summaries] == [new.id, old.id]
    assert summaries[0].best_arm == "ngram N=4 c1"
    assert summaries[0].best_speedup == pytest.approx(1.725)
    assert summaries[0].gpu == "1x NVIDIA H200"


def test_list_is_one_query_however_many_sessions(store):
    for _ in range(5):
        store.save_session(make_session(id=str(uuid.uuid4())))
    statements: list[str] = []
    store.db.conn.set_trace_callback(statements.append)
    try:
        summaries = store.list_sessions()
    finally:
        store.db.conn.set_trace_callback(None)
    assert len(summaries) == 5 and all(s.best_speedup == pytest.approx(1.725) for s in summaries)
    assert len([q for q in statements if q.lstrip().upper().startswith(("SELECT", "WITH"))]) == 1


def test_find_sessions_filters_by_model_and_hardware(store):
    a = make_session()
    b = make_session(id=str(uuid.uuid4()), model="other/model")
    c = make_session(id=str(uuid.uuid4()), hardware_fingerprint="cpu-only")
    for s in (a, b, c):
        store.save_session(s)
    assert {s.id for s in store.find_sessions(model="Qwen/Qwen3-8B")} == {a.id, c.id}
    assert [s.id for s in store.find_sessions(model="Qwen/Qwen3-8B", hardware_fingerprint=a.hardware_fingerprint)] == [a.id]
    assert len(store.find_sessions()) == 3


def test_delete_removes_every_row_of_the_session(store):
    keep, gone = make_session(), make_session(id=str(uuid.uuid4()))
    store.save_session(keep)
    store.save_session(gone)
    store.delete_session(gone.id)
    for table in ("sessions", "arms", "arm_results", "position_counts", "samples"):
        column = "id" if table == "sessions" else "session_id"
        ids = {r[0] for r in store.db.execute(f"SELECT {column} FROM {table}")}
        assert ids == {keep.id}, table
    with pytest.raises(InputError):
        store.get_session(gone.id)


def test_database_is_in_wal_mode(store):
    assert store.db.journal_mode == "wal"


def test_default_path_follows_specadvisor_home(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECADVISOR_HOME", str(tmp_path / "home"))
    with Store.open() as opened:
        assert opened.path == tmp_path / "home" / "data" / "specadvisor.db"
        assert opened.path.is_file()


def test_store_is_usable_from_worker_threads(store):
    """The TUI writes from thread workers: concurrent writers on one Store must all land."""
    session = make_session(results=[], samples=[])
    store.save_session(session)
    errors: list[BaseException] = []

    def write(worker: int) -> None:
        try:
            for t in range(25):
                store.add_samples(session.id, [MetricsSample(arm_id=f"arm{worker}", t=float(t))])
                store.get_session(session.id)
            store.save_arm_result(session.id, ArmResult(arm_id=f"arm{worker}", output_throughput=float(worker)))
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    loaded = store.get_session(session.id)
    assert len(loaded.samples) == 100
    assert {r.arm_id for r in loaded.results} == {"arm0", "arm1", "arm2", "arm3"}


def test_secrets_never_reach_the_database_file(store):
    from specadvisor.domain import SweepSettings

    session = make_session(settings=SweepSettings(server_args=["--api-key", "sk-abcdefghijklmnop1234"]), notes="HF_TOKEN=hf_zzzzzzzzzzzzzzzzzzzzzzzzzz")
    store.save_session(session)
    store.save_arm_result(session.id, ArmResult(arm_id="baseline-c1", error_excerpt="Authorization: Bearer abcdef123456"))
    store.set_recommendation(session.id, Recommendation(arm_id=None, serve_command="vllm serve m --api-key plainsecret9"))
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw = store.path.read_bytes()
    for secret in (b"sk-abcdefghijklmnop1234", b"hf_zzzzzzzzzzzzzzzzzzzzzzzzzz", b"abcdef123456", b"plainsecret9"):
        assert secret not in raw
    loaded = store.get_session(session.id)
    assert loaded.settings.server_args == ["--api-key", "<redacted>"]
    assert loaded.recommendation.serve_command == "vllm serve m --api-key <redacted>"


def test_two_processes_worth_of_stores_write_the_same_file(tmp_path):
    """The CLI and the TUI may hold the same database open: WAL plus the busy timeout serialise them."""
    path = tmp_path / "shared.db"
    first, second = Store.open(path), Store.open(path)
    session = make_session(results=[], samples=[])
    first.save_session(session)
    errors: list[BaseException] = []

    def write(store: Store, prefix: str) -> None:
        try:
            for i in range(30):
                store.save_arm_result(session.id, ArmResult(arm_id=f"{prefix}{i}", output_throughput=float(i)))
        except BaseException as exc:  # noqa: BLE001 - asserted below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(s, p)) for s, p in ((first, "a"), (second, "b"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    first.close()
    second.close()
    assert errors == []
    with Store.open(path) as store:
        assert len(store.get_session(session.id).results) == 60


def test_a_failing_write_leaves_nothing_half_written(store, monkeypatch):
    session = make_session()
    store.save_session(session)
    before = store.get_session(session.id).model_dump()

    def explode(*args, **kwargs):
        raise RuntimeError("disk vanished mid-write")

    monkeypatch.setattr("specadvisor.store.rows.position_rows", explode)
    changed = session.results[2].model_copy(update={"output_throughput": 1.0})
    with pytest.raises(RuntimeError):
        store.save_arm_result(session.id, changed)
    monkeypatch.undo()
    assert store.get_session(session.id).model_dump() == before
    store.save_arm_result(session.id, changed)  # the connection is usable afterwards
    assert store.get_session(session.id).result_for(changed.arm_id).output_throughput == 1.0


def test_non_finite_figures_never_make_a_session_unreadable(store, tmp_path):
    from specadvisor.store.bundle import export_bundle, read_bundle

    nan, inf = float("nan"), float("inf")
    result = ArmResult(arm_id="ngram-n2-c1", output_throughput=inf, per_position=[PositionStats(position=0, accepted=0, drafts=0, rate=nan)])
    session = make_session(results=[result], samples=[])
    store.save_session(session)
    loaded = store.get_session(session.id)
    assert loaded.results[0].output_throughput == inf
    assert loaded.results[0].per_position[0].rate != loaded.results[0].per_position[0].rate  # still NaN
    with pytest.raises(InputError, match=r"non-finite number .* at results.0.per_position.0.rate"):
        export_bundle(loaded, tmp_path / "nan.json")
    assert not (tmp_path / "nan.json").exists()
    fine = loaded.model_copy(update={"results": [result.model_copy(update={"per_position": []})]})
    assert read_bundle(export_bundle(fine, tmp_path / "ok.json")).results[0].output_throughput is None
    with pytest.raises(InputError, match="finite time"):
        store.add_samples(session.id, [MetricsSample(arm_id="a", t=nan)])


def test_a_damaged_row_is_a_store_error_and_still_listed_and_deletable(store):
    good, bad = make_session(), make_session(id=str(uuid.uuid4()))
    store.save_session(good)
    store.save_session(bad)
    store.db.execute("UPDATE arm_results SET result_json = '{\"arm_id\": 5}' WHERE session_id = ?", [bad.id])
    with pytest.raises(StoreError, match=f"session {bad.id} in .* cannot be read") as caught:
        store.get_session(bad.id)
    assert "sessions delete" in str(caught.value)
    statuses = {s.id: s.status for s in store.list_sessions()}
    assert statuses == {good.id: "finished", bad.id: "unreadable"}
    store.delete_session(bad.id)
    assert [s.id for s in store.list_sessions()] == [good.id]


def test_naive_timestamps_do_not_break_listing(store):
    aware = make_session()
    naive = make_session(id=str(uuid.uuid4()), created_at=aware.created_at.replace(tzinfo=None, year=2027))
    store.save_session(aware)
    store.save_session(naive)
    assert [s.id for s in store.list_sessions()] == [naive.id, aware.id]


@pytest.mark.parametrize(
    ("verdict", "arms_read"),
    [
        (None, 3),  # no verdict: the fastest by speedup, which needs every measured arm
        (Recommendation(arm_id=None, decision="undecided", verdict="undecided after 3 launches"), 0),
        (Recommendation(arm_id="ngram-n2-c1", speedup=1.5, decision="speculate", verdict="speculate: ngram N=2"), 2),  # baseline + pick
        (Recommendation(arm_id=None, do_not_speculate=True, decision="do not speculate", verdict="do not speculate"), 1),
        (Recommendation(arm_id="ngram-n2-c1"), 3),  # an answer from before the decision rule: no speedup stored
        (Recommendation(arm_id="gone-arm", speedup=2.0, decision="speculate"), 3),  # names an arm the session lacks
        (Recommendation(arm_id="gone-arm", do_not_speculate=True), 1),
    ],
    ids=["none", "undecided", "speculate", "do-not-speculate", "no-speedup", "missing-arm", "missing-arm-dns"],
)
def test_listing_reads_only_what_the_summary_needs_and_says_the_same(store, verdict, arms_read):
    """The listing loads only the arms the best arm depends on (the stored verdict's), and what it says
    is summarize() of the whole loaded session, whatever the verdict."""
    session = make_session(recommendation=verdict)
    store.save_session(session)
    (listed,) = store.list_sessions()
    whole = summarize(store.get_session(session.id)).model_copy(update={"arms": len(session.arms)})
    assert listed.model_dump() == whole.model_dump()
    assert store.db.execute(f"SELECT json_array_length(arms) FROM ({_SUMMARY_SQL})", [decision_code_version()]).fetchone()[0] == arms_read
