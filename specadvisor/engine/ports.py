"""Ports for launched servers: free now, and not just handed to another process on this machine.

The kernel answers "a free port" to anyone who asks, and a port stays free from the moment it is
picked until the launched server binds it. Two specadvisor processes launching at once (two sweeps,
or the test suite's two workers) can be given the same one; the server that binds second exits, and
the first one's /health may answer the other's readiness poll, so a sweep could measure a server it
did not launch. A pick is therefore reserved for a few minutes in a per-user folder (one empty file
per port, created exclusively), and a port reserved by someone else is skipped. vLLM binds its socket
early in start-up, so the reservation only has to cover the first seconds; it expires on its own, so
a killed process leaves nothing that needs cleaning.
"""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import tempfile
import time
from pathlib import Path

RESERVATION_S = 600.0
_TRIES = 64


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on right now and that no other process of this user
    picked in the last RESERVATION_S (a port from the kernel, as before, when the folder is unusable)."""
    folder = _reservations()
    port = _unbound_port()
    for _ in range(_TRIES):
        if folder is None or _reserve(folder, port):
            return port
        port = _unbound_port()
    return port  # every try was reserved: the kernel's answer, as without reservations


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _unbound_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _reserve(folder: Path, port: int) -> bool:
    """Claim `port` unless another claim on it is younger than RESERVATION_S."""
    path = folder / str(port)
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o600))
        return True
    except FileExistsError:
        pass
    except OSError:
        return True  # cannot record it: no worse than without reservations
    try:
        if time.time() - path.lstat().st_mtime < RESERVATION_S:
            return False
        os.utime(path, follow_symlinks=False)  # an expired claim: renew it as ours
        return True
    except OSError:
        return True


def _reservations() -> Path | None:
    """This user's reservation folder in the temp dir (not SPECADVISOR_HOME: every process of the user
    must see the same one), or None when it is not a private folder of this user."""
    folder = Path(tempfile.gettempdir()) / f"specadvisor-ports-{os.getuid()}"
    with contextlib.suppress(OSError):
        folder.mkdir(mode=0o700, exist_ok=True)
    try:
        info = folder.lstat()
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None  # a symlink, someone else's folder, or one others may write: do not trust it
    return folder
