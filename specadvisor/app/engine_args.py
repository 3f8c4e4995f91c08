"""How a user's engine command, server arguments and endpoint URL are read, for both front ends:
the CLI's `--engine-cmd`, `--server-arg` and `--endpoint` and the TUI's Setup fields parse the same
text the same way (one InputError naming the field). Leaves only: the CLI's parser imports this."""

from __future__ import annotations

import shlex
from urllib.parse import urlsplit

from specadvisor.errors import InputError
from specadvisor.redact import redact_text
from specadvisor.textsafe import line

# Flags specadvisor owns on every server it launches (engine/spec.py enforces them again at launch).
FORBIDDEN_SERVER_FLAGS = {
    "--disable-log-stats": "it removes the metrics specadvisor measures",
    "--host": "specadvisor binds launched servers to 127.0.0.1",
    "--port": "specadvisor picks a free port for each server",
    "--speculative-config": "the speculative config comes from --method, --n and --spec-extra",
}


def _show(text: object, limit: int = 60) -> str:
    return repr(line(redact_text(str(text)), limit))


def server_args(args: list[str], flag: str = "--server-arg") -> list[str]:
    """Extra server arguments without the flags specadvisor owns (`--port`, `--host`, ...)."""
    for arg in args:
        name = arg.strip().split("=", 1)[0]
        if name in FORBIDDEN_SERVER_FLAGS:
            raise InputError(f"{flag} {name} is not allowed", hint=f"remove it: {FORBIDDEN_SERVER_FLAGS[name]}")
    return list(args)


def engine_cmd(text: str, flag: str = "--engine-cmd") -> list[str]:
    """An engine command split like a shell would, refusing unbalanced quotes and owned flags."""
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise InputError(f"{flag} {_show(text)} is not a valid command line ({exc})", hint=f"quote it like a shell command, e.g. {flag} 'vllm serve'") from None
    if not argv:
        raise InputError(f"{flag} is empty", hint=f"e.g. {flag} 'vllm serve'")
    server_args(argv, flag)
    return argv


def endpoint_url(text: str, flag: str = "--endpoint") -> str:
    """An http(s) URL with a host and a valid port. Credentials in it are never echoed (prefer
    --api-key-env: the stored session keeps the URL with its credentials redacted)."""
    shown = _show(text)
    try:
        parts = urlsplit(text.strip())
        port = parts.port
    except ValueError:
        raise InputError(f"{flag} {shown} is not a valid URL (bad host or port)", hint="e.g. http://127.0.0.1:8000") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"{flag} {shown} is not an http(s) URL with a host", hint="e.g. http://127.0.0.1:8000")
    if port is not None and not 1 <= port <= 65535:
        raise InputError(f"{flag} {shown}: port {port} is out of range", hint="use a port from 1 to 65535")
    return text.strip()
