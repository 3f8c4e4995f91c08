"""Turn a speculative config into text people paste: the JSON, a `vllm serve` line, a container line.

Shared by advise, the sweep runner, the report and the TUI so that every copy of a command is
quoted the same way (shlex.join) and binds 127.0.0.1.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from specadvisor.advisor.sizing import choose_tensor_parallel
from specadvisor.vllm_command import HOST, serve_args, serve_command, spec_config_json

__all__ = ["choose_tensor_parallel", "container_command", "serve_args", "serve_command", "spec_config_json"]

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
    extra_args: Sequence[str] = (),
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
        "docker",
        "run",
        "--rm",
        *devices,
        "--ipc=host",
        "-p",
        f"{HOST}:{port}:{port}",
        "-v",
        "huggingface-cache:/root/.cache/huggingface",
        _image(vendor, vllm_version),
    ]
    # Inside the container the server must listen on all interfaces for the published port to reach it.
    server = serve_args(model, spec_config, tensor_parallel_size=tensor_parallel_size, port=port, engine_cmd=["serve"], host="0.0.0.0", extra_args=extra_args)
    return shlex.join(docker + server[1:])
