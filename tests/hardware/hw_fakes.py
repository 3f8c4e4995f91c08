"""Fakes at the process boundary for the hardware probes: a scripted command runner."""

from __future__ import annotations

from pathlib import Path

from specadvisor.hardware.commands import CommandResult

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hardware"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


class ScriptedRunner:
    """Answers each command by its executable name; records every call."""

    def __init__(self, answers: dict[str, CommandResult | list[CommandResult]]):
        self.answers = {k: (v if isinstance(v, list) else [v]) for k, v in answers.items()}
        self.calls: list[list[str]] = []

    def __call__(self, cmd: list[str], timeout_s: float) -> CommandResult:
        self.calls.append(cmd)
        queue = self.answers.get(Path(cmd[0]).name)
        if not queue:
            return CommandResult(None, error=f"{cmd[0]}: not installed")
        return queue.pop(0) if len(queue) > 1 else queue[0]


def ok(stdout: str) -> CommandResult:
    return CommandResult(0, stdout, "")
