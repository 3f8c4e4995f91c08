"""Fakes at the process boundary: a server that never spawns vLLM and a measure function that
returns figures from a table. Everything else in these tests (plan, runner, store) is real."""

from __future__ import annotations

import asyncio
from typing import ClassVar

from specadvisor.domain import ArmFinished, ArmResult, PositionStats, Progress
from specadvisor.errors import EngineError

RATES = [0.9, 0.7, 0.5, 0.3, 0.2, 0.1, 0.05, 0.02]


def spec_result(arm_id: str, n: int | None, throughput: float, rates: list[float] = RATES, ci: float = 0.01) -> ArmResult:
    per_pos = [PositionStats(position=i, accepted=int(r * 1000), drafts=1000, rate=r) for i, r in enumerate(rates[: n or 0])]
    return ArmResult(
        arm_id=arm_id,
        completed=8,
        output_tokens=512,
        output_throughput=throughput,
        output_throughput_ci=(throughput * (1 - ci), throughput * (1 + ci)),
        mean_acceptance_length=(1 + sum(r.rate for r in per_pos)) if n else None,
        per_position=per_pos,
    )


class FakeServer:
    instances: ClassVar[list[FakeServer]] = []

    def __init__(self, arm, fail_start: bool = False):
        self.arm = arm
        self.fail_start = fail_start
        self.base_url = f"http://127.0.0.1:1/{arm.id}"
        self.command = ["vllm", "serve", "fake", "--arm", arm.id]
        self.started = self.stopped = False
        self.running = False
        self.port = None
        self.diagnosis = None
        self.log_path = None
        self._subs = []
        FakeServer.instances.append(self)

    def subscribe(self, cb):
        self._subs.append(cb)

    def tail(self, n=40):
        return ["INFO fake line", "ERROR fake cause"][-n:]

    async def start(self):
        self.started = True
        self.running = True
        for cb in self._subs:
            cb("INFO starting fake server")

    async def wait_ready(self):
        if self.fail_start:
            self.running = False
            raise EngineError("fake server exited during start-up", hint="fix the fake")
        return 1.5

    async def stop(self):
        self.stopped = True
        self.running = False


class FakeMeasure:
    """Throughput by arm id (default from a function of N); `crash` arm ids raise mid-arm;
    `hang` arm ids block until cancelled."""

    def __init__(self, throughput, crash=(), hang=(), first_fraction=0.95):
        self.throughput = throughput
        self.first_fraction = first_fraction
        self.crash = set(crash)
        self.hang = set(hang)
        self.calls: list[str] = []

    async def __call__(self, *, base_url, model_name, arm, settings, prompts, api_key=None, sample_interval_s=1.0, stop=None):
        self.calls.append(arm.id)
        total = settings.num_prompts
        yield Progress(arm_id=arm.id, completed=total // 2, total=total, output_throughput=self.throughput(arm) * self.first_fraction)
        if arm.id in self.crash:
            FakeServer.instances[-1].running = False  # the server process died under the load
            raise EngineError("connection reset by the server", hint="see the server log")
        if arm.id in self.hang:
            await asyncio.sleep(3600)
        yield Progress(arm_id=arm.id, completed=total, total=total, output_throughput=self.throughput(arm))
        yield ArmFinished(result=spec_result(arm.id, arm.n, self.throughput(arm)))


def no_prompts(session):
    return None
