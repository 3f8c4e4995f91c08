"""VllmServer lifecycle against a fake server process: ready, early exit, timeout, stop, cleanup."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest

from engine_helpers import FIXTURES, alive, wait_dead
from specadvisor.engine import ServerStartError, VllmServer, free_port, reaper, stop_all_servers
from specadvisor.errors import EngineError

pytestmark = pytest.mark.timeout(60)


async def test_ready_streams_log_and_stops(fake_spec):
    spec = fake_spec("ok", served_model_name="served")
    server = VllmServer(spec)
    seen: list[str] = []
    server.subscribe(seen.append)
    async with server:
        assert server.pid and alive(server.pid)
        assert server.pid in reaper.live_groups()
        async with httpx.AsyncClient() as client:
            assert (await client.get(f"{server.base_url}/health")).status_code == 200
        assert server.base_url == f"http://127.0.0.1:{server.port}"
        assert "--served-model-name" in server.command and "127.0.0.1" in server.command
    assert not alive(server.pid)
    assert server.pid not in reaper.live_groups()
    assert any("Application startup complete." in line for line in seen)
    assert "stdin bytes: 0" in seen  # stdin is /dev/null, so a read returns at once
    assert any("VLLM_SERVER_DEV_MODE=1" in line for line in seen)
    log_text = spec.log_path.read_text()
    assert log_text.startswith("$ ") and "Application startup complete." in log_text
    assert server.tail(2) == seen[-2:]


async def test_wait_ready_returns_seconds_to_ready(fake_spec):
    server = VllmServer(fake_spec("ok", "--delay", "1.5"))
    await server.start()
    try:
        seconds = await server.wait_ready()
    finally:
        await server.stop()
    assert 1.5 <= seconds < 10


async def test_early_exit_is_noticed_at_once_and_diagnosed(fake_spec):
    spec = fake_spec("exit", "--fail-log", str(FIXTURES / "unknown_key.log"), "--rc", "1", ready_timeout_s=600)
    server = VllmServer(spec)
    started = time.monotonic()
    with pytest.raises(ServerStartError) as caught:
        async with server:
            pytest.fail("a server that exits must not be entered")
    assert time.monotonic() - started < 120  # noticed at the exit, not at the 600 s ready timeout
    err = caught.value
    assert isinstance(err, EngineError) and err.exit_code == 4
    assert err.diagnosis.kind == "invalid_config"
    assert "bogus_key" in str(err)
    assert server.returncode == 1
    assert "Unexpected keyword argument" in spec.log_path.read_text()


async def test_timeout_stops_the_server(fake_spec):
    server = VllmServer(fake_spec("hang", ready_timeout_s=1.5))
    await server.start()
    with pytest.raises(ServerStartError) as caught:
        await server.wait_ready()
    assert caught.value.diagnosis.kind == "timeout"
    assert not alive(server.pid)
    assert server.diagnosis is caught.value.diagnosis


async def test_stop_kills_the_whole_process_group(fake_spec, tmp_path):
    pid_file = tmp_path / "pids.json"
    async with VllmServer(fake_spec("children", "--pid-file", str(pid_file))):
        pids = json.loads(pid_file.read_text())
        assert alive(pids["grandchild"])
    assert wait_dead(pids["server"], 5)
    assert wait_dead(pids["grandchild"], 5)


async def test_sigterm_ignored_then_sigkill(fake_spec):
    server = VllmServer(fake_spec("stubborn"))
    await server.start()
    await server.wait_ready()
    started = time.monotonic()
    code = await server.stop(grace_s=1)
    assert code == -9
    assert time.monotonic() - started < 60  # killed after the grace period, not waited on for ever
    assert not alive(server.pid)


async def test_very_long_log_lines_are_kept_whole(fake_spec):
    server = VllmServer(fake_spec("longline"))
    async with server:
        pass
    assert any(len(line) == 3_000_000 for line in server.tail(10))


async def test_stop_all_servers_from_another_thread(fake_spec, tmp_path):
    pid_file = tmp_path / "pids.json"
    server = VllmServer(fake_spec("children", "--pid-file", str(pid_file)))
    await server.start()
    await server.wait_ready()
    pids = json.loads(pid_file.read_text())
    await asyncio.to_thread(stop_all_servers)
    assert wait_dead(pids["server"], 5) and wait_dead(pids["grandchild"], 5)
    assert reaper.live_groups() == set()
    assert await server.stop() is not None  # stopping again after the handler is harmless


async def test_explicit_port_in_use_fails_before_launch(fake_spec):
    import socket

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        server = VllmServer(fake_spec("ok", port=port))
        with pytest.raises(ServerStartError) as caught:
            await server.start()
    assert caught.value.diagnosis.kind == "port_in_use"
    assert server.pid is None


async def test_missing_engine_command_is_an_engine_error(fake_spec):
    server = VllmServer(fake_spec("ok", engine_cmd=["/nonexistent/bin/vllm", "serve"]))
    with pytest.raises(EngineError) as caught:
        await server.start()
    assert "/nonexistent/bin/vllm" in str(caught.value) and "--engine-cmd" in str(caught.value)


async def test_gpu_ids_reach_the_server(fake_spec):
    server = VllmServer(fake_spec("ok", gpu_ids="1,3", port=free_port()))
    async with server:
        pass
    assert any("CUDA_VISIBLE_DEVICES=1,3" in line for line in server.tail(50))


async def test_cancelling_during_startup_stops_the_server(fake_spec):
    server = VllmServer(fake_spec("hang", ready_timeout_s=600))

    async def enter():
        async with server:
            pytest.fail("a hanging server never becomes ready")

    task = asyncio.create_task(enter())
    while server.pid is None:
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert wait_dead(server.pid, 5)
    assert server.pid not in reaper.live_groups()


async def test_the_diagnosis_reads_the_whole_log_not_its_tail(fake_spec, tmp_path):
    """The cause sits 3000 lines above the end (a worker's error, then shutdown noise and the
    wrappers): reading only the tail named the wrapper; the whole log names the cause."""
    real = (FIXTURES / "kv_cache_too_small.log").read_text().splitlines()
    cause_at = next(i for i, line in enumerate(real) if "larger than the available KV cache memory" in line)
    noisy = real[: cause_at + 1] + ["(EngineCore pid=1) WARNING shutting down, still cleaning up"] * 3000 + real[cause_at + 1 :]
    fail_log = tmp_path / "long.log"
    fail_log.write_text("\n".join(noisy) + "\n")
    server = VllmServer(fake_spec("exit", "--fail-log", str(fail_log), "--rc", "1"))
    with pytest.raises(ServerStartError) as caught:
        async with server:
            pytest.fail("a server that exits must not be entered")
    assert caught.value.diagnosis.kind == "max_model_len_too_large"
    assert "larger than the available KV cache memory" in caught.value.diagnosis.cause
