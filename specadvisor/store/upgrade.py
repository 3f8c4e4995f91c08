"""Sessions recorded before provenance existed: what they never recorded says "unknown", not blank.

Applied to old bundles on import (specadvisor.store.bundle); migration m004 makes the same change
to old databases in SQL, and a test holds the two to the same result.
"""

from __future__ import annotations

from dataclasses import replace

from specadvisor.domain import Session

UNKNOWN = "unknown"


def upgrade_session(session: Session) -> Session:
    """The session with its unrecorded facts marked "unknown" and its start/end times taken from its
    arms; a session that has provenance is returned unchanged."""
    prov = session.provenance
    if prov.entry_point:
        return session
    session = session.model_copy(deep=True)
    session.provenance.entry_point = UNKNOWN
    hw = session.hardware
    if not hw.os and not hw.hypothetical:
        python = hw.python or UNKNOWN
        unknown = sorted(set(hw.unknown) | {"gpus", "cpu", "ram", "os"} | ({"python"} if python == UNKNOWN else set()))
        session.hardware = replace(hw, os=UNKNOWN, python=python, unknown=unknown)
    started = [r.started_at for r in session.results if r.started_at]
    finished = [r.finished_at for r in session.results if r.finished_at]
    session.provenance.started_at = session.provenance.started_at or (min(started) if started else None)
    session.provenance.finished_at = session.provenance.finished_at or (max(finished) if finished and session.status == "finished" else None)
    return session
