"""Issue 41's newcomer walk on screen: what the TUI shows is what the CLI prints (a command pasted from
either runs), the Running panel tells the start-up in whole lines, and the Sessions and Compare screens
answer what a reader asks first."""

from __future__ import annotations

import json
import shlex

from conftest import settle
from textual.widgets import Input, Static

from specadvisor.tui.screens.advice import AdviceScreen
from tui_fakes import ADVICE, MODEL


async def to_advice(app, pilot) -> None:
    await settle(pilot)
    app.screen.query_one("#model", Input).value = MODEL.id
    await pilot.press("f5")
    await settle(pilot)
    assert isinstance(app.screen, AdviceScreen)


async def test_the_candidate_shows_its_speculative_config_shell_quoted_as_the_cli_prints_it(make_app):
    """Issue 41: the Advice candidate showed `--speculative-config {"method": "ngram", ...}` unquoted: pasted
    into bash the JSON is split into words (and braces expand). It reads as the CLI's advise prints it."""
    app = make_app()
    async with app.run_test(size=(160, 40)) as pilot:
        await to_advice(app, pilot)
        details = str(app.screen.query(".details").first(Static).render())
        (line,) = [line for line in details.splitlines() if line.startswith("--speculative-config")]
        assert line == """--speculative-config '{"method":"ngram","num_speculative_tokens":2,"prompt_lookup_max":4,"prompt_lookup_min":2}'"""
        flag, value = shlex.split(line)  # what bash hands vLLM
        assert flag == "--speculative-config" and json.loads(value) == ADVICE.candidates[0].speculative_config
