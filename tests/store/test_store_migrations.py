"""Migrations run on every open, upgrade older files, and never touch files the store cannot trust."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

import pytest
from sqlite_utils import Database

from specadvisor.domain import Provenance
from specadvisor.errors import StoreError
from specadvisor.store import Store, rows
from specadvisor.store.migrations import known_migration_names, migrations
from specadvisor.store.upgrade import upgrade_session
from store_samples import make_session

V2 = "m002_origin_columns_and_indexes"
V3 = "m003_arm_result_wave_placement"
V4 = "m004_provenance_and_gpu_samples"


def _write_v1_file(path, *sessions) -> None:
    """What specadvisor with schema v1 wrote: m001 applied, rows without the v2 columns."""
    db = Database(sqlite3.connect(path))
    migrations.apply(db, stop_before=V2)
    for session in sessions:
        row = rows.session_row(session)
        del row["origin"], row["bundle_sha256"]
        db["sessions"].insert(row)
        db["arms"].insert_all(rows.arm_rows(session.id, session.arms))
        for result in session.results:
            row = rows.result_row(session.id, result)
            del row["wave"], row["placement"], row["runs"], row["energy_per_output_token_j"], row["request_records"]
            db["arm_results"].insert(row)
            db["position_counts"].insert_all(rows.position_rows(session.id, result))
        db["samples"].insert_all(rows.sample_row(session.id, s) for s in session.samples)
    db.close()


def _file_bytes(path):
    return path.read_bytes()


def test_empty_database_gets_every_migration(tmp_path):
    with Store.open(tmp_path / "new.db") as store:
        assert store.schema_migrations()[:4] == known_migration_names()[:4] == ["m001_create_tables", V2, V3, V4]
        assert {"sessions", "arms", "arm_results", "position_counts", "samples", "gpu_samples"} <= set(store.db.table_names())
        assert "origin" in store.db["sessions"].columns_dict
        index_columns = {tuple(i.columns) for i in store.db["sessions"].indexes}
        assert ("bundle_sha256",) in index_columns and ("model",) in index_columns


def test_migrations_are_rerunnable_on_every_open(tmp_path):
    path = tmp_path / "a.db"
    session = make_session()
    with Store.open(path) as store:
        store.save_session(session)
    with Store.open(path) as store:
        assert store.schema_migrations() == known_migration_names()
        assert store.get_session(session.id).model_dump() == session.model_dump()


def test_v1_file_is_upgraded_and_keeps_its_sessions(tmp_path):
    path = tmp_path / "v1.db"
    local = make_session()
    imported = make_session(
        id="0f0f0f0f-0000-4000-8000-000000000000",
        provenance=Provenance(origin="imported", imported_from="b.json", imported_at=datetime(2026, 11, 3, tzinfo=UTC), bundle_sha256="ab" * 32),
    )
    _write_v1_file(path, local, imported)
    with Database(sqlite3.connect(path)) as db:
        assert [m.name for m in migrations.applied(db)] == ["m001_create_tables"]
        assert "origin" not in db["sessions"].columns_dict

    with Store.open(path) as store:
        assert store.schema_migrations() == known_migration_names()
        # m003 marks what these pre-provenance sessions never recorded, exactly as an old bundle's import does
        assert store.get_session(local.id).model_dump() == upgrade_session(local).model_dump()
        assert store.get_session(imported.id).model_dump() == upgrade_session(imported).model_dump()
        backfilled = dict(store.db.execute("SELECT id, origin FROM sessions").fetchall())
        assert backfilled == {local.id: "local", imported.id: "imported"}
        assert store.find_by_bundle("ab" * 32).id == imported.id


def test_v3_session_without_provenance_says_unknown_not_blank(tmp_path):
    """A demo session stored before provenance (no CPU, no OS) reads back with explicit unknowns and
    start/end times taken from its arms."""
    from specadvisor.domain import HardwareProfile

    path = tmp_path / "v3.db"
    old = make_session(hardware=HardwareProfile(), status="finished")
    db = Database(sqlite3.connect(path))
    migrations.apply(db, stop_before=V4)
    row = rows.session_row(old)
    db["sessions"].insert(row)
    for result in old.results:
        r = rows.result_row(old.id, result)
        del r["energy_per_output_token_j"], r["request_records"]
        db["arm_results"].insert(r)
    db.close()
    with Store.open(path) as store:
        got = store.get_session(old.id)
    assert got.hardware.os == "unknown" and got.hardware.python == "unknown" and got.hardware.cpu.model == "unknown"
    assert got.hardware.gpu_label == "unknown GPUs"
    assert got.provenance.entry_point == "unknown"
    assert got.provenance.started_at == min(r.started_at for r in old.results)
    assert got.provenance.finished_at == max(r.finished_at for r in old.results)
    expected = upgrade_session(old)
    assert (got.hardware, got.provenance) == (expected.hardware, expected.provenance)


def test_newer_schema_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "future.db"
    Store.open(path).close()
    with Database(sqlite3.connect(path)) as db:
        db["_sqlite_migrations"].insert({"migration_set": "specadvisor", "name": "m099_from_the_future", "applied_at": "2030-01-01"})
    before = _file_bytes(path)
    with pytest.raises(StoreError) as caught:
        Store.open(path)
    message = str(caught.value)
    assert "newer specadvisor" in message and str(path) in message and "upgrade specadvisor" in message
    assert "\n" not in message
    assert caught.value.exit_code == 3
    assert _file_bytes(path) == before


def test_newer_user_version_is_refused(tmp_path):
    path = tmp_path / "future2.db"
    with Store.open(path) as store:
        assert store.db.execute("PRAGMA user_version").fetchone()[0] == len(known_migration_names())
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")
    before = _file_bytes(path)
    with pytest.raises(StoreError, match=r"newer specadvisor .schema version 99"):
        Store.open(path)
    assert _file_bytes(path) == before


def test_corrupted_file_is_refused_and_not_overwritten(tmp_path):
    path = tmp_path / "broken.db"
    path.write_bytes(b"this is not sqlite at all\n" * 200)
    before = _file_bytes(path)
    with pytest.raises(StoreError, match="corrupted") as caught:
        Store.open(path)
    assert str(path) in str(caught.value) and "move the file aside" in str(caught.value)
    assert _file_bytes(path) == before


def test_truncated_database_is_reported_as_corrupted(tmp_path):
    path = tmp_path / "cut.db"
    with Store.open(path) as store:
        for i in range(20):
            store.save_session(make_session(id=f"{i:08d}-0000-4000-8000-000000000000"))
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = _file_bytes(path)
    path.write_bytes(data[:100] + b"\xff" * 50 + data[150:4096])
    with pytest.raises(StoreError) as caught:
        Store.open(path).list_sessions()
    assert str(path) in str(caught.value)


def test_other_programs_database_is_not_adopted(tmp_path):
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
    before = _file_bytes(path)
    with pytest.raises(StoreError, match="not a specadvisor one"):
        Store.open(path)
    assert _file_bytes(path) == before


def test_locked_database_gives_a_one_line_error(tmp_path):
    path = tmp_path / "locked.db"
    Store.open(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with Store.open(path, busy_timeout_s=0.1) as store, pytest.raises(StoreError, match="locked by another process") as caught:
            store.save_session(make_session())
        assert str(path) in str(caught.value)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_locked_new_database_fails_at_open(tmp_path):
    path = tmp_path / "busy.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreError, match="locked"):
            Store.open(path, busy_timeout_s=0.1)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_an_immediate_busy_while_another_process_migrates_is_retried_not_reported(tmp_path, monkeypatch):
    """SQLite answers "database is locked" at once, without its busy wait, where waiting could
    deadlock (two processes creating the same new file: three concurrent `sessions import` once
    failed so). Open tries again until its busy timeout; only a lock that outlasts it is an error."""
    import specadvisor.store.store as store_module

    real = store_module.migrations.apply
    calls = []

    def busy_once(db):
        calls.append(1)
        if len(calls) == 1:
            raise sqlite3.OperationalError("database is locked")
        real(db)

    monkeypatch.setattr(store_module.migrations, "apply", busy_once)
    with Store.open(tmp_path / "new.db", busy_timeout_s=5) as store:
        store.save_session(make_session())
        assert len(store.list_sessions()) == 1
    assert len(calls) == 2

    def always_busy(db):
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(store_module.migrations, "apply", always_busy)
    with pytest.raises(StoreError, match="locked by another process"):
        Store.open(tmp_path / "other.db", busy_timeout_s=0.2)


def test_folder_given_as_database_is_refused(tmp_path):
    with pytest.raises(StoreError, match="not a regular file"):
        Store.open(tmp_path)


def test_closed_store_refuses_calls(tmp_path):
    store = Store.open(tmp_path / "a.db")
    store.close()
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.list_sessions()


def test_v2_file_gets_wave_placement_and_run_count_columns_backfilled(tmp_path):
    from specadvisor.domain import ArmResult, RunRecord

    path = tmp_path / "v2.db"
    session = make_session()
    session.results = [
        ArmResult(
            arm_id=session.arms[0].id,
            output_throughput=10.0,
            wave=3,
            placement="cores 1",
            runs=[RunRecord(trial=1, wave=1), RunRecord(role="bracket", wave=3, placement="cores 1")],
        )
    ]
    db = Database(sqlite3.connect(path))
    migrations.apply(db, stop_before=V3)
    db["sessions"].insert(rows.session_row(session))
    db["arms"].insert_all(rows.arm_rows(session.id, session.arms))
    row = rows.result_row(session.id, session.results[0])
    del row["wave"], row["placement"], row["runs"], row["energy_per_output_token_j"], row["request_records"]
    db["arm_results"].insert(row)
    db.close()
    with Store.open(path) as store:
        assert V3 in store.schema_migrations()
        assert store.db.execute("SELECT wave, placement, runs FROM arm_results").fetchall() == [(3, "cores 1", 2)]
        assert store.get_session(session.id).results[0].runs[1].role == "bracket"


def test_v4_results_get_a_request_record_count_and_new_runs_keep_their_records(tmp_path):
    """m005: results stored before per-request records count 0; a run's records survive a round trip."""
    from specadvisor.domain import RequestRecord, RunRecord

    path = tmp_path / "v4.db"
    session = make_session()
    db = Database(sqlite3.connect(path))
    migrations.apply(db, stop_before="m005_request_records")
    with Store.open(path) as store:
        assert store.schema_migrations() == known_migration_names()
        result = session.results[0].model_copy(deep=True)
        result.runs = [
            RunRecord(output_throughput=100.0, requests=[RequestRecord(index=i, latency_ms=10.0 + i, ttft_ms=1.0, output_tokens=8) for i in range(5)])
        ]
        store.save_session(session.model_copy(update={"results": [result]}))
        count = store.db.execute("SELECT request_records FROM arm_results WHERE arm_id = ?", [result.arm_id]).fetchone()[0]
        assert count == 5
        back = store.get_session(session.id).result_for(result.arm_id)
        assert [r.latency_ms for r in back.runs[0].requests] == [10.0, 11.0, 12.0, 13.0, 14.0]
