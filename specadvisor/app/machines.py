"""Use case `detect`: what this machine offers for serving, or a machine planned for by its GPU name.

The CLI's `detect` and `advise --gpu`, and the TUI's probe and "Plan for GPU" field, ask here. The
probes stay light (no pydantic, no textual, no httpx): `specadvisor detect` answers in a fraction
of a second, so nothing is imported before a function runs.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from specadvisor.machine import EngineInfo, HardwareProfile
    from specadvisor.rulebase import RuleBase


def detect(engine_cmd: list[str] | None = None, *, timeout_s: float = 2.0) -> HardwareProfile:
    """This machine: GPUs, CPU, OS and the vLLM that will serve (`engine_cmd`: one run elsewhere)."""
    from specadvisor import hardware

    return hardware.detect(engine_cmd, timeout_s=timeout_s)


def engine(engine_cmd: list[str]) -> EngineInfo:
    """The vLLM behind an engine command (another venv, a container): what `detect --engine-cmd` reads."""
    from specadvisor import hardware

    return hardware.engine_info(engine_cmd)


def hypothetical(spec: str, rulebase: RuleBase | None = None) -> HardwareProfile:
    """A machine planned for (`H100x8`, `MI300X`) from the GPU catalog (`rulebase`'s, with `--rules
    DIR`'s GPUs and aliases; default: the shipped rules and the user's folder): nothing of it is probed."""
    from specadvisor import hardware

    return hardware.hypothetical(spec, rulebase)


def planned(spec: str, engine_cmd: list[str] | None = None) -> HardwareProfile:
    """A planned machine served by the vLLM found here (`detect --gpu`)."""
    from specadvisor import hardware

    return replace(hypothetical(spec), engine=hardware.engine_info(engine_cmd))


def for_advice(gpu: str | None, rulebase: RuleBase | None = None) -> HardwareProfile:
    """The machine advice is for: the named GPU (`--gpu`, the TUI's "Plan for GPU"), looked up in
    `rulebase`, else this one."""
    return hypothetical(gpu, rulebase) if gpu else detect()
