"""The capacity runner's event stream over a fake vLLM-compatible server (the process boundary):
one launch per configuration, every rate measured inside it, results stored, a capacity answer."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from fakeserver import FakeConfig, FakeServer
from specadvisor.bench.prompts import Prompt, PromptSet
from specadvisor.domain import ArmFinished, ArmQueued, Progress, ServerLog, SweepFinished, SweepSettings
from specadvisor.store import Store
from specadvisor.sweep.capacity import CapacityRunner
from specadvisor.sweep.plan import plan_from_methods


class Handle:
    def __init__(self):
        self.server = FakeServer(FakeConfig(chunk_delay_s=0.002))
        self.launches = 0

    @property
    def base_url(self) -> str:
        return self.server.base_url

    async def start(self) -> None:
        self.launches += 1
        await self.server.start()

    async def wait_ready(self) -> float:
        return 0.0

    async def stop(self) -> None:
        await self.server.stop()


def test_capacity_runner_streams_rates_and_stores_goodput(tmp_path):
    session = plan_from_methods("m", [("ngram", {})], [2], SweepSettings(goodput=True, slo_tpot_ms=1000, num_prompts=4, output_len=4)).session
    prompts = PromptSet(source="t", prompts=[Prompt(id=str(i), text=f"def f{i}():") for i in range(4)])
    handles: list[Handle] = []

    def factory(arm, session):
        handles.append(Handle())
        return handles[-1]

    with Store.open(tmp_path / "s.db") as store:
        runner = CapacityRunner(session, store, server_factory=factory, prompts=prompts, max_points=3, window_s=0.5)

        async def collect():
            return [e async for e in runner.events()]

        events = asyncio.run(collect())
        stored = store.get_session(session.id)
    assert len(handles) == 2 and all(h.launches == 1 for h in handles), "one launch per configuration"
    assert sum(isinstance(e, ArmQueued) for e in events) == 2
    assert sum(isinstance(e, Progress) for e in events) == 6  # three rates per arm
    assert any(isinstance(e, ServerLog) and "req/s -> p99 TPOT" in e.line for e in events)
    finished = [e.result for e in events if isinstance(e, ArmFinished)]
    assert [r.arm_id for r in finished] == ["baseline", "ngram-n2"] and all(len(r.rate_points) == 3 for r in finished)
    assert isinstance(events[-1], SweepFinished) and events[-1].recommendation is not None
    assert all(r.goodput_rps and r.rate_points for r in stored.results) and stored.status == "finished"
