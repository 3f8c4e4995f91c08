"""Session bundles: one versioned JSON file carrying a whole Session between machines.

Export redacts secrets and writes atomically. Import treats the file as hostile data: it is read
once, fully validated (format marker, schema version, limits, strict types) before anything is
written, and never executed or followed. Importing the same bundle twice is a no-op.
"""

from __future__ import annotations

import hashlib
import json
import math
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from specadvisor import __version__, physics
from specadvisor.domain import Recommendation, Session, utcnow
from specadvisor.errors import InputError
from specadvisor.fileio import write_atomic
from specadvisor.store.bundle_limits import check_session
from specadvisor.store.redact import redact_session
from specadvisor.store.safe_json import MAX_FILE_BYTES, parse_untrusted_json, read_regular_file
from specadvisor.store.store import Store
from specadvisor.store.upgrade import upgrade_session

BUNDLE_FORMAT = "specadvisor-session-bundle"
# 1.1: provenance (entry point, hashes, times), serve argv and GPU telemetry per arm; 1.2: per-request
# records per run, the verdict (decision, confidence, looks); 1.0 and 1.1 still import (unpaired verdicts)
BUNDLE_SCHEMA = "1.2"
_TOP_LEVEL_KEYS = {"format", "bundle_schema", "specadvisor_version", "exported_at", "redacted", "session"}
_REQUIRED_SESSION_KEYS = ("id", "created_at")
_NOT_A_BUNDLE = "pass a bundle written by `specadvisor sessions export`"


def bundle_document(session: Session, *, redact_paths: bool = False) -> dict[str, Any]:
    """The bundle as a JSON-ready dict (secrets always redacted)."""
    clean = _without_non_finite(redact_session(session, redact_paths=redact_paths))
    return {
        "format": BUNDLE_FORMAT,
        "bundle_schema": BUNDLE_SCHEMA,
        "specadvisor_version": __version__,
        "exported_at": utcnow().isoformat(),
        "redacted": {"secrets": True, "home_paths": redact_paths},
        "session": clean.model_dump(mode="json"),
    }


def _without_non_finite(session: Session) -> Session:
    """Bundles carry no NaN/Infinity (import rejects them): optional figures become null; a required
    one makes the export fail naming the field, rather than writing a bundle nobody can import."""

    def finite(value: Any) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if isinstance(value, list):
            return [finite(v) for v in value]
        if isinstance(value, dict):
            return {k: finite(v) for k, v in value.items()}
        return value

    data = session.model_dump(mode="json")
    cleaned = finite(data)
    if cleaned == data:
        return session
    try:
        return Session.model_validate(cleaned)
    except ValidationError as exc:
        where = ".".join(str(p) for p in exc.errors()[0]["loc"])
        raise InputError(
            f"session {session.id} holds a non-finite number (NaN or infinity) at {where}",
            hint="re-run that arm, or delete the session; such a figure cannot be shared",
        ) from None


def bundle_bytes(session: Session, *, redact_paths: bool = False) -> bytes:
    """The bundle file's bytes: indented, or compact when indenting would pass the import limit (a
    bundle that imported must export again: a 12,000-arm one grew past 20 MB by its indentation
    alone); InputError naming what is large when even the compact file would be over it."""
    document = bundle_document(session, redact_paths=redact_paths)
    data = json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False).encode("utf-8") + b"\n"
    if len(data) > MAX_FILE_BYTES:
        data = json.dumps(document, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8") + b"\n"
    if len(data) > MAX_FILE_BYTES:
        held = f"{len(session.arms)} arms, {len(session.results)} results, {len(session.samples)} live samples"
        raise InputError(
            f"session {session.id} makes a {len(data)}-byte bundle ({held}), over the {MAX_FILE_BYTES}-byte import limit",
            hint="a bundle this large could not be imported anywhere; compare it here with `sessions compare`, or share its report",
        )
    return data


def export_bundle(session: Session, path: Path, *, redact_paths: bool = False, force: bool = False) -> Path:
    """Write the bundle to `path` via a temporary file and a rename, so no half-written file remains."""
    return write_atomic(path, bundle_bytes(session, redact_paths=redact_paths), force=force)


def read_bundle(path: Path) -> Session:
    """Validate the bundle at `path` completely and return its Session (InputError, exit 2, if not)."""
    path = Path(path).expanduser()
    return _parse(read_regular_file(path), str(path))[0]


class ParsedBundle(NamedTuple):
    """A bundle read and fully validated, not yet written anywhere."""

    path: Path
    session: Session
    exported_by: str
    digest: str


def parse_bundle(path: Path) -> ParsedBundle:
    """Read and validate the bundle at `path` (InputError, exit 2, if it is not a valid one)."""
    path = Path(path).expanduser()
    data = read_regular_file(path)
    session, exported_by = _parse(data, str(path))
    return ParsedBundle(path, session, exported_by, hashlib.sha256(data).hexdigest())


def import_bundle(store: Store, path: Path | ParsedBundle, *, judge: Callable[[Session], Recommendation] | None = None) -> tuple[Session, bool]:
    """Add the bundle's session to `store`; (session, False) when it is already there. Pass a
    ParsedBundle to validate before opening the database without reading the file twice.

    A measured session that comes without a verdict gets `judge`'s (the verdict every view would
    otherwise compute on each opening: about 4 s for 100,000 measured arms), stored as computed here by
    this decision code (store.verdicts): judging runs nothing, and a build whose decision code
    differs computes it again. A bundle's own verdict is kept as it came, as before."""
    path, session, exported_by, digest = path if isinstance(path, ParsedBundle) else parse_bundle(path)
    existing = store.find_by_bundle(digest)
    if existing is not None:
        return existing, False
    if store.has_session(session.id):
        return store.get_session(session.id), False
    # Keep where and how it was measured; add where it came from.
    provenance = session.provenance.model_copy(
        update={
            "origin": "imported",
            "specadvisor_version": session.provenance.specadvisor_version or exported_by,
            "imported_from": path.name,
            "imported_at": utcnow(),
            "bundle_sha256": digest,
        }
    )
    imported = session.model_copy(update={"provenance": provenance})
    n_of = {arm.id: arm.n for arm in imported.arms}
    refused = [r.arm_id for r in imported.results if physics.enforce(r, n_of.get(r.arm_id)) is not None]
    if refused and imported.recommendation is not None and judge is not None:
        imported.recommendation = None  # it rested on figures no server could produce: judged here instead
    judged = judge is not None and imported.recommendation is None and bool(imported.results)
    if judged and judge is not None:
        imported.recommendation = judge(imported)
    if not store.save_session(imported, only_if_new=True, verdict_computed_here=judged):  # another import won the race
        return store.find_by_bundle(digest) or store.get_session(session.id), False
    return imported, True


def _parse(data: bytes, name: str) -> tuple[Session, str]:
    """The bundle's session and the specadvisor version that exported it."""
    document = parse_untrusted_json(data, name)
    if not isinstance(document, dict):
        raise InputError(f"{name}: top level is not a JSON object", hint=_NOT_A_BUNDLE)
    if document.get("format") != BUNDLE_FORMAT:
        raise InputError(f"{name}: not a specadvisor session bundle (format marker missing or wrong)", hint=_NOT_A_BUNDLE)
    major, minor = _schema_version(document.get("bundle_schema"), name)
    ours_major, ours_minor = (int(p) for p in BUNDLE_SCHEMA.split("."))
    if major > ours_major:
        raise InputError(
            f"{name}: bundle schema {major}.{minor} is newer than this specadvisor reads ({BUNDLE_SCHEMA})",
            hint="upgrade specadvisor to import it",
        )
    unknown = set(document) - _TOP_LEVEL_KEYS
    if unknown and (major, minor) <= (ours_major, ours_minor):
        raise InputError(f"{name}: unexpected top-level keys {sorted(unknown)[:5]}", hint=_NOT_A_BUNDLE)
    raw_session = document.get("session")
    if not isinstance(raw_session, dict):
        raise InputError(f"{name}: the bundle holds no session object", hint=_NOT_A_BUNDLE)
    missing = [key for key in _REQUIRED_SESSION_KEYS if key not in raw_session]
    if missing:
        # Without them the model would invent a fresh id and date, and every import would duplicate.
        raise InputError(f"{name}: the session lacks {', '.join(missing)}", hint=_NOT_A_BUNDLE)
    try:
        session = Session.model_validate_json(json.dumps(_settings_hold_temperature(raw_session)), strict=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "session"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise InputError(f"{name}: invalid session at {where}: {first['msg']}{more}", hint=_NOT_A_BUNDLE) from None
    try:
        uuid.UUID(session.id)
    except ValueError:
        raise InputError(f"{name}: session id {session.id[:40]!r} is not a UUID", hint=_NOT_A_BUNDLE) from None
    if (major, minor) < (1, 1):  # written before provenance: what it never recorded says "unknown"
        session = upgrade_session(session)
    check_session(session, name)
    exported_by = document.get("specadvisor_version")
    return session, exported_by if isinstance(exported_by, str) else ""


def _schema_version(value: object, name: str) -> tuple[int, int]:
    parts = value.split(".") if isinstance(value, str) else []
    if len(parts) != 2 or not all(p.isdigit() and len(p) <= 4 for p in parts):
        raise InputError(f"{name}: bundle_schema {str(value)[:20]!r} is not MAJOR.MINOR", hint=_NOT_A_BUNDLE)
    return int(parts[0]), int(parts[1])


def _settings_hold_temperature(raw: dict[str, Any]) -> dict[str, Any]:
    """Bundles written before the temperature had one home carry it beside `settings` too: it moves
    into the settings when they lack it (the settings' own value wins)."""
    if "temperature" not in raw:
        return raw
    raw = dict(raw)
    temperature = raw.pop("temperature")
    settings = raw.get("settings")
    if settings is None:
        raw["settings"] = {"temperature": temperature}
    elif isinstance(settings, dict) and "temperature" not in settings:
        raw["settings"] = {**settings, "temperature": temperature}
    return raw
