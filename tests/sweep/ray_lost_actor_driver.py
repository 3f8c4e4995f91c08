"""Driver for test_sweep_ray's lost-actor test, run in its own process (Ray's connection state stays
out of pytest's): a two-arm sweep on the cluster at argv[1] with the stand-in vLLM, whose ngram arm
never gets ready and has its actor SIGKILLed as soon as it starts. Prints a JSON summary."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

from specadvisor.domain import SweepSettings
from specadvisor.store import Store
from specadvisor.sweep.plan import plan_from_methods
from specadvisor.sweep.ray_cluster import ray_runner
from specadvisor.sweep.runner import SweepRunner

FAKE_VLLM = Path(__file__).resolve().parents[1] / "engine" / "fake_vllm.py"


async def main(address: str, db: str) -> dict:
    settings = SweepSettings(num_prompts=2, output_len=4, warmup=0, bracket=False, engine_cmd=[sys.executable, str(FAKE_VLLM), "--mode", "ok"])
    plan = plan_from_methods("fake-model", [("ngram", {})], [2], settings)
    kwargs = ray_runner(address, "auto", plan.session, {})
    real_factory, servers = kwargs["server_factory"], {}

    def factory(arm, session, placement=None):
        server = real_factory(arm, session, placement)
        if arm.id == "ngram-n2":  # this arm's server never gets ready; its actor is then killed
            server.spec_dict["engine_cmd"] = [sys.executable, str(FAKE_VLLM), "--mode", "hang"]
        servers[arm.id] = server
        return server

    kwargs["server_factory"] = factory
    store = Store.open(db)
    runner = SweepRunner(plan, store, **kwargs)
    kinds = []
    async for event in runner.events():
        kinds.append(event.kind)
        if event.kind == "server_starting" and event.arm_id == "ngram-n2":
            os.kill(servers["ngram-n2"].actor_pid, signal.SIGKILL)  # the node "dies" mid-arm
    store.close()
    return {"session_id": plan.session.id, "kinds": kinds, "slots": [s.label for s in kwargs["slots"]], "baseline_command": servers["baseline"].command}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2]))))
