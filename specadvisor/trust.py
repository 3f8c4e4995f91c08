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


def refuse_imported(session: Session) -> None:
    """Raise InputError (exit 2) when `session` came from a bundle: it must not be executed."""
    if is_imported(session):
        source = textsafe.line(session.provenance.imported_from or "a bundle", 80)
        raise InputError(
            f"session {session.id[:8]} was imported from {source} and is read-only evidence; it cannot be resumed",
            hint=f"start a new sweep from it on this machine's engine: specadvisor sweep --resume {session.id[:8]} --rebuild",
        )


def serve_command(session: Session, spec_config: dict[str, Any] | None) -> str:
    """The `vllm serve` line for the session's model and `spec_config`. A local session keeps the
    engine command and server arguments it was measured with; an imported one gets neither (its
    values came from someone else's file), only this machine's default `vllm serve`."""
    if is_imported(session):
        return vllm_command.serve_command(model_arg(session.model), spec_config)
    return vllm_command.serve_command(
        session.model, spec_config, extra_args=list(session.settings.server_args), engine_cmd=list(session.settings.engine_cmd) or None
    )


def recommended_command(session: Session, rec: Recommendation | None) -> str | None:
    """The command to show for a recommendation: the stored one for a local session, re-derived for
    an imported one (a bundle's `serve_command` string is never shown as something to run)."""
    if rec is None:
        return None
    if rec.serve_command and not is_imported(session):
        return rec.serve_command
    return serve_command(session, rec.speculative_config)


def model_arg(model: str) -> str:
    """A bundle's model name cannot smuggle a flag into the command (`--trust-remote-code`)."""
    return model if model and not model.startswith("-") else f"./{model}" if model else "MODEL"
