"""Shared by the engine tests (imported by name: the tests folders are not packages)."""

from __future__ import annotations

import time
from pathlib import Path

FAKE_VLLM = Path(__file__).with_name("fake_vllm.py")
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "engine"


def alive(pid: int) -> bool:
    """True while the process exists and is not a zombie (an unreaped zombie holds nothing)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


def wait_dead(pid: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return not alive(pid)
