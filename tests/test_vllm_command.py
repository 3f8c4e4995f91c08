"""The launched server and the pasted command come from one argv builder."""

from __future__ import annotations

import shlex

import pytest

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


def test_shell_word_keeps_home_expandable_and_json_whole():
    from specadvisor.vllm_command import shell_word

    assert shell_word("~/.cache/hf/m") == "~/.cache/hf/m"  # not '~/...': quotes stop the expansion
    assert shell_word("~/my models/x") == "~/'my models/x'"
    assert shell_word("$HOME/x y") == "\"$HOME\"/'x y'"
    assert shell_word("--download-dir=~/hf") == '--download-dir="$HOME"/hf'
    assert shell_word("~user/x") == "'~user/x'"  # another user's home is not ours to expand
    assert shell_word('{"method":"ngram","n":[1,2]}') == '\'{"method":"ngram","n":[1,2]}\''


def test_a_long_command_breaks_before_each_option_and_keeps_values_with_them():
    from specadvisor.vllm_command import shell_command

    argv = ["docker", "run", "--rm", "--gpus", "all", "-v", "a:/b:ro", "image:1", "/models/m", "--port", "8000"]
    assert shell_command(argv) == "docker run --rm --gpus all -v a:/b:ro image:1 /models/m --port 8000"
    assert shell_command(argv, width=40).split(" \\\n  ") == ["docker run", "--rm", "--gpus all", "-v a:/b:ro", "image:1 /models/m", "--port 8000"]
    assert shell_command(["vllm", "serve", "m"], env={"HF_HOME": "~/hf", "A": "x y"}) == "HF_HOME=\"$HOME\"/hf A='x y' vllm serve m"
    with pytest.raises(ValueError):
        shell_command(["x"], env={"A=B; rm": "1"})
