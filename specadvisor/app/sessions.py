"""Use cases on stored sessions, for both front ends: open the store, list, show (with the verdict
recomputed by this version's rule), delete, export a bundle, import one, compare, resume checks.

The front ends hold the `Store` these return (its type is re-exported here for their annotations)
and render what comes back; nothing here prints. The store is imported when first used, so
`sessions list` on an empty database answers without loading it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from specadvisor.errors import InputError

if TYPE_CHECKING:
    from specadvisor.domain import Recommendation, Session
    from specadvisor.store import SessionSummary as SessionSummary
    from specadvisor.store import Store as Store
    from specadvisor.store.compare import Comparison as Comparison


def database(db: Path | None = None) -> Path:
    """The database a front end uses: `db` as given (`--db`), else the user's (SPECADVISOR_HOME moves it)."""
    from specadvisor.settings import paths

    return Path(db).expanduser() if db else paths().database


def open_store(db: Path | None = None) -> Store:
    """The store at `db` (created with its schema when new)."""
    from specadvisor.store import Store

    return Store.open(database(db))


def summaries(db: Path | None = None) -> list[SessionSummary]:
    """The stored sessions, newest first. With none (or no database, which listing never creates)
    the store is not even imported: an empty list answers at once."""
    from specadvisor.store.peek import session_count

    if session_count(database(db)) == 0:
        return []
    with open_store(db) as store:
        return store.list_sessions()


def recommendation(session: Session) -> Recommendation | None:
    """The verdict a view shows: the stored one, else computed from the measurements (none for a plan)."""
    if session.recommendation is not None:
        return session.recommendation
    from specadvisor.analysis.recommend import recommend

    return recommend(session)


def rejudge(session: Session) -> Recommendation:
    """This version's decision rule on the stored measurements (runs nothing, stores nothing)."""
    from specadvisor.analysis.rejudge import rejudge as _rejudge

    return _rejudge(session)


@dataclass
class Shown:
    """A session as `sessions show` and the Results screen read it."""

    session: Session
    stored: Recommendation | None  # the verdict as stored, before any recompute
    recomputed: bool


def show(store: Store, id_or_prefix: str, *, recompute: bool = False) -> Shown:
    """One session; with `recompute`, its verdict re-derived from the stored measurements."""
    session = store.get_session(id_or_prefix)
    stored = session.recommendation
    if recompute:
        session.recommendation = rejudge(session)
    return Shown(session, stored, recompute)


def describe(store: Store, id_or_prefix: str) -> tuple[str, str]:
    """(full id, what it holds) of a session about to be deleted; "unreadable" when it cannot be read."""
    from specadvisor.errors import StoreError

    session_id = store.resolve_id(id_or_prefix)
    try:
        session = store.get_session(session_id)
    except StoreError:
        return session_id, "unreadable"
    return session_id, f"{session.model or 'no model'}, {len(session.arms)} arms"


def delete(store: Store, session_id: str) -> None:
    store.delete_session(session_id)


def export(session: Session, path: Path, *, redact_paths: bool = False, force: bool = False) -> Path:
    """The session as a versioned bundle at `path` (secrets redacted; nothing half-written)."""
    from specadvisor.store.bundle import export_bundle

    return export_bundle(session, Path(path).expanduser(), redact_paths=redact_paths, force=force) or path


def bundle_bytes(session: Session, *, redact_paths: bool = False) -> bytes:
    """The bundle's bytes, for `-o -` (stdout): what `export` would write."""
    from specadvisor.store.bundle import bundle_bytes as as_bytes

    return as_bytes(session, redact_paths=redact_paths)


def import_into(store: Store | None, path: Path, *, db: Path | None = None) -> tuple[Session, bool]:
    """A bundle's session added as read-only evidence: (session, False) when it is already stored. The
    bundle is validated before the database is opened (`store` None: `db` is opened after), and its
    verdict computed once here, not by every view."""
    from specadvisor.analysis.recommend import recommend
    from specadvisor.store.bundle import import_bundle, parse_bundle

    parsed = parse_bundle(Path(path).expanduser())
    if store is not None:
        return import_bundle(store, parsed, judge=recommend)
    with open_store(db) as opened:
        return import_bundle(opened, parsed, judge=recommend)


def compare(store: Store, ids: list[str]) -> Comparison:
    """Two or more sessions side by side per arm, and what differs between them."""
    from specadvisor.store.compare import compare_sessions

    if len(ids) < 2:
        raise InputError("compare needs at least two sessions", hint="e.g. specadvisor sessions compare 1a2b 3c4d")
    full = [store.resolve_id(i) for i in ids]
    if len(set(full)) != len(full):
        raise InputError("the same session was given twice", hint="give different session ids")
    return compare_sessions([store.get_session(i) for i in full])


def compare_loaded(sessions: list[Session]) -> Comparison:
    """The comparison of sessions already read (the TUI's marked pair)."""
    from specadvisor.store.compare import compare_sessions

    return compare_sessions(sessions)


def is_imported(session: Session) -> bool:
    """Whether the session came from a bundle (read-only evidence: shown, compared, never run)."""
    from specadvisor.trust import is_imported as imported

    return imported(session)


def refuse_imported(session: Session) -> None:
    """InputError (naming the rebuild) when the session came from a bundle: it is never run as it came."""
    from specadvisor.trust import refuse_imported as refuse

    refuse(session)
