"""Issue 41 (high): the TUI reaches a vLLM that is not on PATH. Setup takes an engine command (probed as
`detect --engine-cmd` does) and an endpoint (a running server measured as it is, as AIPerf, GuideLLM and
`vllm bench serve` take a URL), and Start refuses before anything launches when no engine answers.
Also the request format (chat | completions | auto) is chosen on the form (issue 38's leftover)."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from conftest import settle
from textual.widgets import DataTable, Input, Select, Static

from specadvisor.domain import EngineInfo
from specadvisor.store import Store
from specadvisor.tui.screens.advice import AdviceScreen
from specadvisor.tui.screens.setup import SetupScreen
from specadvisor.tui.screens.sweep import SweepScreen
from specadvisor.tui.services import default_services
from specadvisor.tui.widgets.modals import ErrorModal
from tui_fakes import HARDWARE, MODEL

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))

NO_ENGINE = replace(HARDWARE, engine=EngineInfo(detail="vLLM is not installed here and no engine command was given (pass --engine-cmd)"))


def text(app, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


async def advise(app, pilot, **fields: str) -> None:
    await settle(pilot)
    app.screen.query_one("#model", Input).value = MODEL.id
    for field, value in fields.items():
        widget = app.screen.query_one(f"#{field}")
        widget.value = value
    await pilot.pause()  # the fields' own checks run as they would while typing
    await pilot.press("f5")
    await settle(pilot)


async def test_start_refuses_before_launching_when_no_vllm_is_found(make_app, calls):
    """Issue 41: with no local vLLM the Start dialog checked only time, then every arm failed."""
    app = make_app()
    app.state.services.detect = lambda: NO_ENGINE
    async with app.run_test(size=(120, 40)) as pilot:
        await advise(app, pilot)
        assert isinstance(app.screen, AdviceScreen)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, ErrorModal) and app.screen.title_text == "Cannot start the sweep"
        assert "no vLLM answered to `vllm serve` on this machine (vLLM is not installed here" in app.screen.message
        assert "Engine command" in app.screen.hint and "Endpoint" in app.screen.hint
        assert calls.runners == []


async def test_an_engine_command_typed_in_setup_is_probed_and_launches_the_sweep(make_app, calls):
    app = make_app()
    probed: list[list[str]] = []

    def probe(cmd: list[str]) -> EngineInfo:
        probed.append(cmd)
        return EngineInfo(found=True, version="0.31.1", distribution="vllm", platform="cpu", command=cmd, detail=f"vllm 0.31.1 behind {cmd[0]}")

    app.state.services.detect = lambda: NO_ENGINE
    app.state.services.probe_engine = probe
    async with app.run_test(size=(120, 40)) as pilot:
        await advise(app, pilot, engine_cmd="'/opt/vllm env/bin/vllm' serve")
        assert probed == [["/opt/vllm env/bin/vllm", "serve"]]
        assert isinstance(app.screen, AdviceScreen)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert len(calls.runners) == 1 and isinstance(app.screen, SweepScreen)
        assert calls.runners[0].session.settings.engine_cmd == ["/opt/vllm env/bin/vllm", "serve"]
    # back on Setup the command is shown again and the machine panel names the probed vLLM
    app2 = make_app()
    app2.state.services.detect = lambda: NO_ENGINE
    app2.state.services.probe_engine = probe
    async with app2.run_test(size=(120, 40)) as pilot:
        await advise(app2, pilot, engine_cmd="vllm-venv/bin/vllm serve")
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app2.screen, SetupScreen)
        assert app2.screen.query_one("#engine_cmd", Input).value == "vllm-venv/bin/vllm serve"
        assert "0.31.1" in text(app2, "#hardware")


async def test_engine_fields_are_checked_inline_and_exclude_each_other(make_app):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.screen.query_one("#engine_cmd", Input).value = "vllm serve --port 9000"
        await pilot.pause()
        assert "Engine command --port is not allowed" in text(app, "#engine_cmd-error")
        app.screen.query_one("#engine_cmd", Input).value = "vllm serve"
        app.screen.query_one("#endpoint", Input).value = "ftp://x"
        await pilot.pause()
        assert "is not an http(s) URL with a host" in text(app, "#endpoint-error")
        await advise(app, pilot, endpoint="http://127.0.0.1:8000")
        assert isinstance(app.screen, SetupScreen)
        assert "Endpoint and Engine command exclude each other" in text(app, "#endpoint-error")


async def test_an_endpoint_is_measured_as_it_runs_and_refused_when_it_stops_answering(make_app, calls, db_path):
    from test_sweep_cli import _AttachableFake

    server = _AttachableFake()
    app = make_app()
    app.state.services.make_runner = default_services(db_path).make_runner  # the real runner, over real HTTP
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await advise(app, pilot, endpoint=server.fake.base_url + "/v1")
            assert isinstance(app.screen, AdviceScreen), getattr(app.screen, "message", "")
            assert "Measures the server at" in text(app, "#host-note") and "serving served-fake" in text(app, "#host-note")
            table = app.screen.query_one("#arms", DataTable)
            assert table.row_count == 1 and "n-gram N=3" in str(table.get_row_at(0)[1])
            await pilot.press("a")
            await pilot.pause()
            assert any("measures a running server as it is" in str(n.message) for n in app._notifications)
            await pilot.press("ctrl+s")
            await settle(pilot)
            assert isinstance(app.screen, SweepScreen)
            await app.workers.wait_for_complete()
            await settle(pilot)
        with Store.open(db_path) as store:
            (summary,) = store.list_sessions()
            session = store.get_session(summary.id)
        assert session.settings.endpoint and session.model == "served-fake" and session.result_for("endpoint").completed == 8
    finally:
        server.close()
    app = make_app()
    server = _AttachableFake()
    async with app.run_test(size=(120, 40)) as pilot:
        await advise(app, pilot, endpoint=server.fake.base_url)
        server.close()  # the server goes away between planning and Start
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, ErrorModal) and app.screen.message.startswith("nothing answers at http://127.0.0.1:")


async def test_the_request_format_is_chosen_on_the_form(make_app, calls):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.screen.query_one("#request_format", Select).value == "auto"
        await advise(app, pilot, request_format="completions")
        assert app.state.plan.session.settings.request_format == "completions"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert calls.runners[0].session.settings.request_format == "completions"
