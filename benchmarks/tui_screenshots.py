"""Regenerate assets/screenshots/*.svg: every TUI screen, from a REAL sweep on the CPU engine.

Setup and Advice use the real probes and advisor on the CPU engine's SmolLM2; the sweep is the demo's
(baseline + n-gram N=2,4 on HumanEval prompts, real `vllm serve`); Results and Sessions show what it
stored. Takes a few minutes on 2 cores. `--fake` uses the test fakes instead (seconds, synthetic).

    python benchmarks/tui_screenshots.py [--fake] [--out assets/screenshots] [--size 120x40]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "tui"))


async def wait_for(predicate, pilot, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit("timed out waiting for the sweep")
        await pilot.pause(0.5)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fake", action="store_true", help="synthetic runner and profiles (fast)")
    parser.add_argument("--out", type=Path, default=ROOT / "assets" / "screenshots")
    parser.add_argument("--size", default="120x40")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    args.out.mkdir(parents=True, exist_ok=True)

    from specadvisor.app.demo import demo
    from specadvisor.tui.app import create_app
    from specadvisor.tui.services import default_services

    db = Path(tempfile.mkdtemp()) / "screens.db"
    if args.fake:
        from tui_fakes import MODEL, fake_services

        services = fake_services(db, delay=0.3)
        model_ref = MODEL.id
        session = None
    else:
        from specadvisor.engine.cpu import ensure_cpu_engine

        engine = ensure_cpu_engine(lambda line: print(line, file=sys.stderr))
        services = default_services(db, server_env=dict(engine.env))
        model_ref = str(engine.model_dir)
        session = demo(engine, [2, 4], num_prompts=6, output_len=64).session
    app = create_app(services, cursor_blink=False)

    def save(name: str) -> None:
        app.save_screenshot(filename=f"{name}.svg", path=str(args.out))
        print(f"wrote {args.out / (name + '.svg')}")

    async def tour(pilot) -> None:
        await app.workers.wait_for_complete()
        app.screen.query_one("#model").value = model_ref
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause(0.3)
        save("setup")
        await pilot.press("f5")
        await app.workers.wait_for_complete()
        await pilot.pause(0.3)
        save("advice")
        if session is None:
            app.start_sweep(app.state.plan.session)
        else:
            app.start_sweep(session)
        state = app.state.sweep_state
        await wait_for(lambda: any(r.arm.speculative_config and r.completed >= 2 and state.rates for r in state.arms.values()) or state.finished, pilot, 900)
        await pilot.pause(1.5)
        save("sweep-live")
        await wait_for(lambda: state.finished or not app.state.sweep_running, pilot, 1200)
        await pilot.pause(1.5)
        await pilot.press("l")
        await pilot.pause(0.5)
        save("sweep-finished")
        await pilot.press("r")
        await pilot.pause(0.5)
        save("results")
        await pilot.press("f3")
        await pilot.pause(0.5)
        save("sessions")
        await pilot.press("f1")
        await pilot.pause(0.5)
        save("help")
        app.exit(0)

    app.run(headless=True, size=(width, height), auto_pilot=tour)
    return 0


if __name__ == "__main__":
    sys.exit(main())
