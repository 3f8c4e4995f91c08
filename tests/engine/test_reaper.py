"""No server outlives specadvisor: SIGKILLed parent (PDEATHSIG) and SIGTERM/SIGHUP (handlers)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from engine_helpers import FAKE_VLLM, alive, wait_dead

pytestmark = pytest.mark.timeout(60)

PARENT = """
import asyncio, json, sys, time
from specadvisor.engine import ServerSpec, VllmServer

async def main():
    spec = ServerSpec(model="m", engine_cmd=[sys.executable, {fake!r}, "--mode", {mode!r}, "--pid-file", {pids!r}])
    server = VllmServer(spec)
    await server.start()
    await server.wait_ready()
    print("READY", flush=True)
    await asyncio.sleep(600)

asyncio.run(main())
"""


def start_parent(tmp_path, mode: str) -> tuple[subprocess.Popen, dict]:
    pid_file = tmp_path / "pids.json"
    script = PARENT.format(fake=str(FAKE_VLLM), mode=mode, pids=str(pid_file))
    parent = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
    assert parent.stdout.readline().strip() == "READY"
    return parent, json.loads(pid_file.read_text())


def test_server_dies_when_parent_is_sigkilled(tmp_path):
    parent, pids = start_parent(tmp_path, "ok")
    assert alive(pids["server"])
    parent.kill()
    parent.wait()
    assert wait_dead(pids["server"], 10), "PR_SET_PDEATHSIG should have terminated the orphaned server"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_signal_handler_stops_the_whole_group_then_exits(tmp_path, sig):
    parent, pids = start_parent(tmp_path, "children")
    assert alive(pids["grandchild"])
    started = time.monotonic()
    parent.send_signal(sig)
    assert parent.wait(timeout=20) == -sig  # the default action still happens after the cleanup
    assert wait_dead(pids["server"], 5)
    assert wait_dead(pids["grandchild"], 5), "the handler must kill the server's whole process group"
    assert time.monotonic() - started < 15


def test_sigint_stops_servers_and_interrupts(tmp_path):
    parent, pids = start_parent(tmp_path, "children")
    parent.send_signal(signal.SIGINT)
    assert parent.wait(timeout=20) != 0
    assert wait_dead(pids["server"], 5) and wait_dead(pids["grandchild"], 5)


def test_atexit_stops_servers_left_running(tmp_path):
    pid_file = tmp_path / "pids.json"
    script = f"""
import asyncio, sys
from specadvisor.engine import ServerSpec, VllmServer
async def main():
    server = VllmServer(ServerSpec(model="m", engine_cmd=[sys.executable, {str(FAKE_VLLM)!r}, "--mode", "children", "--pid-file", {str(pid_file)!r}]))
    await server.start()
    await server.wait_ready()
asyncio.run(main())
"""
    subprocess.run([sys.executable, "-c", script], stdin=subprocess.DEVNULL, check=True, timeout=30)
    pids = json.loads(pid_file.read_text())
    assert wait_dead(pids["server"], 5) and wait_dead(pids["grandchild"], 5)
    assert os.path.exists(pid_file)
