"""Run an external probe command so that it can never hang or raise.

Every outcome (missing tool, timeout, permission error, non-zero exit) comes back as data, and the
runner is a parameter of every probe so that tests replace the process boundary, nothing else.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class CommandResult:
    returncode: int | None
    stdout: str = ""
    stderr: str = ""
    error: str | None = None  # why the command produced no usable result, in a few words

    @property
    def ok(self) -> bool:
        return self.error is None and self.returncode == 0

    def reason(self) -> str:
        """One line saying why the command failed, for a ProbeNote."""
        if self.error:
            return self.error
        last = (self.stderr or self.stdout).strip().splitlines()
        return f"exit {self.returncode}" + (f": {last[-1][:200]}" if last else "")


Runner = Callable[[list[str], float], CommandResult]


def run_command(cmd: list[str], timeout_s: float) -> CommandResult:
    """Run `cmd` with no stdin and a hard timeout; never raises."""
    exe = cmd[0]
    if os.sep not in exe and shutil.which(exe) is None:
        return CommandResult(None, error=f"{exe}: not installed")
    try:
        proc = subprocess.run(
            cmd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return CommandResult(None, error=f"{exe}: timed out after {timeout_s:g}s")
    except PermissionError:
        return CommandResult(None, error=f"{exe}: permission denied")
    except FileNotFoundError:
        return CommandResult(None, error=f"{exe}: not found")
    except OSError as exc:
        return CommandResult(None, error=f"{exe}: {exc.strerror or exc}")
    return CommandResult(proc.returncode, proc.stdout, proc.stderr)
