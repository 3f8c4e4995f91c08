"""Which stored sessions count as measured on this machine: the one answer the CLI's `advise` and
the TUI's advice (and its plan's time history) share, so the two cannot disagree.

A session counts when its fingerprint is this hardware's and it was measured here: an imported
bundle never does, whatever fingerprint it carries (a copied fingerprint once re-ranked methods
as "Measured on this machine: 9.00x"), nor arms imported from `vllm bench` files or a remote
endpoint, which were measured elsewhere.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from specadvisor.domain import HardwareProfile, Session

_ELSEWHERE = ("elsewhere", "remote endpoint")


def sessions_measured_here(db_path: Path | None, model_id: str, hardware: HardwareProfile) -> list[Session]:
    """Sessions measured on this machine for this model, newest first; none when there is no
    database yet (looking never creates one)."""
    from specadvisor.settings import paths
    from specadvisor.store import Store

    path = Path(db_path or paths().database).expanduser()
    if not path.exists():
        return []
    with Store.open(path) as store:
        return [s for s in store.find_sessions(model=model_id, hardware_fingerprint=hardware.fingerprint()) if measured_here(s)]


def measured_here(session: Session) -> bool:
    """Whether `session` was measured on this machine (not imported, not measured elsewhere)."""
    from specadvisor.trust import is_imported

    return not is_imported(session) and session.provenance.measured_on not in _ELSEWHERE
