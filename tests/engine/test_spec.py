"""The command line and environment a launch gets."""

from __future__ import annotations

import json

import pytest

from specadvisor.engine import ServerSpec, build_command
from specadvisor.engine.spec import server_env
from specadvisor.errors import InputError

NGRAM = {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_min": 2, "prompt_lookup_max": 4}


def test_vllm_serve_takes_the_model_positionally():
    cmd = build_command(ServerSpec(model="Qwen/Qwen3-8B", speculative_config=NGRAM, extra_args=["--seed", "0"]), 8123)
    assert cmd[:3] == ["vllm", "serve", "Qwen/Qwen3-8B"]
    assert cmd[cmd.index("--host") + 1] == "127.0.0.1"
    assert cmd[cmd.index("--port") + 1] == "8123"
    assert json.loads(cmd[cmd.index("--speculative-config") + 1]) == NGRAM
    assert cmd[-2:] == ["--seed", "0"]
    assert "--disable-log-stats" not in cmd


def test_api_server_module_takes_model_flag():
    spec = ServerSpec(model="/m", engine_cmd=["/venv/bin/python", "-m", "vllm.entrypoints.openai.api_server"])
    cmd = build_command(spec, 9000)
    assert cmd[3:5] == ["--model", "/m"]
    assert "--speculative-config" not in cmd  # baseline arm


def test_config_without_method_is_refused():
    with pytest.raises(InputError, match="has no 'method'"):
        build_command(ServerSpec(model="m", speculative_config={"model": "drafter", "num_speculative_tokens": 3}), 1)


@pytest.mark.parametrize("flag", ["--disable-log-stats", "--host", "--port=9", "--speculative-config"])
def test_flags_specadvisor_owns_are_refused_in_extra_args(flag):
    with pytest.raises(InputError) as caught:
        build_command(ServerSpec(model="m", extra_args=[flag, "x"]), 1)
    assert flag.split("=")[0] in str(caught.value)


def test_environment_has_dev_mode_gpu_selection_and_spec_env():
    env = server_env(ServerSpec(model="m", gpu_ids="2", env={"VLLM_CPU_KVCACHE_SPACE": "2"}))
    assert env["VLLM_SERVER_DEV_MODE"] == "1"
    assert env["CUDA_VISIBLE_DEVICES"] == env["HIP_VISIBLE_DEVICES"] == "2"
    assert env["VLLM_CPU_KVCACHE_SPACE"] == "2"
    assert env["PYTHONUNBUFFERED"] == "1"


def test_no_gpu_selection_leaves_visibility_alone(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert "CUDA_VISIBLE_DEVICES" not in server_env(ServerSpec(model="m"))


def test_disable_log_stats_is_refused_in_the_engine_command_too():
    with pytest.raises(InputError, match="disable-log-stats"):
        build_command(ServerSpec(model="m", engine_cmd=["vllm", "serve", "--disable-log-stats"]), 1)
