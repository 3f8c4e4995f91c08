"""The workers' machine lock: an exclusive test waits for the shared ones and then runs alone.
Ordered by events and by polling the lock itself, never by sleeping, so a loaded machine cannot
change the outcome."""

from __future__ import annotations

import fcntl
import threading
import time

from machine_share import MachineShare


def _hold(folder, exclusive: bool, log: list[str], name: str, release: threading.Event) -> threading.Thread:
    def run() -> None:
        with MachineShare(folder, exclusive=exclusive):
            log.append(f"{name} in")
            release.wait(10)
            log.append(f"{name} out")

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def _until(condition, what: str) -> None:
    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.005)


def _turnstile_taken(folder) -> bool:
    with open(folder / "turnstile", "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        return False


def test_shared_holders_overlap_and_an_exclusive_one_runs_alone(tmp_path):
    log: list[str] = []
    shared_done, exclusive_done, late_done = threading.Event(), threading.Event(), threading.Event()
    late_done.set()
    first = _hold(tmp_path, False, log, "a", shared_done)
    second = _hold(tmp_path, False, log, "b", shared_done)
    _until(lambda: len(log) == 2, "two shared holders at once")
    alone = _hold(tmp_path, True, log, "x", exclusive_done)
    _until(lambda: _turnstile_taken(tmp_path), "the exclusive holder at the turnstile")
    late = _hold(tmp_path, False, log, "c", late_done)  # arrives while the exclusive one waits: must go after it
    assert "x in" not in log  # the shared holders are still in
    shared_done.set()
    _until(lambda: "x in" in log, "the exclusive holder")
    assert "c in" not in log  # the turnstile keeps the late shared holder out
    exclusive_done.set()
    for thread in (first, second, alone, late):
        thread.join(10)
    assert log.index("x in") > max(log.index("a out"), log.index("b out"))
    assert log.index("c in") > log.index("x out")
