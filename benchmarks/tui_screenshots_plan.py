"""SVG screenshots of issue 24's answers, into assets/screenshots (real probes, advisor and engine):

- setup-gpu-choice.svg: Setup advising for a named GPU (H100x8) from this CPU-only machine;
- plan-budget-warning.svg: the real advisor's plan for an 8B model, 2k output tokens and a 10 min
  budget on this host: the memory check per arm, suffix left out without arctic-inference, the
  estimate over the budget, Start asking first;
- sweep-startup.svg: a real sweep on the CPU engine during its first server start-up: the phase with
  its elapsed seconds and the server log's last line (the sweep is then stopped, its server too).

    python benchmarks/tui_screenshots_plan.py [--out assets/screenshots] [--model meta-llama/Llama-3.1-8B-Instruct]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIZE = (120, 40)


def setup_and_plan(out: Path, model: str) -> None:
    from specadvisor.tui.app import create_app
    from specadvisor.tui.services import default_services

    app = create_app(default_services(Path(tempfile.mkdtemp()) / "s.db"), cursor_blink=False)

    async def tour(pilot) -> None:
        await pilot.pause(0.5)
        await app.workers.wait_for_complete()
        app.screen.query_one("#model").value = model
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        app.screen.query_one("#gpu").value = "H100x8"
        app.screen.query_one("#gpu").focus()
        await pilot.pause(0.5)
        app.save_screenshot(filename="setup-gpu-choice.svg", path=str(out))
        app.screen.query_one("#gpu").value = ""
        app.screen.query_one("#output_len").value = "2048"
        app.screen.query_one("#budget").value = "10 min"
        await pilot.press("f5")
        await app.workers.wait_for_complete()
        await pilot.pause(0.5)
        await pilot.press("ctrl+s")  # Start asks: the memory and time checks in the question
        await pilot.pause(0.5)
        app.save_screenshot(filename="plan-budget-warning.svg", path=str(out))
        app.exit(0)

    app.run(headless=True, size=SIZE, auto_pilot=tour)


def startup(out: Path) -> None:
    from specadvisor.app.demo import demo
    from specadvisor.engine.cpu import ensure_cpu_engine
    from specadvisor.tui.app import create_app
    from specadvisor.tui.services import default_services

    engine = ensure_cpu_engine(lambda line: print(line, file=sys.stderr))
    services = default_services(Path(tempfile.mkdtemp()) / "s.db", server_env=dict(engine.env))
    app = create_app(services, cursor_blink=False, sweep=demo(engine, [2, 4], num_prompts=4, output_len=16).session)

    async def tour(pilot) -> None:
        state = app.state.sweep_state
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            row = state.arms.get(state.current) if state.current else None
            if row is not None and row.phase == "starting" and row.last_line and state.clock() - (row.started_at or 0) >= 15:
                break
            await pilot.pause(0.5)
        else:
            raise SystemExit("the first server did not show a start-up phase within 300 s")
        await pilot.pause(0.5)
        app.save_screenshot(filename="sweep-startup.svg", path=str(out))
        app.stop_sweep()
        await pilot.pause(1.0)
        app.exit(0)

    app.run(headless=True, size=SIZE, auto_pilot=tour)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "assets" / "screenshots")
    parser.add_argument("--model", default="meta-llama/Llama-3.1-8B-Instruct", help="an 8B model the catalog knows (no download)")
    parser.add_argument("--skip-startup", action="store_true", help="no real vLLM launch (the first two screenshots only)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    setup_and_plan(args.out, args.model)
    print(f"wrote {args.out / 'setup-gpu-choice.svg'} and {args.out / 'plan-budget-warning.svg'}")
    if not args.skip_startup:
        startup(args.out)
        print(f"wrote {args.out / 'sweep-startup.svg'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
