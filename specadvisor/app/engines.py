"""Use cases on the vLLM engine itself: provision the CPU engine and say what is provisioned, probe
a running server, and stop every server this process launched (the TUI on quit, a signal)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from specadvisor.domain import Session
    from specadvisor.engine.attach import EndpointInfo as EndpointInfo
    from specadvisor.engine.cpu import CpuEngine as CpuEngine


def setup_cpu(progress: Callable[[str], None]) -> CpuEngine:
    """The CPU engine, provisioned once (idempotent, file-locked), with its progress lines."""
    from specadvisor.app.engine_env import ensure_cpu

    return ensure_cpu(progress)


def cpu_status() -> dict[str, Any]:
    """What is provisioned and where (`engine status`): `provisioned` False until setup completes."""
    from specadvisor.engine.cpu import engine_root, find_cpu_engine, read_marker

    engine = find_cpu_engine()
    marker = read_marker()
    return {
        "provisioned": engine is not None,
        "root": str(engine_root()),
        "venv": str(engine.venv) if engine else None,
        "model_dir": str(engine.model_dir) if engine else None,
        "engine_cmd": engine.engine_cmd if engine else None,
        "server_args": engine.server_args if engine else None,
        "versions": (marker or {}).get("versions"),
        "provisioned_at": (marker or {}).get("provisioned_at"),
    }


@dataclass
class Probed:
    """What a running server said, its speculative config as a sweep would store it (through the
    bundles' allow-list: what did not cross is named in `notes`; `problem`: why none could)."""

    info: EndpointInfo
    notes: list[str]
    problem: str | None


def probe(url: str, api_key_env: str | None = None, *, deadline_s: float = 60.0) -> Probed:
    """What a running server says about itself: version, served model, max length, its speculative
    config when /server_info is exposed (and why not, when it did not answer), within one deadline."""
    import asyncio

    from specadvisor.crossing import endpoint_config
    from specadvisor.engine.attach import Endpoint

    info = asyncio.run(Endpoint(url, api_key_env=api_key_env).info(deadline_s=deadline_s))
    crossed = endpoint_config(info.speculative_config)
    info.speculative_config = crossed.config
    return Probed(info, list(crossed.notes), crossed.problem)


def stop_all_servers() -> None:
    """Stop every vLLM server this process started (their whole process groups)."""
    from specadvisor.engine import stop_all_servers as stop

    stop()


def install_signal_handlers() -> None:
    """Stop our servers on SIGTERM/SIGHUP before the previous handler runs (main thread only)."""
    from specadvisor.engine.reaper import install_signal_handlers as install

    install()


def launch_problem(session: Session, *, deadline_s: float = 10.0) -> str | None:
    """Why `session` cannot start now, in one line, or None: for a running server (attach mode) that
    nothing answers at its URL within `deadline_s`; for launches that no vLLM answered to the engine
    command the plan was probed with (the detected one, or the one typed in Setup). Asked before
    anything is launched, so that a missing engine is one message, not every arm failing."""
    url = session.settings.endpoint
    if url:
        from specadvisor.errors import SpecAdvisorError
        from specadvisor.redact import redact_text

        try:
            probe(url, deadline_s=deadline_s)
        except SpecAdvisorError as err:
            return f"nothing answers at {redact_text(url)}: {err.message}"
        return None
    engine = session.hardware.engine
    if session.hardware.hypothetical or engine.found:
        return None
    command = " ".join(session.settings.engine_cmd or engine.command) or "vllm serve"
    detail = f" ({engine.detail})" if engine.detail else ""
    return f"no vLLM answered to `{command}` on this machine{detail}"
