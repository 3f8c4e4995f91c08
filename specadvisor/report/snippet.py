"""The deployable outputs of a session: the `--speculative-config` JSON and the `vllm serve` line.

Rendering is the advisor's job (specadvisor.advisor.render); this module only feeds it a session.
When that renderer is absent (a partial install) a plain equivalent keeps exports working.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from specadvisor.domain import Session


def spec_config_json(config: dict[str, Any]) -> str:
    try:
        from specadvisor.advisor.render import spec_config_json as render
    except ImportError:
        return json.dumps(config, separators=(",", ":"))
    return render(config)


def serve_command(session: Session, spec_config: dict[str, Any] | None) -> str:
    """The full `vllm serve` command for the session's model and the measured server args."""
    extra = list(session.settings.server_args)
    engine_cmd = list(session.settings.engine_cmd) or None
    try:
        from specadvisor.advisor.render import serve_command as render
    except ImportError:
        return _plain_serve_command(session.model, spec_config, extra, engine_cmd)
    return render(session.model, spec_config, extra_args=extra, engine_cmd=engine_cmd)


def _plain_serve_command(model: str, spec_config: dict[str, Any] | None, extra: list[str], engine_cmd: list[str] | None) -> str:
    head = engine_cmd + ["--model", model] if engine_cmd else ["vllm", "serve", model]
    parts = head + extra
    if spec_config:
        parts += ["--speculative-config", json.dumps(spec_config, separators=(",", ":"))]
    return shlex.join(parts)
