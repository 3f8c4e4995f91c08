"""What to launch: the server spec and the exact `vllm serve` command line built from it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from specadvisor.engine.caches import cache_env
from specadvisor.errors import InputError
from specadvisor.vllm_command import serve_args

# Flags specadvisor owns: it binds 127.0.0.1 on a port it chose, and it needs the stats vLLM
# drops with --disable-log-stats (the SpecDecoding log line and every /metrics counter).
_FORBIDDEN_EXTRA = {
    "--disable-log-stats": "it removes the metrics specadvisor measures",
    "--host": "specadvisor binds launched servers to 127.0.0.1",
    "--port": "set the port with ServerSpec.port / --port",
    "--speculative-config": "the speculative config comes from the arm",
}


class ServerSpec(BaseModel):
    """One server launch. engine_cmd is a template: `vllm serve` (model positional) or any command
    that takes `--model M` (the CPU build's `python -m vllm.entrypoints.openai.api_server`, docker)."""

    model: str
    speculative_config: dict[str, Any] | None = None
    engine_cmd: list[str] = Field(default_factory=lambda: ["vllm", "serve"])
    port: int | None = None
    served_model_name: str | None = None
    extra_args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    gpu_ids: str | None = None  # "0,1": becomes CUDA_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES
    ready_timeout_s: float = 1200
    log_path: Path | None = None


def build_command(spec: ServerSpec, port: int) -> list[str]:
    """The argv that launches the server. The speculative config must name its `method`: without
    it vLLM guesses from the drafter's name."""
    if not spec.engine_cmd:
        raise InputError("the engine command is empty", hint="use e.g. --engine-cmd 'vllm serve'")
    if "--disable-log-stats" in spec.engine_cmd:
        raise InputError("the engine command contains --disable-log-stats", hint=f"remove it: {_FORBIDDEN_EXTRA['--disable-log-stats']}")
    for arg in spec.extra_args:
        flag = arg.split("=", 1)[0]
        if flag in _FORBIDDEN_EXTRA:
            raise InputError(f"extra server argument {flag} is not allowed", hint=f"remove it: {_FORBIDDEN_EXTRA[flag]}")
    if spec.speculative_config is not None and not spec.speculative_config.get("method"):
        raise InputError(
            f"speculative config {json.dumps(spec.speculative_config)} has no 'method'",
            hint='add "method", e.g. {"method": "ngram", ...}',
        )
    naming = ["--served-model-name", spec.served_model_name] if spec.served_model_name else []
    return serve_args(spec.model, spec.speculative_config, port=port, extra_args=[*naming, *spec.extra_args], engine_cmd=spec.engine_cmd)


def server_env(spec: ServerSpec) -> dict[str, str]:
    """The child's environment: ours, the spec's, GPU selection, unbuffered output, dev mode
    (for /server_info and POST /reset_prefix_cache) and compile caches shared across arms."""
    env = dict(os.environ)
    env.update(spec.env)
    env.update(cache_env(env))
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("VLLM_SERVER_DEV_MODE", "1")
    if spec.gpu_ids is not None:
        env["CUDA_VISIBLE_DEVICES"] = spec.gpu_ids
        env["HIP_VISIBLE_DEVICES"] = spec.gpu_ids
    return env
