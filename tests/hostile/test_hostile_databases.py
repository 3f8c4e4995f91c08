"""Hostile or broken database files: exit 3 with one line naming the file, which is left untouched;
a read-only database can still be listed."""

from __future__ import annotations

import sqlite3
import subprocess

import pytest
from hostile_helpers import assert_one_line_error

from specadvisor.store import Store
from store_samples import make_session


def _corrupt(path):
    path.write_bytes(b"SQLite format 3\x00" + b"\xde\xad" * 4000)


def _random(path):
    path.write_bytes(bytes(range(256)) * 64)


def _sql(path, statement):
    conn = sqlite3.connect(path)
    try:
        conn.execute(statement)
        conn.commit()
    finally:
        conn.close()  # checkpoints the WAL: the file alone holds the change


def _other_program(path):
    _sql(path, "CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")


def _newer_schema(path):
    with Store.open(path) as store:
        store.save_session(make_session())
    _sql(path, "PRAGMA user_version = 999")


def _truncated(path):
    with Store.open(path) as store:
        store.save_session(make_session())
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])


BROKEN = [
    ("corrupt-header", _corrupt),
    ("random-bytes", _random),
    ("other-program", _other_program),
    ("newer-schema", _newer_schema),
    ("truncated", _truncated),
]
COMMANDS = [["sessions", "list"], ["sessions", "show", "abc"], ["sessions", "import", "{bundle}"], ["report", "abc"]]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: "-".join(a[:2]))
@pytest.mark.parametrize("make", [m for _, m in BROKEN], ids=[i for i, _ in BROKEN])
def test_broken_database_is_reported_and_untouched(tmp_path, cli, make, argv):
    from specadvisor.store.bundle import export_bundle

    db = tmp_path / "s.db"
    make(db)
    assert not list(tmp_path.glob("s.db-*"))
    before = db.read_bytes()
    bundle = export_bundle(make_session(), tmp_path / "b.json")
    code, _, err = cli(["--db", str(db), *[a.replace("{bundle}", str(bundle)) for a in argv]])
    assert_one_line_error(code, err, 3)
    assert str(db) in err
    assert db.read_bytes() == before


def test_database_path_is_a_folder(tmp_path, cli):
    (tmp_path / "db").mkdir()
    code, _, err = cli(["--db", str(tmp_path / "db"), "sessions", "list"])
    assert_one_line_error(code, err, 3)


def test_read_only_database_can_be_listed_not_changed(tmp_path, cli):
    folder = tmp_path / "ro"
    folder.mkdir()
    db = folder / "s.db"
    with Store.open(db) as store:
        session = make_session()
        store.save_session(session)
    locked = subprocess.run(["chattr", "+i", str(db), str(folder)], capture_output=True).returncode == 0
    if not locked:
        db.chmod(0o444)
        folder.chmod(0o555)
    try:
        code, out, err = cli(["--db", str(db), "sessions", "list"])
        assert code == 0, err
        assert session.id[:8] in out
        code, _, err = cli(["--db", str(db), "sessions", "delete", session.id[:8], "--yes"])
        assert_one_line_error(code, err, 3)
    finally:
        if locked:
            subprocess.run(["chattr", "-i", str(db), str(folder)], check=True)
        folder.chmod(0o755)
        db.chmod(0o644)


def test_locked_database_is_one_line(tmp_path, cli, monkeypatch):
    from specadvisor.store import store as store_module

    db = tmp_path / "s.db"
    with Store.open(db) as store:
        session = make_session()
        store.save_session(session)
    original = store_module.Store.open.__func__
    monkeypatch.setattr(store_module.Store, "open", classmethod(lambda cls, path=None, **_: original(cls, path, busy_timeout_s=0.2)))
    holder = sqlite3.connect(db, timeout=0.1)
    holder.execute("BEGIN EXCLUSIVE")  # another process is writing
    try:
        code, _, err = cli(["--db", str(db), "sessions", "delete", session.id[:8], "--yes"])
    finally:
        holder.rollback()
        holder.close()
    assert_one_line_error(code, err, 3)
    assert "locked" in err


def test_missing_resume_id_writes_nothing_to_an_existing_database(tmp_path, cli):
    db = tmp_path / "s.db"
    with Store.open(db) as store:
        store.save_session(make_session())
    code, _, err = cli(["--db", str(db), "sweep", "--resume", "ffffffff"])
    assert_one_line_error(code, err, 2)
    with Store.open(db) as store:
        assert len(store.list_sessions()) == 1
