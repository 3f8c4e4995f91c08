"""The trust boundary: a session imported from a bundle is read-only evidence, never a command.

A bundle is a file anyone could have written. Its engine command, server arguments, serve command
and paths are kept as a record of how it was measured (shown, compared, reported), but nothing here
runs them: resuming an imported session is refused, and every command printed for one is rebuilt
from this machine's defaults and the arm's speculative config (specadvisor.vllm_command). See
docs/security.md for the threat model.
"""

from __future__ import annotations

from typing import Any

from specadvisor import textsafe, vllm_command
from specadvisor.domain import Recommendation, Session
from specadvisor.errors import InputError


def is_imported(session: Session) -> bool:
    return session.provenance.origin == "imported"


_IMPORTED_PLACE = {
    "endpoint on this machine": "an endpoint on another machine (imported)",
    "remote endpoint": "a remote endpoint (imported)",
    "elsewhere": "elsewhere (imported)",
}


def measured_on(session: Session) -> str:
    """Where the session was measured, as this machine's reader should understand it. A bundle's
    "this machine" is the exporter's machine, never the reader's: an imported session names the
    hardware its provenance recorded, or says "another machine (imported)"."""
    place = session.provenance.measured_on
    if not is_imported(session):
        return place
    if place in _IMPORTED_PLACE:
        return _IMPORTED_PLACE[place]
    hardware = session.hardware
    observed = not hardware.hypothetical and (bool(hardware.gpus) or hardware.cpu.model not in ("", "unknown"))
    return f"another machine (imported; {hardware.gpu_label})" if place == "this machine" and observed else "another machine (imported)"


def refuse_imported(session: Session) -> None:
    """Raise InputError (exit 2) when `session` came from a bundle: it must not be executed."""
    if is_imported(session):
        source = textsafe.line(session.provenance.imported_from or "a bundle", 80)
        raise InputError(
            f"session {session.id[:8]} was imported from {source} and is read-only evidence; it cannot be resumed",
            hint=f"start a new sweep from it on this machine's engine: {resume_command(session)}",
        )


def serve_command(session: Session, spec_config: dict[str, Any] | None, *, width: int | None = None) -> str:
    """The `vllm serve` line for the session's model and `spec_config`. A local session keeps the
    engine command and server arguments it was measured with; an imported one gets neither (its
    values came from someone else's file), only this machine's default `vllm serve`."""
    if is_imported(session):
        return vllm_command.serve_command(model_arg(session.model), spec_config, width=width)
    return vllm_command.serve_command(
        session.model, spec_config, extra_args=list(session.settings.server_args), engine_cmd=list(session.settings.engine_cmd) or None, width=width
    )


def recommended_command(session: Session, rec: Recommendation | None, *, width: int | None = None) -> str | None:
    """The command to show for a recommendation, always re-derived from its speculative config (a
    stored `serve_command` string, a bundle's above all, is never shown as something to run; a local
    one was built by the same function, possibly by an older version of it)."""
    if rec is None:
        return None
    return serve_command(session, rec.speculative_config, width=width)


def resume_command(session: Session) -> str:
    """What continues this session's sweep here: `--resume`, or `--resume --rebuild` for an imported
    one (the only way it runs: as a new local session on this machine's engine)."""
    argv = ["specadvisor", "sweep", "--resume", session.id[:8]]
    return vllm_command.shell_command([*argv, "--rebuild"] if is_imported(session) else argv)


def handoff_commands(session: Session, bundle: str) -> list[str]:
    """How a plan saved here runs on another machine: export it, import it there, rebuild it there
    (an imported session is refused by plain `--resume`)."""
    sid = session.id[:8]
    return [
        vllm_command.shell_command(["specadvisor", "sessions", "export", sid, "-o", bundle]),
        vllm_command.shell_command(["specadvisor", "sessions", "import", bundle]),
        vllm_command.shell_command(["specadvisor", "sweep", "--resume", sid, "--rebuild"]),
    ]


def model_arg(model: str) -> str:
    """A bundle's model name cannot smuggle a flag into the command (`--trust-remote-code`)."""
    return model if model and not model.startswith("-") else f"./{model}" if model else "MODEL"
