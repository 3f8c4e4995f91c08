"""The deployable outputs of a session: the `--speculative-config` JSON and the `vllm serve` line.

The command line itself is built by specadvisor.vllm_command; this module only feeds it a session.
"""

from __future__ import annotations

from typing import Any

from specadvisor import vllm_command
from specadvisor.domain import Session
from specadvisor.vllm_command import spec_config_json

__all__ = ["serve_command", "spec_config_json"]


def serve_command(session: Session, spec_config: dict[str, Any] | None) -> str:
    """The full `vllm serve` command for the session's model and the measured server args."""
    return vllm_command.serve_command(
        session.model, spec_config, extra_args=list(session.settings.server_args), engine_cmd=list(session.settings.engine_cmd) or None
    )
