"""The TUI's `--parallel` choice: `p` on the Advice screen, and the real service wiring turning it into slots."""

from __future__ import annotations

import os
from dataclasses import replace

from conftest import settle, to_advice
from textual.widgets import Input, Static

from specadvisor.domain import EngineInfo, GpuInfo
from specadvisor.store import Store
from specadvisor.tui.services import default_services
from specadvisor.tui.widgets.modals import ErrorModal
from tui_fakes import ADVICE, HARDWARE, MODEL, WORKLOAD


async def answer(pilot, text):
    await pilot.press("p")
    await pilot.pause()
    app = pilot.app
    app.screen.query_one("#prompt-input", Input).value = text
    await pilot.press("enter")
    await pilot.pause()


async def test_p_sets_servers_at_once_and_refuses_nonsense(make_app):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await to_advice(app, pilot)
        assert app.state.plan.session.settings.parallel_choice == "auto"
        await answer(pilot, "2")
        assert app.state.plan.session.settings.parallel_choice == "2"
        assert "2 at once" in str(app.screen.query_one("#estimate", Static).render())
        await answer(pilot, "lots")
        assert isinstance(app.screen, ErrorModal) and "neither 'auto' nor a whole number" in app.screen.message
        assert app.state.plan.session.settings.parallel_choice == "2"


def test_the_choice_becomes_core_ranges_on_a_cpu_host_and_gpu_groups_on_a_gpu_host(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    services = default_services(tmp_path / "db.sqlite")
    hardware = replace(HARDWARE, gpus=[], engine=EngineInfo(found=True, version="0.33.0", distribution="vllm", platform="cuda", command=["vllm", "serve"]))
    plan = services.plan(ADVICE, MODEL, hardware, WORKLOAD)
    with Store.open(tmp_path / "db.sqlite") as store:
        assert len(services.make_runner(plan.session, store).slots) == 1  # auto without GPUs: serial
        plan.session.settings = plan.session.settings.replace(parallel_choice="2")
        assert [s.label for s in services.make_runner(plan.session, store).slots] == ["cores 0-1", "cores 2-3"]
        gpus = [GpuInfo(index=i, vendor="other", name="X") for i in range(4)]
        plan.session.hardware = replace(hardware, gpus=gpus)
        plan.session.settings = plan.session.settings.replace(parallel_choice="auto")
        assert [s.gpu_ids for s in services.make_runner(plan.session, store).slots] == ["0", "1", "2", "3"]


async def test_servers_at_once_shorten_the_estimate_and_the_budget_keeps_more(make_app):
    """Issue 41: `p 8` changed neither the estimate nor what the budget trimmed."""
    from domain_helpers import gpu_hardware

    app = make_app()
    app.state.services.detect = gpu_hardware
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.screen.query_one("#budget", Input).value = "6 min"
        await to_advice(app, pilot)
        serial = app.state.plan.estimate_seconds()
        serial_arms = len(app.state.plan.arms)
        assert app.state.plan.left_out  # the budget left arms out, one server at a time
        await answer(pilot, "4")
        await settle(pilot)
        assert app.state.plan.session.settings.parallel_choice == "4" and app.state.parallel == "4"
        assert app.state.plan.estimate_seconds() < serial and len(app.state.plan.arms) > serial_arms
        assert "4 at once" in str(app.screen.query_one("#estimate", Static).render())
