"""Make sure no vLLM server outlives specadvisor.

Each server runs in its own process group (it spawns engine-core workers); the registry holds the
live groups so that quitting the TUI, atexit and SIGTERM/SIGINT/SIGHUP can stop them all, from any
thread, without an event loop. PR_SET_PDEATHSIG covers the one case no handler sees: specadvisor
being SIGKILLed. (Linux sends it when the *thread* that forked the child exits, so servers must be
started from a thread that lives as long as they do: the runner's event-loop thread does.)
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

_PR_SET_PDEATHSIG = 1
_HANDLED_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

_lock = threading.Lock()
_live_groups: set[int] = set()
_atexit_installed = False
_previous_handlers: dict[int, object] = {}


def _load_prctl() -> Callable[..., Any] | None:
    """Resolved in the parent: between fork and exec the child must not dlopen or take locks."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_prctl = _load_prctl()


def child_preexec_for_this_process() -> Callable[[], None]:
    """The preexec_fn for a server child: between fork and exec, ask the kernel to SIGTERM the
    child when we die, and exit at once if we already died (the parent pid is taken before fork)."""
    parent = os.getpid()

    def preexec() -> None:
        if _prctl is None:
            return
        _prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return preexec


def register(pgid: int) -> None:
    with _lock:
        _live_groups.add(pgid)
    _install_handlers()


def unregister(pgid: int) -> None:
    with _lock:
        _live_groups.discard(pgid)


def live_groups() -> set[int]:
    with _lock:
        return set(_live_groups)


def group_alive(pgid: int) -> bool:
    """Whether any non-zombie process is still in the group (zombies hold no resources)."""
    if not os.path.isdir("/proc"):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read().decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
            return True
    return False


def signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def kill_groups(groups: set[int], grace_s: float) -> None:
    """SIGTERM every group, wait up to grace_s for them to go, then SIGKILL what is left."""
    for pgid in groups:
        signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    remaining = set(groups)
    while remaining and time.monotonic() < deadline:
        remaining = {pgid for pgid in remaining if group_alive(pgid)}
        if remaining:
            time.sleep(0.1)
    for pgid in remaining:
        signal_group(pgid, signal.SIGKILL)


def stop_all_servers(grace_s: float = 10) -> None:
    """Stop every server this process started and has not stopped yet. Sync and thread-safe."""
    with _lock:
        groups = set(_live_groups)
        _live_groups.clear()
    if groups:
        kill_groups(groups, grace_s)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    stop_all_servers(grace_s=5)
    previous = _previous_handlers.get(signum)
    if callable(previous):
        previous(signum, frame)
    elif previous == signal.SIG_IGN:
        return
    else:  # SIG_DFL: die of the signal as we would have without our handler
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)


def _install_handlers() -> None:
    global _atexit_installed
    with _lock:
        first = not _atexit_installed
        _atexit_installed = True
    if first:
        atexit.register(stop_all_servers)
    install_signal_handlers()


def install_signal_handlers() -> None:
    """Chain our handler in front of the current ones. Python allows this from the main thread
    only; a program that starts servers from a worker thread calls it once at start-up."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in _HANDLED_SIGNALS:
        previous = signal.getsignal(sig)
        if previous is _on_signal:
            continue
        _previous_handlers[sig] = previous
        signal.signal(sig, _on_signal)
