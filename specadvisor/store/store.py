"""The SQLite session store: one file, WAL mode, migrated on open, safe to share between threads.

The TUI calls the store from worker threads, so the single connection is opened with
check_same_thread=False and every public method holds one re-entrant lock. Every write is its own
transaction: a finished arm is on disk before the next one starts. A file the store cannot
trust (corrupt, locked, written by a newer specadvisor, someone else's database) is reported as a
StoreError naming the file and is never overwritten or migrated down. Secrets (API keys, tokens,
Authorization headers) are scrubbed before anything reaches the disk, and every result passes the
one physics check (specadvisor.physics.enforce) on its way: whatever measured it (a launched server,
an endpoint, a bundle, `import-bench`), impossible figures are stored as `failed`, never as ok.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import itertools
import json
import math
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError
from sqlite_utils import Database

from specadvisor import physics, settings
from specadvisor.domain import Arm, ArmResult, MetricsSample, Provenance, Recommendation, Session, TrainedDrafter, complete_models, utcnow
from specadvisor.errors import InputError, StoreError
from specadvisor.fileio import make_private_dirs
from specadvisor.store import rows
from specadvisor.store.migrations import MIGRATION_SET, known_migration_names, migrations
from specadvisor.store.redact import redact_session, scrub
from specadvisor.store.summary import SessionSummary, summarize
from specadvisor.store.verdicts import decision_code_version

complete_models()  # sessions read here are serialized part by part (redaction, rows, --json)
_T = TypeVar("_T")
_ARM_LIST = TypeAdapter(list[Arm])
SESSION_STATUSES = ("planned", "running", "interrupted", "finished")
_MIGRATIONS_TABLE = "_sqlite_migrations"


def _is_busy(exc: sqlite3.Error) -> bool:
    text = str(exc)
    return "locked" in text or "busy" in text


def _another_opener(exc: sqlite3.Error) -> bool:
    """Another process is creating or migrating the same file: it holds it (SQLite skips its busy wait
    where waiting could deadlock, e.g. on the journal-mode switch) or migrated first ("already
    exists", "duplicate column"). Opening again reads the pending migrations afresh."""
    text = str(exc)
    return _is_busy(exc) or "already exists" in text or "duplicate column" in text


def _sqlite_error(path: Path, exc: sqlite3.Error) -> StoreError:
    text = str(exc)
    if _is_busy(exc):
        return StoreError(f"database {path} is locked by another process", hint="close the other specadvisor and retry")
    if isinstance(exc, sqlite3.DatabaseError) and ("not a database" in text or "malformed" in text or "corrupt" in text):
        return StoreError(
            f"database {path} is corrupted ({text})",
            hint="move the file aside to keep it; specadvisor then starts a new one, or pass --db PATH",
        )
    if any(word in text for word in ("readonly", "unable to open", "disk I/O", "is full")):
        return StoreError(f"database {path} cannot be written ({text})", hint="check the file's permissions and free disk space, or pass --db PATH")
    return StoreError(f"database {path}: {text}", hint="pass --db PATH to use another database")


def _guarded(method: Callable[..., _T]) -> Callable[..., _T]:
    """Hold the store's lock and turn sqlite errors into one-line StoreErrors naming the file."""

    @functools.wraps(method)
    def wrapper(self: Store, *args: Any, **kwargs: Any) -> _T:
        with self._lock:
            if self._db is None:
                raise StoreError(f"database {self.path} is closed", hint="open the store again")
            try:
                return method(self, *args, **kwargs)
            except sqlite3.Error as exc:
                raise _sqlite_error(self.path, exc) from exc

    return wrapper


class Store:
    """Sessions on disk. Open with Store.open(); use from any thread."""

    def __init__(self, path: Path, db: Database):
        self.path = path
        self._db: Database | None = db
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(cls, path: Path | None = None, *, busy_timeout_s: float = 5.0) -> Store:
        """Open (creating if needed) and migrate the database at `path` (default: the user data dir)."""
        path = Path(path) if path is not None else settings.paths().database
        path = path.expanduser()
        if path.exists() and not path.is_file():
            raise StoreError(f"database {path} is not a regular file", hint="pass --db with a file path")
        if path.is_symlink() and not path.exists():  # creating it would write wherever the link points
            raise StoreError(f"database {path} is a symbolic link to a file that does not exist", hint="pass --db with a file path")
        try:
            _create_private(path)
        except OSError as exc:
            raise StoreError(f"cannot create database {path}: {exc.strerror}", hint="pass --db PATH in a writable folder") from exc
        deadline = time.monotonic() + busy_timeout_s
        while True:
            conn = None
            try:
                conn = sqlite3.connect(str(path), timeout=busy_timeout_s, check_same_thread=False)
                db = Database(conn)
                _check_schema(path, db)
                db.execute("PRAGMA foreign_keys = ON")
                migrations.apply(db)
                if db.execute("PRAGMA user_version").fetchone()[0] != len(known_migration_names()):
                    db.execute(f"PRAGMA user_version = {len(known_migration_names())}")
                db.enable_wal()
                break
            except sqlite3.Error as exc:
                if conn is not None:
                    conn.close()
                if _another_opener(exc) and time.monotonic() < deadline:
                    time.sleep(0.05)
                    continue
                error = _sqlite_error(path, exc)
                if "cannot be written" in error.message and path.is_file():
                    return cls(path, _open_read_only(path, error))
                raise error from exc
            except StoreError:
                if conn is not None:
                    conn.close()
                raise
        return cls(path, db)

    def close(self) -> None:
        """Close the connection; closing twice is harmless."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def _write(self) -> Iterator[None]:
        """One write transaction, BEGIN IMMEDIATE: taking the write lock up front lets the busy timeout
        wait for another process instead of failing when a read snapshot cannot be upgraded (WAL)."""
        conn = self.db.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    @property
    def db(self) -> Database:
        assert self._db is not None, "store is closed"
        return self._db

    @_guarded
    def schema_migrations(self) -> list[str]:
        """Names of the migrations applied to this file, in order."""
        return [m.name for m in migrations.applied(self.db)]

    # ------------------------------------------------------------------ writing

    @_guarded
    def save_session(self, session: Session, *, only_if_new: bool = False, verdict_computed_here: bool = False) -> bool:
        """Upsert the session and everything in it. Arms, results and samples absent from `session`
        are kept: a runner writing arms as they finish and a view saving notes must not erase each other.
        With only_if_new, nothing is written (False) when the session, or another import of the same
        bundle, is already stored: checked inside the write transaction, so of two concurrent imports
        of one bundle exactly one adds it. With verdict_computed_here, the session's verdict is one
        specadvisor computed from its stored measurements (see store.verdicts); otherwise a verdict
        that differs from the stored one is taken as the sweep's own and the mark is dropped.
        """
        _require_finite_times(session.samples)
        n_of = {arm.id: arm.n for arm in session.arms}
        for result in session.results:  # in place: the caller's session shows what is stored
            physics.enforce(result, n_of.get(result.arm_id))
        # Samples are numbers keyed by our own arm ids: nothing to redact, and by far the bulk of a session.
        session = redact_session(session.model_copy(update={"samples": []})).model_copy(update={"samples": session.samples})
        with self._write():
            if only_if_new and self._already_stored(session):
                return False
            self._upsert("sessions", self._with_verdict_mark(rows.session_row(session), verdict_computed_here), ("id",))
            # One statement for all rows: an imported bundle may hold 100,000 arms.
            self._upsert_many("arms", rows.arm_rows(session.id, session.arms), ("session_id", "arm_id"))
            for result in session.results:
                self._write_result(session.id, result)
            self._upsert_many("samples", (rows.sample_row(session.id, sample) for sample in session.samples), ("session_id", "arm_id", "t"))
        return True

    @_guarded
    def save_arm_result(self, session_id: str, result: ArmResult) -> None:
        with self._write():
            self._require(session_id)
            physics.enforce(result, self._arm_n(session_id, result.arm_id))  # in place, as save_session
            self._write_result(session_id, scrub(result))
            self._touch(session_id)

    @_guarded
    def add_samples(self, session_id: str, samples: list[MetricsSample]) -> None:
        _require_finite_times(samples)
        with self._write():
            self._require(session_id)
            for sample in samples:
                self._upsert("samples", rows.sample_row(session_id, sample), ("session_id", "arm_id", "t"))

    @_guarded
    def set_recommendation(self, session_id: str, rec: Recommendation | None, *, computed_here: bool = False) -> None:
        """Store the session's verdict: the sweep's own, or (computed_here) one specadvisor computed from
        the stored measurements, marked with the decision code that computed it (store.verdicts)."""
        mark = decision_code_version() if computed_here and rec is not None else None
        with self._write():
            self._require(session_id)
            self.db.execute(
                "UPDATE sessions SET recommendation_json = ?, verdict_computed_by = ? WHERE id = ?", [rows.dump(rec and scrub(rec)), mark, session_id]
            )
            self._touch(session_id)

    @_guarded
    def set_provenance(self, session_id: str, provenance: Provenance) -> None:
        """Record where and when the session was measured (the runner's start and end times)."""
        with self._write():
            self._require(session_id)
            self.db.execute("UPDATE sessions SET provenance_json = ? WHERE id = ?", [rows.dump(scrub(provenance)), session_id])
            self._touch(session_id)

    @_guarded
    def set_status(self, session_id: str, status: str) -> None:
        if status not in SESSION_STATUSES:
            raise InputError(f"unknown session status {status!r}", hint=f"use one of {', '.join(SESSION_STATUSES)}")
        with self._write():
            self._require(session_id)
            self.db.execute("UPDATE sessions SET status = ? WHERE id = ?", [status, session_id])
            self._touch(session_id)

    @_guarded
    def delete_session(self, session_id: str) -> None:
        with self._write():
            self._require(session_id)
            for table in ("gpu_samples", "samples", "position_counts", "arm_results", "arms"):
                self.db.execute(f"DELETE FROM {table} WHERE session_id = ?", [session_id])
            self.db.execute("DELETE FROM sessions WHERE id = ?", [session_id])

    # ------------------------------------------------------------------ reading

    @_guarded
    def get_session(self, id_or_prefix: str) -> Session:
        return self._load(self.resolve_id(id_or_prefix))

    @_guarded
    def resolve_id(self, id_or_prefix: str) -> str:
        """The full id of the one session whose id is, or starts with, `id_or_prefix`."""
        prefix = id_or_prefix.strip()
        if not prefix:
            raise InputError("empty session id", hint="give a session id or a unique prefix (see `specadvisor sessions list`)")
        if self._exists(prefix):
            return prefix
        found = [str(r[0]) for r in self.db.execute("SELECT id FROM sessions WHERE substr(id, 1, ?) = ? LIMIT 6", [len(prefix), prefix])]
        if not found:
            raise InputError(f"no session matches {prefix!r}", hint="see `specadvisor sessions list` for the ids")
        if len(found) > 1:
            shown = ", ".join(f[: len(prefix) + 4] for f in found[:5])
            raise InputError(f"session id prefix {prefix!r} is ambiguous ({shown}...)", hint="type more characters of the id")
        return found[0]

    @_guarded
    def has_session(self, session_id: str) -> bool:
        return self._exists(session_id)

    @_guarded
    def find_by_bundle(self, bundle_sha256: str) -> Session | None:
        row = self.db.execute("SELECT id FROM sessions WHERE bundle_sha256 = ? LIMIT 1", [bundle_sha256]).fetchone()
        return self._load(row[0]) if row else None

    @_guarded
    def list_sessions(self) -> list[SessionSummary]:
        """Newest first, in one query: the session row plus each arm's label, status and throughput
        (no samples, no stored result JSON), which is all a summary's best arm needs."""
        summaries = []
        for row in self._query(_SUMMARY_SQL, [decision_code_version()]):
            try:
                summaries.append(summarize(_summary_session(row)).model_copy(update={"arms": row["arm_count"]}))
            except (ValidationError, ValueError, TypeError):
                summaries.append(_unreadable_summary(row["id"], row["created_at"]))
        return sorted(summaries, key=lambda s: _aware(s.created_at), reverse=True)

    @_guarded
    def find_sessions(self, *, model: str | None = None, hardware_fingerprint: str | None = None) -> list[Session]:
        """Sessions matching every given filter, newest first (the advisor's local evidence)."""
        where, params = [], []
        if model is not None:
            where.append("model = ?")
            params.append(model)
        if hardware_fingerprint is not None:
            where.append("hardware_fingerprint = ?")
            params.append(hardware_fingerprint)
        sql = "SELECT id FROM sessions" + (" WHERE " + " AND ".join(where) if where else "")
        sessions = [self._load(r[0]) for r in self.db.execute(sql, params).fetchall()]
        return sorted(sessions, key=lambda s: _aware(s.created_at), reverse=True)

    # ------------------------------------------------------------------ trained drafters

    @_guarded
    def save_drafter(self, drafter: TrainedDrafter) -> None:
        """Insert or replace a trained drafter's record (a training run saves it at every stage)."""
        record = drafter.model_copy(update={"updated_at": utcnow()})
        row = {
            "id": record.id,
            "created_at": record.created_at.isoformat(),
            "updated_at": record.updated_at.isoformat(),
            "status": record.status,
            "target": record.target,
            "folder": record.folder,
            "drafter_json": record.model_dump_json(),
        }
        with self._write():
            self._upsert("trained_drafters", row, ("id",))

    @_guarded
    def get_drafter(self, id_or_prefix: str) -> TrainedDrafter:
        """The one trained drafter whose id is, or starts with, `id_or_prefix`."""
        prefix = id_or_prefix.strip()
        found = self._query("SELECT drafter_json FROM trained_drafters WHERE substr(id, 1, ?) = ? LIMIT 2", [len(prefix), prefix]) if prefix else []
        if not found:
            raise InputError(f"no trained drafter matches {prefix!r}", hint="see `specadvisor drafters list` for the ids")
        if len(found) > 1:
            raise InputError(f"trained drafter id prefix {prefix!r} is ambiguous", hint="type more characters of the id")
        return TrainedDrafter.model_validate_json(found[0]["drafter_json"])

    @_guarded
    def list_drafters(self) -> list[TrainedDrafter]:
        """Every trained drafter, newest first."""
        found = self._query("SELECT drafter_json FROM trained_drafters ORDER BY created_at DESC", [])
        return [TrainedDrafter.model_validate_json(r["drafter_json"]) for r in found]

    @_guarded
    def drafter_for_folder(self, folder: str | None) -> TrainedDrafter | None:
        """The trained drafter a session's drafter folder is, if specadvisor trained it here."""
        if not folder:
            return None
        found = self._query("SELECT drafter_json FROM trained_drafters WHERE folder = ? ORDER BY created_at DESC LIMIT 1", [folder])
        return TrainedDrafter.model_validate_json(found[0]["drafter_json"]) if found else None

    # ------------------------------------------------------------------ internals (lock held)

    def _already_stored(self, session: Session) -> bool:
        digest = session.provenance.bundle_sha256
        same_bundle = digest is not None and self.db.execute("SELECT 1 FROM sessions WHERE bundle_sha256 = ?", [digest]).fetchone()
        return bool(same_bundle) or self._exists(session.id)

    def _exists(self, session_id: str) -> bool:
        return self.db.execute("SELECT 1 FROM sessions WHERE id = ?", [session_id]).fetchone() is not None

    def _require(self, session_id: str) -> None:
        if not self._exists(session_id):
            raise InputError(f"no session {session_id!r} in {self.path}", hint="save the session first")

    def _arm_n(self, session_id: str, arm_id: str) -> int | None:
        row = self.db.execute("SELECT n FROM arms WHERE session_id = ? AND arm_id = ?", [session_id, arm_id]).fetchone()
        return row[0] if row is not None and isinstance(row[0], int) else None

    def _touch(self, session_id: str) -> None:
        self.db.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", [utcnow().isoformat(), session_id])

    def _upsert(self, table: str, row: dict[str, Any], key: tuple[str, ...]) -> None:
        self._upsert_many(table, [row], key)

    def _upsert_many(self, table: str, table_rows: Iterable[dict[str, Any]], key: tuple[str, ...]) -> None:
        """INSERT ... ON CONFLICT DO UPDATE, one executemany for rows of the same columns: it keeps the
        rowid (hence the insertion order we list by), and asks nothing of the schema per row as
        sqlite-utils' upsert did (most of a 100,000-arm import). Table and column names are ours."""
        table_rows = iter(table_rows)
        first = next(table_rows, None)
        if first is None:
            return
        columns = list(first)
        updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in key)
        sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))}) ON CONFLICT ({', '.join(key)}) DO " + (
            f"UPDATE SET {updates}" if updates else "NOTHING"
        )
        self.db.conn.executemany(sql, ([row[c] for c in columns] for row in itertools.chain([first], table_rows)))

    def _with_verdict_mark(self, row: dict[str, Any], computed_here: bool) -> dict[str, Any]:
        """The session row with its verdict's mark: this code's for a verdict computed here; kept as
        stored while the verdict is the stored one (a view saving notes); dropped for any other."""
        if computed_here and row["recommendation_json"] is not None:
            return {**row, "verdict_computed_by": decision_code_version()}
        stored = self.db.execute("SELECT recommendation_json FROM sessions WHERE id = ?", [row["id"]]).fetchone()
        return row if stored is not None and stored[0] == row["recommendation_json"] else {**row, "verdict_computed_by": None}

    def _write_result(self, session_id: str, result: ArmResult) -> None:
        self._upsert("arm_results", rows.result_row(session_id, result), ("session_id", "arm_id"))
        self.db.execute("DELETE FROM position_counts WHERE session_id = ? AND arm_id = ?", [session_id, result.arm_id])
        for row in rows.position_rows(session_id, result):
            self._upsert("position_counts", row, ("session_id", "arm_id", "position"))
        self.db.execute("DELETE FROM gpu_samples WHERE session_id = ? AND arm_id = ?", [session_id, result.arm_id])
        for row in rows.gpu_sample_rows(session_id, result):
            self._upsert("gpu_samples", row, ("session_id", "arm_id", "gpu", "t"))

    def _query(self, sql: str, params: list[Any]) -> list[dict[str, Any]]:
        return list(self.db.query(sql, params))

    def _load(self, session_id: str, *, with_samples: bool = True) -> Session:
        try:
            with _collector_paused():
                return self._load_unchecked(session_id, with_samples=with_samples)
        except (ValidationError, ValueError, TypeError) as exc:
            if isinstance(exc, InputError):
                raise
            detail = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            raise StoreError(
                f"session {session_id} in {self.path} cannot be read ({' '.join(detail.split())[:120]})",
                hint=f"delete it with `specadvisor sessions delete {session_id[:8]}`",
            ) from exc

    def _load_unchecked(self, session_id: str, *, with_samples: bool) -> Session:
        found = self._query("SELECT * FROM sessions WHERE id = ?", [session_id])
        if not found:
            raise InputError(f"no session {session_id!r} in {self.path}", hint="see `specadvisor sessions list` for the ids")
        arms = self._load_arms(session_id)
        readings: dict[str, list[str]] = {}
        if with_samples:
            for r in self._query("SELECT arm_id, sample_json FROM gpu_samples WHERE session_id = ? ORDER BY t, gpu", [session_id]):
                readings.setdefault(r["arm_id"], []).append(r["sample_json"])
        result_rows = self.db.execute("SELECT arm_id, result_json FROM arm_results WHERE session_id = ? ORDER BY rowid", [session_id]).fetchall()
        results = rows.results_from_rows(result_rows, readings)
        samples = []
        if with_samples:
            samples = [
                MetricsSample.model_validate(json.loads(r["sample_json"]))
                for r in self._query("SELECT sample_json FROM samples WHERE session_id = ? ORDER BY rowid", [session_id])
            ]
        return rows.session_from_rows(_current_verdict(found[0]), arms, results, samples)

    def _load_arms(self, session_id: str) -> list[Arm]:
        """The session's arms in order, validated as one JSON array in one call: an imported bundle may
        hold 100,000, and a json.loads plus a model_validate per arm took most of a load's time."""
        text = self.db.execute(
            "SELECT '[' || coalesce(group_concat(arm_json, ','), '') || ']' FROM (SELECT arm_json FROM arms WHERE session_id = ? ORDER BY position, rowid)",
            [session_id],
        ).fetchone()[0]
        return _ARM_LIST.validate_json(text)


# Each session with the arms (in order) and results its summary's best arm reads (summary.best_arm),
# in one query: none for an undecided verdict; the baselines and the recommended arm for a verdict that
# names an arm of the session with its speedup, or says not to speculate; every measured arm otherwise
# (no usable stored verdict: the best arm is then the fastest by speedup, over the session's noise).
# Reading every measured arm of every session made listing one fully measured 100,000-arm session
# take 11 s and 1.3 GB for a session whose verdict was stored. No samples, advice or settings; an arm
# never run cannot be the best one. tests/store/test_store_sessions.py holds the listing to
# summarize() of the whole session for each kind of verdict. The verdict is read once per session
# (MATERIALIZED): inlined, SQLite parsed a stored verdict (megabytes over 100,000 arms) once per arm.
_SUMMARY_SQL = """
WITH fresh AS MATERIALIZED (
  SELECT id, name, created_at, updated_at, status, model, drafter, workload, temperature, concurrency, vllm_version,
         hardware_json, provenance_json, settings_json,
         CASE WHEN verdict_computed_by IS NULL OR verdict_computed_by = ? THEN recommendation_json END AS recommendation_json
    FROM sessions
),
s AS MATERIALIZED (
  SELECT *,
         CASE
           WHEN pick_set IS NULL THEN 'all'
           WHEN json_extract(recommendation_json, '$.decision') = 'undecided' THEN 'none'
           WHEN pick_held AND json_extract(recommendation_json, '$.speedup') IS NOT NULL THEN 'pick'
           WHEN NOT pick_held AND json_extract(recommendation_json, '$.do_not_speculate') THEN 'pick'
           ELSE 'all'
         END AS reads
    FROM (SELECT fresh.*, CASE WHEN json_valid(recommendation_json) THEN 1 END AS pick_set,
                 CASE WHEN json_valid(recommendation_json) THEN json_extract(recommendation_json, '$.arm_id') END AS pick,
                 EXISTS (SELECT 1 FROM arms WHERE arms.session_id = fresh.id
                           AND arms.arm_id = CASE WHEN json_valid(recommendation_json) THEN json_extract(recommendation_json, '$.arm_id') END) AS pick_held
            FROM fresh)
)
SELECT s.id, s.name, s.created_at, s.updated_at, s.status, s.model, s.drafter, s.workload, s.temperature,
       s.concurrency, s.vllm_version, s.hardware_json, s.recommendation_json, s.provenance_json, s.settings_json,
       (SELECT count(*) FROM arms WHERE session_id = s.id) AS arm_count,
       CASE WHEN s.reads = 'none' THEN '[]' ELSE
       (SELECT json_group_array(json_object('arm', a.arm_json, 'result', r.result_json))
          FROM (SELECT * FROM arms WHERE session_id = s.id ORDER BY position, rowid) AS a
          LEFT JOIN arm_results AS r ON r.session_id = a.session_id AND r.arm_id = a.arm_id
         WHERE (a.method IS NULL AND CASE WHEN json_valid(a.arm_json) THEN json_extract(a.arm_json, '$.speculative_config') IS NULL ELSE 1 END)
            OR a.arm_id = s.pick
            OR (s.reads = 'all' AND r.arm_id IS NOT NULL))
       END AS arms
  FROM s
"""


def _current_verdict(row: dict[str, Any]) -> dict[str, Any]:
    """The session row, its verdict left out when specadvisor computed it with other decision code
    than this build's (store.verdicts): the views then compute it again, as for a session without one."""
    mark = row.get("verdict_computed_by")
    return row if mark is None or mark == decision_code_version() else {**row, "recommendation_json": None}


def _summary_session(row: dict[str, Any]) -> Session:
    """The parts of a session that summarize() reads, validated as fully as a loaded session's."""
    pairs = json.loads(row["arms"])
    return Session.model_validate(
        {
            **{k: row[k] for k in ("id", "name", "created_at", "updated_at", "status", "model", "drafter", "workload", "concurrency", "vllm_version")},
            "hardware": rows.load(row["hardware_json"]),
            "recommendation": rows.load(row["recommendation_json"]),
            "provenance": rows.load(row["provenance_json"]),
            "settings": rows.load(row["settings_json"]) or {},
            "arms": _ARM_LIST.validate_json("[" + ",".join(p["arm"] for p in pairs) + "]"),
            "results": [rows.result_from_row(p["result"]) for p in pairs if p["result"] is not None],
        }
    )


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector paused while a session's models are built, and what they built moved
    out of its reach (gc.freeze) before it resumes: its passes over the millions of objects of a
    100,000-result session took three quarters of loading one (7 s of 9), and resumed on a young
    generation holding them all it took 1.7 s more. The models hold no reference cycles: reference
    counting still frees them when the session is dropped."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


def _create_private(path: Path) -> None:
    """A new database only its owner can read (0600; SQLite gives its -wal and -shm files the same
    mode) in folders only its owner can list (0700): it holds endpoints, prompts and server logs.
    Folders and files that already exist are the user's and keep their modes."""
    make_private_dirs(path.parent)
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        os.close(fd)


def _open_read_only(path: Path, error: StoreError) -> Database:
    """A database this process cannot write (read-only file or folder) can still be listed and shown,
    as long as its schema is current; a write then fails as `cannot be written`. `immutable=1` lets
    SQLite read a WAL database without creating its -shm file."""
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True, check_same_thread=False)
    except sqlite3.Error:
        raise error from None
    db = Database(conn)
    try:
        _check_schema(path, db)
        current = [m.name for m in migrations.applied(db)] == list(known_migration_names())
    except (sqlite3.Error, StoreError):
        conn.close()
        raise error from None
    if not current:
        conn.close()
        raise error
    return db


def _aware(moment: datetime) -> datetime:
    """Naive datetimes (from callers that forgot a timezone) are taken as UTC so sorting never fails."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _unreadable_summary(session_id: str, created_at: object) -> SessionSummary:
    """A listing row for a session whose stored data no longer validates, so it can still be deleted."""
    try:
        created = datetime.fromisoformat(str(created_at))
    except ValueError:
        created = datetime.fromtimestamp(0, UTC)
    return SessionSummary(id=session_id, created_at=created, status="unreadable")


def _require_finite_times(samples: list[MetricsSample]) -> None:
    """A sample's time is part of its key; NaN would become NULL in SQLite and break the row."""
    for sample in samples:
        if not math.isfinite(sample.t):
            raise InputError(f"metrics sample of arm {sample.arm_id!r} has time {sample.t}", hint="samples need a finite time in seconds")


def _check_schema(path: Path, db: Database) -> None:
    """Refuse files this build must not migrate: newer schemas and other programs' databases."""
    tables = set(db.table_names())  # reads the header: raises DatabaseError on a non-SQLite file
    if not tables or tables == {_MIGRATIONS_TABLE}:
        return
    if _MIGRATIONS_TABLE not in tables or "sessions" not in tables:
        raise StoreError(
            f"{path} is an SQLite database but not a specadvisor one",
            hint="pass --db with a new file name; the file was left untouched",
        )
    applied = [m.name for m in migrations.applied(db)]
    unknown = [name for name in applied if name not in known_migration_names()]
    user_version = db.execute("PRAGMA user_version").fetchone()[0]
    if unknown or user_version > len(known_migration_names()):
        schema = unknown[-1] if unknown else f"version {user_version}"
        raise StoreError(
            f"database {path} was written by a newer specadvisor (schema {schema} in set {MIGRATION_SET})",
            hint="upgrade specadvisor, or pass --db PATH to use another database; the file was left untouched",
        )
