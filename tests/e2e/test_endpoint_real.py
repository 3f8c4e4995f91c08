"""Attach mode against a real server: `specadvisor sweep --endpoint URL` launches nothing, reads the
server's effective speculative config from /server_info, and measures it as one arm."""

from __future__ import annotations

import asyncio
import json
import os
import sys

import pytest

from specadvisor.engine import ServerSpec, VllmServer
from specadvisor.store import Store

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.timeout(900)]

CONFIG = {"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_min": 2, "prompt_lookup_max": 4}


async def test_sweep_endpoint_measures_a_running_server_as_one_arm(cpu_engine, tmp_path):
    spec = ServerSpec(
        model=str(cpu_engine.model_dir),
        speculative_config=CONFIG,
        engine_cmd=list(cpu_engine.engine_cmd),
        served_model_name="smol-attached",
        extra_args=list(cpu_engine.server_args),
        env=dict(cpu_engine.env),
        ready_timeout_s=600,
        log_path=tmp_path / "server.log",
    )
    db = tmp_path / "attach.db"
    async with VllmServer(spec) as server:
        cli = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "specadvisor",
            "--db",
            str(db),
            "sweep",
            "--endpoint",
            server.base_url,
            "--num-prompts",
            "4",
            "--output-len",
            "32",
            "--warmup",
            "1",
            "--json",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=dict(os.environ),
        )
        out, err = await cli.communicate()
        assert cli.returncode == 0, err.decode()[-2000:]
        assert server.running, "attach mode must not stop the server it measured"

    summary = json.loads(out)
    assert summary["launches_used"] == 1 and summary["vllm_version"].startswith("0.32")
    [arm] = summary["arms"]
    assert arm["status"] == "ok"
    assert arm["speculative_config"]["method"] == "ngram"  # read from /server_info, not given on the CLI
    assert arm["speculative_config"]["num_speculative_tokens"] == 3
    assert arm["output_throughput"] > 0 and arm["mean_acceptance_length"] >= 1.0
    assert len(arm["per_position_acceptance"]) == 3
    assert all(0.0 <= r <= 1.0 for r in arm["per_position_acceptance"])

    with Store.open(db) as store:
        session = store.get_session(summary["session_id"])
    assert session.model == "smol-attached" and session.settings.endpoint == server.base_url
    assert session.results[0].completed == 4
