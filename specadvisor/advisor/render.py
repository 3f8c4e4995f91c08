"""Turn a speculative config into text people paste: the JSON, a `vllm serve` line, a container line.

Shared by advise, the sweep runner, the report and the TUI so that every copy of a command is
quoted the same way (shlex.join) and binds 127.0.0.1.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence

from specadvisor.advisor.sizing import choose_tensor_parallel

__all__ = ["spec_config_json", "serve_args", "serve_command", "container_command", "choose_tensor_parallel"]

HOST = "127.0.0.1"


def spec_config_json(config: dict) -> str:
    """Compact JSON, `method` first then the other keys sorted: the same config always prints the same."""
    ordered = {"method": config["method"]} if "method" in config else {}
    ordered.update({key: config[key] for key in sorted(config) if key != "method"})
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
    return shlex.join(
        serve_args(model, spec_config, tensor_parallel_size=tensor_parallel_size, port=port, extra_args=extra_args, engine_cmd=engine_cmd)
    )


CPU_IMAGE = "public.ecr.aws/q9t5s3a7/vllm-cpu-release-repo"


def _image(vendor: str, vllm_version: str | None) -> str:
    """vLLM's published image for the platform; a local version suffix (+cpu) is not part of the tag."""
    tag = f"v{vllm_version.lstrip('v').split('+')[0]}" if vllm_version else "latest"
    if vendor == "amd":
        return f"vllm/vllm-openai-rocm:{tag}"
    if vendor in ("none", "cpu"):
        return f"{CPU_IMAGE}:{tag}"
    return f"vllm/vllm-openai:{tag}"


def container_command(
    model: str,
    spec_config: dict | None,
    *,
    vendor: str = "nvidia",
    vllm_version: str | None = None,
    tensor_parallel_size: int = 1,
    port: int = 8000,
) -> str:
    """`docker run` of vLLM's image (vendor: nvidia, amd, or none/cpu for the CPU build).

    The port is published on the host's 127.0.0.1 only; no secrets or tokens are passed.
    """
    if vendor == "amd":
        devices = ["--device", "/dev/kfd", "--device", "/dev/dri", "--group-add", "video", "--security-opt", "seccomp=unconfined"]
    elif vendor in ("none", "cpu"):
        devices = []
    else:
        devices = ["--gpus", "all"]
    docker = [
        "docker", "run", "--rm", *devices, "--ipc=host",
        "-p", f"{HOST}:{port}:{port}",
        "-v", "huggingface-cache:/root/.cache/huggingface",
        _image(vendor, vllm_version),
    ]
    # Inside the container the server must listen on all interfaces for the published port to reach it.
    server = serve_args(model, spec_config, tensor_parallel_size=tensor_parallel_size, port=port, engine_cmd=["serve"], host="0.0.0.0")
    return shlex.join(docker + server[1:])
