"""SVG screenshots of issue 15's answers, into assets/screenshots:

- setup-inline-error.svg: the real Setup screen (real probes) with a bad field named beside it;
- advice-cpu-host.svg: the real advisor's plan for Qwen/Qwen3-8B on this CPU-only host;
- sweep-two-arms.svg: the live view of two arms running side by side (a scripted event stream: the
  figures are synthetic, the screen is the real one);
- goodput-cpu.svg: the Results screen of a real capacity sweep on the CPU engine (`--goodput-db`, a
  database written by `specadvisor sweep --cpu --goodput ...`).

    python benchmarks/tui_screenshots_operator.py [--goodput-db DB] [--out assets/screenshots]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "tui"))
SIZE = (120, 40)


def run(app, tour) -> None:
    app.run(headless=True, size=SIZE, auto_pilot=tour)


def setup_and_advice(out: Path) -> None:
    from specadvisor.tui.app import create_app
    from specadvisor.tui.services import default_services

    app = create_app(default_services(Path(tempfile.mkdtemp()) / "s.db"), cursor_blink=False)

    async def tour(pilot) -> None:
        await pilot.pause(0.5)
        await app.workers.wait_for_complete()
        app.screen.query_one("#model").value = "Qwen/Qwen3-8B"
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        app.screen.query_one("#num_prompts").focus()
        await pilot.press("ctrl+u", *"lots")
        await pilot.press("f5")
        await pilot.pause(0.5)
        app.save_screenshot(filename="setup-inline-error.svg", path=str(out))
        await pilot.press("ctrl+u", "1", "6")
        app.screen.query_one("#output_len").value = "128"
        app.clear_notifications()
        await pilot.press("f5")
        await app.workers.wait_for_complete()
        await pilot.pause(0.5)
        app.save_screenshot(filename="advice-cpu-host.svg", path=str(out))
        app.exit(0)

    run(app, tour)


class TwoArmRunner:
    """Two arms measured side by side (a parallel sweep's event stream), held mid-measurement."""

    def __init__(self, session, store):
        self.session, self.store = session, store

    def cancel(self) -> None:
        pass

    async def events(self):
        from specadvisor.domain import ArmQueued, MetricsSample, MetricsSampled, Progress, ServerReady, ServerStarting, WarmupStarted
        from tui_fakes import RATES, THROUGHPUT

        arms = [a for a in self.session.arms if a.id in ("baseline", "ngram-n4")]
        for arm in self.session.arms:
            yield ArmQueued(arm=arm)
        for arm in arms:
            yield ServerStarting(arm_id=arm.id, command=["vllm", "serve", self.session.model])
            yield ServerReady(arm_id=arm.id, startup_s=31.0)
            yield WarmupStarted(arm_id=arm.id, requests=2)
        for done in range(1, 21):
            for arm in arms:
                tps = THROUGHPUT[arm.id] * (0.85 + 0.15 * min(1.0, done / 8)) + (0.4 if done % 3 == 0 else 0)
                yield Progress(
                    arm_id=arm.id,
                    completed=done,
                    total=32,
                    output_throughput=tps,
                    in_flight=4,
                    concurrency=4,
                    ttft_p50_ms=130.0 + done,
                    ttft_p99_ms=210.0 + 2 * done,
                    tpot_p50_ms=1000 / tps,
                    tpot_p99_ms=1350 / tps,
                )
                rates = RATES.get(arm.id)
                if rates:
                    drafts = 10.0 * done
                    yield MetricsSampled(
                        sample=MetricsSample(
                            arm_id=arm.id,
                            t=float(done),
                            num_drafts=drafts,
                            num_draft_tokens=drafts * len(rates),
                            num_accepted_tokens=sum(r * drafts for r in rates),
                            accepted_per_position=[r * drafts for r in rates],
                        )
                    )
            await asyncio.sleep(0.02)
        await asyncio.Event().wait()  # held: the screenshot is of the sweep in progress


def two_arms(out: Path) -> None:
    from specadvisor.tui.app import create_app
    from tui_fakes import MODEL, WORKLOAD, fake_services

    services = fake_services(Path(tempfile.mkdtemp()) / "s.db")
    services.make_runner = lambda session, store: TwoArmRunner(session, store)
    app = create_app(services, cursor_blink=False, workload=WORKLOAD.model_copy(update={"concurrency": 4}))
    app.refresh_interval, app.chart_interval = 0.05, 0.1

    async def tour(pilot) -> None:
        await pilot.pause(0.5)
        await app.workers.wait_for_complete()
        app.screen.query_one("#model").value = MODEL.id
        await pilot.press("f5")
        await app.workers.wait_for_complete()
        await pilot.press("ctrl+s")
        await pilot.pause(2.0)
        app.save_screenshot(filename="sweep-two-arms.svg", path=str(out))
        app.stop_sweep()
        app.exit(0)

    run(app, tour)


def goodput(out: Path, db: Path) -> None:
    from specadvisor.store import Store
    from specadvisor.tui.app import create_app
    from specadvisor.tui.screens.results import ResultsScreen
    from specadvisor.tui.services import default_services

    with Store.open(db) as store:
        summary = next(s for s in store.list_sessions() if s.status == "finished")
        session = store.get_session(summary.id)
    app = create_app(default_services(db), cursor_blink=False)

    async def tour(pilot) -> None:
        await app.workers.wait_for_complete()
        app.push_screen(ResultsScreen(session))
        await pilot.pause(0.8)
        app.save_screenshot(filename="goodput-cpu.svg", path=str(out))
        app.exit(0)

    run(app, tour)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "assets" / "screenshots")
    parser.add_argument("--goodput-db", type=Path, default=None)
    parser.add_argument("--only", choices=["setup", "two-arms", "goodput"], default=None)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.only in (None, "setup"):
        setup_and_advice(args.out)
    if args.only in (None, "two-arms"):
        two_arms(args.out)
    if args.goodput_db and args.only in (None, "goodput"):
        goodput(args.out, args.goodput_db)
    for name in ("setup-inline-error", "advice-cpu-host", "sweep-two-arms", "goodput-cpu"):
        path = args.out / f"{name}.svg"
        if path.exists():
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
