"""Attach mode against a running (fake) OpenAI-compatible server."""

from __future__ import annotations

import pytest

from specadvisor.engine import Endpoint, VllmServer, reset_prefix_cache, server_version
from specadvisor.engine.attach import _speculative_config_from
from specadvisor.errors import EngineError, InputError

pytestmark = pytest.mark.timeout(60)


async def test_endpoint_info_and_dev_endpoints(fake_spec, monkeypatch):
    monkeypatch.setenv("SPECADVISOR_TEST_KEY", "sk-secret-123")
    async with VllmServer(fake_spec("ok")) as server:
        endpoint = Endpoint(server.base_url + "/v1/", api_key_env="SPECADVISOR_TEST_KEY")
        info = await endpoint.info()
        assert info.url == server.base_url
        assert info.served_model == "fake-model"
        assert info.max_model_len == 2048
        assert info.version == "0.0-fake"
        assert info.server_info_available is False and info.speculative_config is None
        assert await server_version(server.base_url) == "0.0-fake"
        assert await reset_prefix_cache(server.base_url) is True
    assert "sk-secret-123" not in repr(endpoint)
    assert "sk-secret-123" not in info.model_dump_json()
    assert endpoint.headers() == {"Authorization": "Bearer sk-secret-123"}


async def test_a_server_info_that_times_out_is_reported_as_a_timeout_not_as_not_exposed(fake_spec, monkeypatch):
    """A loaded box answered /server_info after the client's timeout: the provenance once said "not
    exposed (start vLLM with VLLM_SERVER_DEV_MODE=1)", which sent the reader to the wrong fix."""
    import httpx

    from specadvisor.engine import attach
    from specadvisor.provenance import _exposed

    monkeypatch.setattr(attach, "_TIMEOUT", httpx.Timeout(0.5))
    async with VllmServer(fake_spec("slowinfo")) as server:
        info = await Endpoint(server.base_url).info()
    assert info.served_model == "fake-model"  # the rest was read
    assert info.server_info_available is False and info.server_info_error == "did not answer within 0.5 s"
    assert _exposed(info)["server_info"] == "unknown: it did not answer within 0.5 s"
    async with VllmServer(fake_spec("ok")) as server:  # a 404 is what "not exposed" means
        info = await Endpoint(server.base_url).info()
    assert info.server_info_error is None
    assert _exposed(info)["server_info"] == "not exposed (start vLLM with VLLM_SERVER_DEV_MODE=1)"


async def test_unreachable_endpoint_is_an_engine_error():
    with pytest.raises(EngineError, match="cannot reach"):
        await Endpoint("http://127.0.0.1:9").info()
    assert await reset_prefix_cache("http://127.0.0.1:9") is False


def test_missing_key_variable_and_bad_url_are_input_errors(monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with pytest.raises(InputError, match="NO_SUCH_KEY_VAR is not set"):
        Endpoint("http://127.0.0.1:8000", api_key_env="NO_SUCH_KEY_VAR")
    with pytest.raises(InputError, match="not an http"):
        Endpoint("127.0.0.1:8000")


def test_speculative_config_is_found_in_server_info_and_trimmed():
    server_info = {
        "vllm_config": {
            "model_config": {"model": "m"},
            "speculative_config": {"method": "ngram", "num_speculative_tokens": 4, "target_model_config": {"model": "m"}},
        }
    }
    assert _speculative_config_from(server_info) == {"method": "ngram", "num_speculative_tokens": 4}
    assert _speculative_config_from({"vllm_config": {"speculative_config": None}}) is None


def test_unset_keys_from_server_info_never_reach_the_serve_command():
    """/server_info lists every unset key as null; replayed, they made `--speculative-config` noisy."""
    from specadvisor.vllm_command import serve_command

    spec = _speculative_config_from(
        {"vllm_config": {"speculative_config": {"method": "ngram", "num_speculative_tokens": 4, "model": None, "quantization": None, "prompt_lookup_max": 4}}}
    )
    assert spec == {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4}
    command = serve_command("m", {**spec, "draft_tensor_parallel_size": None})
    assert "null" not in command and '{"method":"ngram","num_speculative_tokens":4,"prompt_lookup_max":4}' in command


async def test_probe_cli_reads_a_running_server(fake_spec):
    import asyncio
    import json
    import sys

    async with VllmServer(fake_spec("ok")) as server:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "specadvisor",
            "engine",
            "probe",
            server.base_url,
            "--json",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    info = json.loads(out)
    assert info["served_model"] == "fake-model" and info["version"] == "0.0-fake"


async def test_probe_cli_unreachable_is_one_line_exit_4():
    import asyncio
    import sys

    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "specadvisor",
        "engine",
        "probe",
        "http://127.0.0.1:9",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await proc.communicate()
    assert proc.returncode == 4
    assert err.decode().count("\n") == 1 and "cannot reach http://127.0.0.1:9" in err.decode()
