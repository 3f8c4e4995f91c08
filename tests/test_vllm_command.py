"""The launched server and the pasted command come from one argv builder."""

from __future__ import annotations

import shlex

from specadvisor.advisor.render import serve_command
from specadvisor.engine import ServerSpec, build_command
from specadvisor.vllm_command import serve_args, spec_config_json

CONFIG = {"prompt_lookup_max": 4, "num_speculative_tokens": 4, "method": "ngram"}


def test_config_json_is_stable_with_method_first():
    assert spec_config_json(CONFIG) == '{"method":"ngram","num_speculative_tokens":4,"prompt_lookup_max":4}'


def test_model_is_positional_after_serve_and_a_flag_otherwise():
    assert serve_args("m", None)[:3] == ["vllm", "serve", "m"]
    assert serve_args("m", None, engine_cmd=["python", "-m", "vllm.entrypoints.openai.api_server"])[3:5] == ["--model", "m"]


def test_engine_launch_and_exported_command_agree():
    launched = build_command(ServerSpec(model="org/m", speculative_config=CONFIG, extra_args=["--seed", "0"]), 8123)
    exported = shlex.split(serve_command("org/m", CONFIG, port=8123, extra_args=["--seed", "0"]))
    assert launched == exported
    assert launched[launched.index("--host") + 1] == "127.0.0.1"
