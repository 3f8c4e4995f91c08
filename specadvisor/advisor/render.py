"""Turn a speculative config into text people paste: the JSON, a `vllm serve` line, a container line.

Shared by advise, the sweep runner, the report and the TUI so that every copy of a command is
quoted the same way (specadvisor.vllm_command.shell_command) and binds 127.0.0.1.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Sequence
from typing import Any

from specadvisor.advisor.sizing import choose_tensor_parallel
from specadvisor.vllm_command import HOST, serve_args, serve_command, shell_command, spec_config_json

__all__ = ["choose_tensor_parallel", "container_command", "serve_args", "serve_command", "shell_command", "spec_config_json"]

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
    spec_config: dict[str, Any] | None,
    *,
    vendor: str = "nvidia",
    vllm_version: str | None = None,
    tensor_parallel_size: int = 1,
    port: int = 8000,
    extra_args: Sequence[str] = (),
    local_paths: Collection[str] = (),
    width: int | None = None,
) -> str:
    """`docker run` of vLLM's image (vendor: nvidia, amd, or none/cpu for the CPU build).

    The port is published on the host's 127.0.0.1 only. A model or drafter from the Hub gets
    `-e HF_TOKEN`: the variable by name alone, so docker copies the host's value (if set) for a gated
    repository (Llama, Gemma) and no token is ever written into the command. A model or drafter that
    is a folder on this machine (`local_paths`) is mounted read-only under /models and served from
    there: inside the container only the mounted path exists.
    """
    mounts = _mounts(local_paths)
    model = mounts.get(model, model)
    if spec_config and spec_config.get("model") in mounts:
        spec_config = {**spec_config, "model": mounts[spec_config["model"]]}
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
        *(["-e", "HF_TOKEN"] if _from_hub(model, spec_config, mounts) else []),
        *(arg for host, inside in mounts.items() for arg in ("-v", f"{_host_path(host)}:{inside}:ro")),
        _image(vendor, vllm_version),
    ]
    # Inside the container the server must listen on all interfaces for the published port to reach it.
    server = serve_args(model, spec_config, tensor_parallel_size=tensor_parallel_size, port=port, engine_cmd=["serve"], host="0.0.0.0", extra_args=extra_args)
    return shell_command(docker + server[1:], width=width)


def _from_hub(model: str, spec_config: dict[str, Any] | None, mounts: dict[str, str]) -> bool:
    """Whether the served model or its drafter (mount paths already substituted) comes from the Hub."""
    inside = set(mounts.values())
    drafter = (spec_config or {}).get("model")
    return model not in inside or (isinstance(drafter, str) and drafter not in inside)


def _mounts(local_paths: Collection[str]) -> dict[str, str]:
    """Each local folder -> /models/<its name> (made safe for a mount spec, distinct per folder)."""
    mounts: dict[str, str] = {}
    for path in local_paths:
        if not path or path in mounts:
            continue
        name = re.sub(r"[^A-Za-z0-9._-]", "_", os.path.basename(os.path.normpath(path))).strip(".") or "model"
        inside, k = f"/models/{name}", 2
        while inside in mounts.values():
            inside, k = f"/models/{name}-{k}", k + 1
        mounts[path] = inside
    return mounts


def _host_path(path: str) -> str:
    """docker -v needs an absolute host path (a relative one names a volume); `~` is left for the shell."""
    return path if path == "~" or path.startswith("~/") else os.path.abspath(path)
