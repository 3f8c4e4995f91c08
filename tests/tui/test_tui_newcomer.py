"""Issue 41's newcomer walk on screen: what the TUI shows is what the CLI prints (a command pasted from
either runs), the Running panel tells the start-up in whole lines, and the Sessions and Compare screens
answer what a reader asks first."""

from __future__ import annotations

import json
import shlex

from conftest import to_advice
from textual.widgets import Static

from tui_fakes import ADVICE


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


async def test_the_running_panel_shows_the_start_up_in_step_with_the_top_bar_in_whole_messages(make_app):
    """Issue 41: the Running panel lagged the top bar (it redrew with the charts) and the live view showed raw
    vLLM log fragments ('warnings.warn(', 'ore pid=...'). Both now read the same start-up second and the
    server's last whole start-up message; the log keeps every raw line."""
    from tui_fakes import seconds_into_startup, starting_server

    SlowStart, _ = starting_server(
        "(EngineCore_DP0 pid=13989) INFO 12-03 23:43:27 [default_loader.py:501] Loading weights took 0.27 seconds",
        "/venv/lib/python3.11/site-packages/vllm/entrypoints/openai/api_server.py:24: DeprecationWarning: deprecated",
        "  warnings.warn(",
    )

    app = make_app()
    app.chart_interval = 30.0  # the charts' slow tick never comes during the test: the panel must not wait for it
    app.state.services.make_runner = SlowStart
    async with app.run_test(size=(120, 40)) as pilot:
        await to_advice(app, pilot)
        state = await seconds_into_startup(app, pilot, 57.4)  # 57 s into the start-up
        top = str(app.screen.query_one("#current", Static).render())
        panel = str(app.screen.query_one("#live-arms", Static).render())
        assert top == "baseline · starting 57 s · Loading weights took 0.27 seconds", top
        assert panel.splitlines()[:2] == ["baseline · starting 57 s", "  Loading weights took 0.27 seconds"], panel
        for shown in (top, panel):
            assert "warnings.warn" not in shown and "pid=" not in shown and "INFO" not in shown
        assert [line for _, line in state.log][-1] == "  warnings.warn("  # the log keeps every line
        app.stop_sweep()
        await pilot.pause(0.2)


async def test_the_bracket_run_keeps_its_own_row_beside_the_baselines(make_app):
    """Issue 41: the baseline's end-of-sweep bracket re-run overwrote the baseline's row in the live table
    (its progress, then its figure, replaced what the first run measured). Each run keeps its own row."""
    from textual.widgets import DataTable

    from specadvisor.domain import ArmFinished, Progress, RunRecord, ServerStarting
    from tui_fakes import arm_result, held_runner

    def measured(arm_id: str, *throughputs: float):
        result = arm_result(arm_id, 8)
        runs = [RunRecord(trial=1, role="trial" if i == 0 else "bracket", completed=8, output_throughput=t) for i, t in enumerate(throughputs)]
        return result.model_copy(update={"output_throughput": sum(throughputs) / len(throughputs), "runs": runs})

    measured_arms = []
    for arm_id, tps in (("baseline", 10.0), ("ngram-n4", 15.4)):
        measured_arms += [
            ServerStarting(arm_id=arm_id, command=["vllm", "serve"]),
            Progress(arm_id=arm_id, completed=8, total=8, output_throughput=tps),
            ArmFinished(result=measured(arm_id, tps)),
        ]
    bracket = [ServerStarting(arm_id="baseline", command=["vllm", "serve"]), Progress(arm_id="baseline", completed=4, total=8, output_throughput=9.0)]
    Bracketed, release = held_runner(measured_arms + bracket, after=[ArmFinished(result=measured("baseline", 10.0, 9.2))])

    def queue(app) -> dict[str, tuple[str, str]]:
        table = app.screen.query_one("#queue", DataTable)
        return {str(r.key.value): tuple(str(c) for c in table.get_row(r.key)[1:]) for r in table.ordered_rows}

    app = make_app()
    app.state.services.make_runner = Bracketed
    async with app.run_test(size=(120, 40)) as pilot:
        await to_advice(app, pilot)
        await pilot.press("ctrl+s")
        await pilot.pause(0.3)
        rows = queue(app)
        assert rows["baseline"] == ("baseline", "10.0 tok/s"), rows  # the first run's figure stays
        assert rows["baseline · bracket re-run"] == ("baseline · bracket", "4/8"), rows
        assert rows["ngram-n4"] == ("n-gram N=4", "15.4 tok/s")
        assert str(app.screen.query_one("#current", Static).render()).startswith("baseline · bracket re-run: measuring 4/8")
        release.set()
        await pilot.pause(0.3)
        rows = queue(app)
        assert rows["baseline"] == ("baseline", "10.0 tok/s") and rows["baseline · bracket re-run"] == ("baseline · bracket", "9.2 tok/s"), rows
        assert app.state.sweep_state.arms["baseline"].result.output_throughput == 9.6  # the arm's result folds both runs
        app.stop_sweep()
        await pilot.pause(0.2)
