"""One error type the CLI and the TUI turn into a one-line message naming the problem and the fix."""

from __future__ import annotations


class SpecAdvisorError(Exception):
    """A failure the user can act on. `str(err)` is the one line shown; `exit_code` is the CLI's."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None, exit_code: int | None = None):
        self.message = message
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code
        super().__init__(self.one_line())

    def one_line(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class InputError(SpecAdvisorError):
    """Bad input from the user: a malformed file, an unknown option value. Exit code 2."""

    exit_code = 2


class StoreError(SpecAdvisorError):
    """The database cannot be used as it is (corrupt, locked, newer schema)."""

    exit_code = 3


class EngineError(SpecAdvisorError):
    """The vLLM server could not be launched, reached or kept alive."""

    exit_code = 4
