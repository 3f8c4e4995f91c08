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

# What a command printed for an imported session serves when the user named no model: a bundle's
# model is a Hub id or a path its author chose, never something this machine serves unasked.
MODEL_PLACEHOLDER = "MODEL"


def is_imported(session: Session) -> bool:
    return session.provenance.origin == "imported"


NOT_RECORDED = "not recorded"


def recorded(session: Session, name: str, shown: str) -> str:
    """`shown` (a setting as a view prints it), or "not recorded" where the session's source did not
    record that setting (an import-bench file holds no prompt set or temperature): never a default
    passed off as a measurement's condition."""
    return NOT_RECORDED if name in session.provenance.unrecorded else shown


def command_model(session: Session, model: str | None = None) -> str:
    """The model a command printed for `session` serves: a local session's own (you measured it); for
    an imported one the user's `model`, else MODEL_PLACEHOLDER (the bundle's model is never printed
    as something to run)."""
    if not is_imported(session):
        return session.model
    return model_arg(model) if model else MODEL_PLACEHOLDER


def placeholder_note(session: Session, model: str | None = None) -> str | None:
    """One line saying what MODEL stands for, where a printed command names it (None elsewhere)."""
    if not is_imported(session) or model:
        return None
    named = textsafe.line(session.model or "no model", 80)
    return (
        f"replace {MODEL_PLACEHOLDER} with the model to serve here: a command printed for an imported session never names "
        f"the bundle's model (it says '{named}'; type it yourself if you trust it)"
    )


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
            hint=f"start a new sweep from it, serving the model you name, on this machine's engine: {resume_command(session)}",
        )


def serve_command(session: Session, spec_config: dict[str, Any] | None, *, width: int | None = None, model: str | None = None) -> str:
    """The `vllm serve` line for the session's model and `spec_config`. A local session keeps the
    engine command and server arguments it was measured with; an imported one gets neither (its
    values came from someone else's file), only this machine's default `vllm serve` of `model` (the
    user's) or the placeholder MODEL (`command_model`)."""
    if is_imported(session):
        return vllm_command.serve_command(command_model(session, model), spec_config, width=width)
    return vllm_command.serve_command(
        session.model, spec_config, extra_args=list(session.settings.server_args), engine_cmd=list(session.settings.engine_cmd) or None, width=width
    )


def recommended_command(session: Session, rec: Recommendation | None, *, width: int | None = None, model: str | None = None) -> str | None:
    """The command to show for a recommendation, always re-derived from its speculative config (a
    stored `serve_command` string, a bundle's above all, is never shown as something to run; a local
    one was built by the same function, possibly by an older version of it)."""
    if rec is None:
        return None
    return serve_command(session, rec.speculative_config, width=width, model=model)


def resume_command(session: Session) -> str:
    """What continues this session's sweep here: `--resume`, or `--resume --rebuild --model MODEL` for
    an imported one (the only way it runs: as a new local session on this machine's engine, serving
    the model the user names)."""
    argv = ["specadvisor", "sweep", "--resume", session.id[:8]]
    return vllm_command.shell_command([*argv, "--rebuild", "--model", MODEL_PLACEHOLDER] if is_imported(session) else argv)


def handoff_commands(session: Session, bundle: str) -> list[str]:
    """How a plan saved here runs on another machine: export it, import it there, rebuild it there
    (an imported session is refused by plain `--resume`, and a rebuild serves only the model it is
    given: this plan's own, named here by its author)."""
    sid = session.id[:8]
    return [
        vllm_command.shell_command(["specadvisor", "sessions", "export", sid, "-o", bundle]),
        vllm_command.shell_command(["specadvisor", "sessions", "import", bundle]),
        vllm_command.shell_command(["specadvisor", "sweep", "--resume", sid, "--rebuild", "--model", model_arg(command_model(session))]),
    ]


def model_arg(model: str) -> str:
    """A bundle's model name cannot smuggle a flag into the command (`--trust-remote-code`)."""
    return model if model and not model.startswith("-") else f"./{model}" if model else "MODEL"
