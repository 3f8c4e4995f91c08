"""Memory of the TUI during a 10000-request sweep (target: peak RSS under 250 MB).

A synthetic event stream of the size a real long sweep produces (per request: a Progress event, a
/metrics sample and a server log line) flows through the fake runner into the real app, headless
at 120x40, with the live screen redrawing as it does for users. RSS is sampled every 50 ms.

    python benchmarks/tui_sweep_memory.py [--requests 10000] [--arms 5]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "tui"))

from specadvisor.domain import (
    Arm,
    ArmFinished,
    ArmQueued,
    MetricsSample,
    MetricsSampled,
    Progress,
    ServerLog,
    ServerReady,
    ServerStarting,
    Session,
    SweepFinished,
)
from specadvisor.tui.app import create_app
from tui_fakes import RATES, arm_result, fake_services


class SyntheticRunner:
    """`requests` requests spread over `arms` arms; yields control between events like a real stream."""

    def __init__(self, session: Session, requests: int):
        self.session, self.requests = session, requests
        self.events_sent = 0

    def cancel(self) -> None:
        pass

    async def events(self):
        arms = self.session.arms
        per_arm = self.requests // len(arms)
        for arm in arms:
            yield ArmQueued(arm=arm)
        for arm in arms:
            yield ServerStarting(arm_id=arm.id, command=["vllm", "serve", "model"])
            yield ServerReady(arm_id=arm.id, startup_s=60.0)
            rates = RATES["ngram-n4"] if arm.speculative_config else []
            for done in range(1, per_arm + 1):
                self.events_sent += 3 if rates else 2
                yield Progress(arm_id=arm.id, completed=done, total=per_arm, output_throughput=12.0)
                yield ServerLog(arm_id=arm.id, line=f'INFO: 127.0.0.1 - "POST /v1/completions HTTP/1.1" 200 OK request {done} ' + "x" * 80)
                if rates:
                    d = float(done * 10)
                    yield MetricsSampled(
                        sample=MetricsSample(
                            arm_id=arm.id, t=done, num_drafts=d, num_accepted_tokens=sum(rates) * d, accepted_per_position=[r * d for r in rates]
                        )
                    )
                await asyncio.sleep(0)
            result = arm_result("ngram-n4" if rates else "baseline", per_arm).model_copy(update={"arm_id": arm.id})
            yield ArmFinished(result=result)
        yield SweepFinished()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=10000)
    parser.add_argument("--arms", type=int, default=5)
    args = parser.parse_args()

    proc = psutil.Process()
    peak = [proc.memory_info().rss]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], proc.memory_info().rss)
            time.sleep(0.05)

    arms = [Arm(id="baseline", label="baseline")] + [
        Arm(id=f"ngram-n{n}", label=f"ngram N={n}", method="ngram", n=n, speculative_config={"method": "ngram", "num_speculative_tokens": n})
        for n in range(1, args.arms)
    ]
    session = Session(model="synthetic", arms=arms)
    runners: list[SyntheticRunner] = []
    with tempfile.TemporaryDirectory() as tmp:
        services = fake_services(Path(tmp) / "bench.db")
        services.make_runner = lambda s, store: runners.append(SyntheticRunner(s, args.requests)) or runners[-1]
        app = create_app(services, sweep=session, cursor_blink=False)
        timings = {}

        async def drive(pilot) -> None:
            rss_start = proc.memory_info().rss
            t0 = time.perf_counter()
            await pilot.press("l")  # the server log open: the most expensive view
            while not app.state.sweep_state.finished:
                await asyncio.sleep(0.2)
            await pilot.pause(1.2)
            timings.update(seconds=time.perf_counter() - t0, rss_start=rss_start, rss_end=proc.memory_info().rss)
            app.exit(0)

        threading.Thread(target=sample, daemon=True).start()
        app.run(headless=True, size=(120, 40), auto_pilot=drive)
        stop.set()
    sent = runners[0].events_sent
    mb = 1024 * 1024
    print(f"{args.requests} requests over {args.arms} arms: {sent} events in {timings['seconds']:.1f} s ({sent / timings['seconds']:.0f} events/s)")
    print(f"RSS at sweep start {timings['rss_start'] / mb:.0f} MB, at end {timings['rss_end'] / mb:.0f} MB, peak {peak[0] / mb:.0f} MB (target < 250 MB)")
    print(f"log lines kept {len(app.state.sweep_state.log)} of {app.state.sweep_state.log_count}")
    return 0 if peak[0] < 250 * mb else 1


if __name__ == "__main__":
    sys.exit(main())
