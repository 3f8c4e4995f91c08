"""vLLM's command line, built in one place: the server the engine launches and the command a user
pastes are the same argv (model positional after `serve`, `--model` for other launchers, host
127.0.0.1, the speculative config as stable compact JSON with `method` first)."""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence

HOST = "127.0.0.1"


def spec_config_json(config: dict) -> str:
    """Compact JSON, `method` first then the other keys sorted: the same config always prints the same.
    Keys set to null are left out: they mean "vLLM's default" (a config read back from a running
    server's /server_info lists every unset key as null)."""
    ordered = {"method": config["method"]} if "method" in config else {}
    ordered.update({key: config[key] for key in sorted(config) if key != "method" and config[key] is not None})
    return json.dumps(ordered, separators=(",", ":"))


def serve_args(
    model: str,
    spec_config: dict | None,
    *,
    tensor_parallel_size: int = 1,
    port: int = 8000,
    extra_args: Sequence[str] = (),
    engine_cmd: Sequence[str] | None = None,
    host: str = HOST,
) -> list[str]:
    """argv of the server. `vllm serve` takes the model positionally; other launchers get --model."""
    cmd = list(engine_cmd) if engine_cmd else ["vllm", "serve"]
    args = [*cmd, model] if cmd[-1] == "serve" else [*cmd, "--model", model]
    args += ["--host", host, "--port", str(port)]
    if tensor_parallel_size > 1:
        args += ["--tensor-parallel-size", str(tensor_parallel_size)]
    if spec_config:
        args += ["--speculative-config", spec_config_json(spec_config)]
    return args + list(extra_args)


def serve_command(
    model: str,
    spec_config: dict | None,
    *,
    tensor_parallel_size: int = 1,
    port: int = 8000,
    extra_args: Sequence[str] = (),
    engine_cmd: Sequence[str] | None = None,
) -> str:
    return shlex.join(serve_args(model, spec_config, tensor_parallel_size=tensor_parallel_size, port=port, extra_args=extra_args, engine_cmd=engine_cmd))
