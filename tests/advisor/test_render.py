"""Rendered snippets and commands: stable JSON, shell-safe quoting, 127.0.0.1, the right image."""

from __future__ import annotations

import json
import shlex

from advisor_helpers import gpus, model
from specadvisor.advisor import choose_tensor_parallel, container_command, serve_command, spec_config_json
from specadvisor.domain import HardwareProfile

CONFIG = {"num_speculative_tokens": 7, "model": "z-lab/it's-DFlash", "method": "dflash", "attention_backend": "triton_attn"}


def test_spec_config_json_is_compact_stable_and_method_first():
    text = spec_config_json(CONFIG)
    assert text.startswith('{"method":"dflash"')
    assert " " not in text.replace("it's", "")
    assert json.loads(text) == CONFIG
    assert text == spec_config_json(dict(reversed(list(CONFIG.items()))))


def test_serve_command_round_trips_through_the_shell():
    line = serve_command("google/gemma-4-26B-A4B-it", CONFIG, tensor_parallel_size=2, port=8123, extra_args=["--max-model-len", "4096"])
    argv = shlex.split(line)
    assert argv[:3] == ["vllm", "serve", "google/gemma-4-26B-A4B-it"]
    assert argv[argv.index("--host") + 1] == "127.0.0.1"
    assert argv[argv.index("--port") + 1] == "8123"
    assert argv[argv.index("--tensor-parallel-size") + 1] == "2"
    assert json.loads(argv[argv.index("--speculative-config") + 1]) == CONFIG
    assert argv[-2:] == ["--max-model-len", "4096"]


def test_serve_command_without_speculation_or_with_another_launcher():
    line = serve_command("m", None, engine_cmd=["/venv/bin/python", "-m", "vllm.entrypoints.openai.api_server"])
    argv = shlex.split(line)
    assert "--speculative-config" not in argv and "--tensor-parallel-size" not in argv
    assert argv[argv.index("--model") + 1] == "m"


def test_container_commands_per_vendor():
    nvidia = shlex.split(container_command("m", CONFIG, vendor="nvidia", vllm_version="0.33.0", tensor_parallel_size=4))
    assert nvidia[:2] == ["docker", "run"] and "--gpus" in nvidia and "vllm/vllm-openai:v0.33.0" in nvidia
    assert "127.0.0.1:8000:8000" in nvidia
    assert json.loads(nvidia[nvidia.index("--speculative-config") + 1]) == CONFIG
    amd = shlex.split(container_command("m", None, vendor="amd"))
    assert "/dev/kfd" in amd and "vllm/vllm-openai-rocm:latest" in amd and "--gpus" not in amd
    # issue 41: a gated Hub model needs the token inside; passed by name, never by value
    for argv in (nvidia, amd):
        assert argv[argv.index("-e") + 1] == "HF_TOKEN" and not any("HF_TOKEN=" in part for part in argv)


def test_choose_tensor_parallel():
    assert choose_tensor_parallel(model("x", params_b=8.0), gpus("H100", 8)) == 1
    assert choose_tensor_parallel(model("x", params_b=70.6), gpus("H100", 8)) == 4
    assert choose_tensor_parallel(model("x", params_b=70.6), gpus("H200", 8)) == 2
    assert choose_tensor_parallel(model("x", params_b=70.6, quantization="fp8"), gpus("H100", 8)) == 2
    assert choose_tensor_parallel(model("x", params_b=235.0), gpus("H100", 8)) == 8
    assert choose_tensor_parallel(model("x", params_b=235.0), gpus("H100", 6)) == 4  # power of two <= count
    assert choose_tensor_parallel(model("x", params_b=70.6), HardwareProfile()) == 1
    assert choose_tensor_parallel(model("x"), gpus("H100", 8)) == 1


def test_cpu_container_uses_the_cpu_image_without_gpus():
    argv = shlex.split(container_command("m", None, vendor="none", vllm_version="0.32.0+cpu"))
    assert "--gpus" not in argv and "public.ecr.aws/q9t5s3a7/vllm-cpu-release-repo:v0.32.0" in argv


def test_container_mounts_local_model_and_drafter_folders_and_serves_the_mounts(tmp_path):
    model_dir, drafter_dir = tmp_path / "a" / "my model", tmp_path / "b" / "my model"
    config = {"method": "eagle3", "model": str(drafter_dir), "num_speculative_tokens": 3}
    argv = shlex.split(container_command(str(model_dir), config, local_paths=[str(model_dir), str(drafter_dir)]))
    mounts = [argv[i + 1] for i, part in enumerate(argv) if part == "-v" and argv[i + 1].endswith(":ro")]
    assert mounts == [f"{model_dir}:/models/my_model:ro", f"{drafter_dir}:/models/my_model-2:ro"]  # distinct targets
    image = next(i for i, part in enumerate(argv) if part.startswith("vllm/vllm-openai:"))
    assert argv[image + 1] == "/models/my_model"
    assert json.loads(argv[argv.index("--speculative-config") + 1])["model"] == "/models/my_model-2"
    hub = shlex.split(container_command("org/m", None))
    assert not any(part.endswith(":ro") for part in hub) and hub[hub.index("vllm/vllm-openai:latest") + 1] == "org/m"
    assert "HF_TOKEN" in hub and "HF_TOKEN" not in argv  # local folders only: nothing to download, no token asked for
