"""Ask the engine's own Python whether its SpeculativeConfig takes each config, before any launch.

vLLM rejects a bad --speculative-config only once the API server has started (a minute on a CPU,
many on a large GPU model). Importing `vllm.config` and validating each key against the fields of
its SpeculativeConfig (their pydantic types and constraints, the `method` Literal) takes seconds and
loads no model, so every arm of a sweep is checked in one process before the first one starts.
The configs go in on stdin as JSON; the script is fixed here and runs nothing the configs say.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

SCRIPT = r"""
import dataclasses, json, sys
from typing import Annotated
configs = json.loads(sys.stdin.read())
try:
    try:
        from vllm.config.speculative import SpeculativeConfig
    except ImportError:
        from vllm.config import SpeculativeConfig
except Exception as exc:
    print("SPECADVISOR-DRY-CHECK " + json.dumps({"error": f"cannot import vLLM's SpeculativeConfig: {exc}"}))
    sys.exit(0)
from pydantic import TypeAdapter
fields = {f.name for f in dataclasses.fields(SpeculativeConfig) if f.init}
typed = getattr(SpeculativeConfig, "__pydantic_fields__", {})
answers = []
for config in configs:
    problems = []
    for key, value in config.items():
        if key not in fields:
            problems.append(f"vLLM's SpeculativeConfig has no field '{key}'")
            continue
        info = typed.get(key)
        if info is None:
            continue
        try:
            TypeAdapter(Annotated[info.annotation, info]).validate_python(value)
        except Exception as exc:
            errors = exc.errors() if hasattr(exc, "errors") else [{"msg": str(exc)}]
            message = str(errors[0]["msg"])
            problems.append(f"'{key}'={value!r}: " + (message if len(message) < 200 else message[:200] + "..."))
    answers.append(problems)
print("SPECADVISOR-DRY-CHECK " + json.dumps({"answers": answers}))
"""

_MARK = "SPECADVISOR-DRY-CHECK "
_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")


def engine_python(engine_cmd: list[str]) -> str | None:
    """The interpreter behind an engine command: `python -m vllm...` itself, or the `python` beside a
    venv's `vllm` script; None for anything else (a container, a wrapper script)."""
    if not engine_cmd:
        return None
    first = Path(engine_cmd[0])
    if _PYTHON.match(first.name):
        return str(first)
    sibling = first.with_name("python")
    if first.name == "vllm" and first.parent != Path() and sibling.exists():
        return str(sibling)
    return None


def dry_check(python: str, configs: list[dict[str, Any]], timeout_s: float = 300) -> list[list[str]] | None:
    """Per config, what this engine's SpeculativeConfig rejects ([] = accepted); None when the
    engine's Python could not answer (no vLLM there, a timeout): the launch then proceeds and vLLM
    reports for itself."""
    from specadvisor.engine import reaper

    try:  # its own process group, known to the reaper: quitting mid-check leaves no vLLM import behind
        proc = subprocess.Popen(
            [python, "-c", SCRIPT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
            start_new_session=True,
        )
    except OSError:
        return None
    reaper.register(proc.pid)
    try:
        stdout, _ = proc.communicate(json.dumps(configs), timeout=timeout_s)
    except subprocess.TimeoutExpired:
        reaper.kill_groups({proc.pid}, grace_s=1)
        return None
    finally:
        reaper.unregister(proc.pid)
    line = next((raw[len(_MARK) :] for raw in reversed(stdout.splitlines()) if raw.startswith(_MARK)), None)
    if line is None:
        return None
    answer = json.loads(line)
    answers = answer.get("answers")
    if not isinstance(answers, list) or len(answers) != len(configs):
        return None
    return [[str(problem) for problem in problems] for problems in answers]


def _env() -> dict[str, str]:
    import os

    env = dict(os.environ)
    env.update({"HF_HUB_OFFLINE": "1", "VLLM_LOGGING_LEVEL": "ERROR", "TQDM_DISABLE": "1"})
    return env


def preflight(engine_cmd: list[str] | None, configs: dict[str, dict[str, Any]]) -> str | None:
    """One line naming each arm whose config the engine's own SpeculativeConfig rejects (arm id ->
    config); None when all pass, or when the engine command's Python cannot be asked."""
    python = engine_python(list(engine_cmd or []))
    if python is None or not configs:
        return None
    answers = dry_check(python, list(configs.values()))
    if answers is None:
        return None
    rejected = [f"arm {arm}: {'; '.join(problems)}" for arm, problems in zip(configs, answers, strict=True) if problems]
    return "vLLM's SpeculativeConfig rejects " + " | ".join(rejected) if rejected else None
