"""Chart refresh: how fast the pure drawing is, and how often the live chart repaints during a sweep.

The live acceptance chart is meant to update about once a second however fast events arrive; the
drawing itself must be cheap enough to never be the bottleneck.

    python benchmarks/tui_chart_refresh.py [--seconds 6]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "tui"))

from specadvisor.charts import ThroughputPoint, acceptance_rows, throughput_rows
from specadvisor.domain import Arm, MetricsSample, MetricsSampled, Progress, ServerStarting, Session
from specadvisor.tui.app import create_app
from specadvisor.tui.widgets.charts import AcceptanceChart
from tui_fakes import fake_services


def pure_drawing() -> tuple[float, float]:
    rates = [0.92, 0.77, 0.62, 0.31, 0.2, 0.1, 0.05, 0.01]
    points = [ThroughputPoint(f"ngram N={n}", 10.0 + n, 11.0 + n) for n in range(1, 9)]
    n = 20000
    t0 = time.perf_counter()
    for _ in range(n):
        acceptance_rows(rates, 100)
    t1 = time.perf_counter()
    for _ in range(n):
        throughput_rows(points, 100)
    t2 = time.perf_counter()
    return n / (t1 - t0), n / (t2 - t1)


class StreamingRunner:
    """Metrics samples as fast as the loop takes them, for `seconds`."""

    def __init__(self, session: Session, seconds: float):
        self.session, self.seconds, self.samples = session, seconds, 0

    def cancel(self) -> None:
        pass

    async def events(self):
        arm = self.session.arms[0]
        yield ServerStarting(arm_id=arm.id, command=["vllm"])
        end = time.perf_counter() + self.seconds
        while time.perf_counter() < end:
            self.samples += 1
            d = float(self.samples)
            rates = [0.9, 0.7 + 0.1 * ((self.samples // 50) % 2), 0.5, 0.3]
            yield MetricsSampled(
                sample=MetricsSample(arm_id=arm.id, t=d, num_drafts=d, num_accepted_tokens=sum(rates) * d, accepted_per_position=[r * d for r in rates])
            )
            yield Progress(arm_id=arm.id, completed=self.samples, total=10**9)
            await asyncio.sleep(0.001)


def live_refresh(seconds: float) -> tuple[int, float, int]:
    renders: list[float] = []
    original = AcceptanceChart.render

    def counting_render(self):
        start = time.perf_counter()
        out = original(self)
        renders.append(time.perf_counter() - start)
        return out

    AcceptanceChart.render = counting_render
    session = Session(
        model="synthetic",
        arms=[Arm(id="ngram-n4", label="ngram N=4", method="ngram", n=4, speculative_config={"method": "ngram", "num_speculative_tokens": 4})],
    )
    runners: list[StreamingRunner] = []
    with tempfile.TemporaryDirectory() as tmp:
        services = fake_services(Path(tmp) / "bench.db")
        services.make_runner = lambda s, store: runners.append(StreamingRunner(s, seconds)) or runners[-1]
        app = create_app(services, sweep=session, cursor_blink=False)

        async def drive(pilot) -> None:
            await pilot.pause(0.5)
            renders.clear()
            await asyncio.sleep(seconds - 1.0)
            app.exit(0)

        app.run(headless=True, size=(120, 40), auto_pilot=drive)
    AcceptanceChart.render = original
    return len(renders), max(renders, default=0.0), runners[0].samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6.0)
    args = parser.parse_args()
    acc, thr = pure_drawing()
    print(f"pure drawing: acceptance chart (8 positions, 100 cols) {acc:,.0f}/s; throughput chart (8 arms) {thr:,.0f}/s")
    count, worst, samples = live_refresh(args.seconds)
    window = args.seconds - 1.0
    print(
        f"live: {samples} metrics samples streamed in {args.seconds:.0f} s; acceptance chart repainted {count} times in "
        f"{window:.1f} s = {count / window:.2f} Hz (target about 1 Hz); slowest render {worst * 1000:.2f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
