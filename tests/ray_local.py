"""A throwaway one-node Ray cluster for the tests and benchmarks that run `--ray` (not shipped: users
bring their own cluster)."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from specadvisor.errors import EngineError
from specadvisor.sweep.ray_cluster import import_ray


@contextlib.contextmanager
def local_cluster(cpus: int, env: dict[str, str] | None = None, start_timeout_s: float = 180) -> Iterator[tuple[str, dict[str, str]]]:
    """A throwaway one-node cluster (`ray start --head`, `cpus` CPU slots, no GPUs) for tests and
    benchmarks, on 127.0.0.1 only; yields its address and the environment a driver needs. Stopped at the end whatever happens, by the pids of its own
    processes (those under its private temp dir and their children): `ray stop` would stop every
    Ray process on the machine."""
    import psutil

    import_ray()
    temp = Path(tempfile.mkdtemp(prefix="sa-ray-", dir="/tmp"))  # short: Ray's socket paths must fit 107 bytes
    token = temp / "auth_token"  # token auth (Ray's default) with a token of its own, not ~/.ray's
    token.write_text(secrets.token_hex(32))
    token.chmod(0o600)
    env = {**os.environ, **(env or {}), **loopback_env(token)}
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cmd = [
        str(Path(sys.executable).parent / "ray"),
        "start",
        "--head",
        f"--port={port}",
        f"--num-cpus={cpus}",
        "--num-gpus=0",
        "--node-ip-address=127.0.0.1",
        "--include-dashboard=false",
        "--object-store-memory=100000000",
        f"--temp-dir={temp}",
        "--disable-usage-stats",
    ]
    try:
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=start_timeout_s)
        if out.returncode != 0:
            raise EngineError(f"ray start failed: {out.stderr.strip()[-300:]}", hint="see `ray start --help`")
        yield f"127.0.0.1:{port}", env
    finally:
        for _ in range(3):  # again for any process that started while the first ones stopped
            mine = [p for p in psutil.process_iter(["cmdline"]) if str(temp) in " ".join(p.info["cmdline"] or [])]
            procs = {q.pid: q for p in mine for q in [p, *_children(p)]}
            if not procs:
                break
            for proc in procs.values():
                with contextlib.suppress(psutil.Error):
                    proc.terminate()
            _gone, alive = psutil.wait_procs(list(procs.values()), timeout=15)
            for proc in alive:
                with contextlib.suppress(psutil.Error):
                    proc.kill()
        shutil.rmtree(temp, ignore_errors=True)


def loopback_env(token_path: Path) -> dict[str, str]:
    """Environment for a single-machine cluster and its drivers: Ray's single-node mode (it would
    otherwise rewrite 127.0.0.1 to the host's network address), token auth, no usage stats."""
    return {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token_path), "RAY_USAGE_STATS_ENABLED": "0"}


def _children(proc: Any) -> list[Any]:
    import psutil

    try:
        children: list[Any] = proc.children(recursive=True)
    except psutil.Error:
        return []
    return children
