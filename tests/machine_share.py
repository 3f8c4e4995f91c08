"""The lock that lets two pytest-xdist workers share one machine (tests/conftest.py takes it around
every test): any number of shared holders, or one exclusive holder with nobody else."""

from __future__ import annotations

import fcntl
from pathlib import Path


class MachineShare:
    """Shared (any test) or exclusive (a test marked `exclusive`) use of the machine by one worker.
    The turnstile gives an exclusive test priority: it is held while waiting for the shared users to
    finish, so no new shared test starts meanwhile."""

    def __init__(self, folder: Path, *, exclusive: bool):
        folder.mkdir(mode=0o700, exist_ok=True)
        self.turnstile = open(folder / "turnstile", "a+")  # noqa: SIM115 - closed in __exit__
        self.share = open(folder / "share", "a+")  # noqa: SIM115
        self.exclusive = exclusive

    def __enter__(self) -> None:
        fcntl.flock(self.turnstile, fcntl.LOCK_EX)
        fcntl.flock(self.share, fcntl.LOCK_EX if self.exclusive else fcntl.LOCK_SH)
        if not self.exclusive:
            fcntl.flock(self.turnstile, fcntl.LOCK_UN)

    def __exit__(self, *exc: object) -> None:
        self.share.close()  # closing releases the locks
        self.turnstile.close()
