"""Pilot tests of the core flow: Setup -> Advice -> Sweep (live) -> Results, with injected fakes."""

from __future__ import annotations

import json

from conftest import settle, to_advice
from textual.widgets import DataTable, Input, Static

from specadvisor.store import Store
from specadvisor.tui.screens.advice import AdviceScreen
from specadvisor.tui.screens.results import ResultsScreen
from specadvisor.tui.screens.setup import SetupScreen
from specadvisor.tui.screens.sweep import SweepScreen
from specadvisor.tui.widgets.charts import AcceptanceChart, ThroughputChart
from specadvisor.tui.widgets.modals import ErrorModal
from tui_fakes import MODEL


async def test_setup_shows_detected_hardware(make_app):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, SetupScreen)
        text = str(app.screen.query_one("#hardware", Static).render())
        assert "CPU only" in text and "0.32.0" in text and "ngram" in text


async def test_inspecting_a_model_shows_drafters(make_app, calls):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        model = app.screen.query_one("#model", Input)
        model.value = MODEL.id
        model.focus()
        await pilot.press("enter")
        await settle(pilot)
        info = str(app.screen.query_one("#model-info", Static).render())
        assert calls.inspected == [MODEL.id]
        assert "LlamaForCausalLM" in info and "local/smollm2-8layer" in info and "MTP heads    none" in info


async def test_inspection_failure_in_a_worker_opens_error_modal(make_app):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.screen.query_one("#model", Input).value = "missing/model"
        app.screen.query_one("#model", Input).focus()
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ErrorModal)
        assert app.screen.title_text == "Model inspection failed"
        assert "missing/model not found" in app.screen.message and app.screen.hint == "check the id or pass a local folder"


async def test_a_bad_field_is_named_by_its_label_beside_it_and_gets_the_focus(make_app):
    """No modal: the message sits under the field, names its label, and the focus returns to it."""
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.screen.query_one("#model", Input).value = MODEL.id
        app.screen.query_one("#num_prompts", Input).value = "lots"
        await pilot.press("f5")
        await settle(pilot)
        assert isinstance(app.screen, SetupScreen)
        error = app.screen.query_one("#num_prompts-error", Static)
        assert error.display and "Requests: 'lots' is not a whole number" in str(error.render())
        assert app.focused is app.screen.query_one("#num_prompts", Input)
        await pilot.press("ctrl+u", "1", "6")  # typing goes to the field that had the error
        await pilot.pause()
        assert app.screen.query_one("#num_prompts", Input).value == "16"
        assert not app.screen.query_one("#num_prompts-error", Static).display


async def test_inline_validation_as_you_type(make_app):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        field = app.screen.query_one("#temperature", Input)
        field.focus()
        await pilot.press("ctrl+u", "h", "o", "t")
        await pilot.pause()
        error = app.screen.query_one("#temperature-error", Static)
        assert error.display and "Temperature: 'hot' is not a number" in str(error.render())
        assert field.has_class("-invalid")
        await pilot.press("ctrl+u", "0", ",", "7")  # a decimal comma is a number
        await pilot.pause()
        assert not error.display and not field.has_class("-invalid")


async def test_cleared_fields_mean_the_shown_defaults(make_app):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.screen.query_one("#model", Input).value = MODEL.id
        for field_id in ("concurrency", "output_len", "temperature", "num_prompts", "budget"):
            field = app.screen.query_one(f"#{field_id}", Input)
            field.value = ""
            assert "(default)" in field.placeholder
        await pilot.press("f5")
        await settle(pilot)
        assert isinstance(app.screen, AdviceScreen)
        wl = app.state.workload
        assert (wl.concurrency, wl.output_len, wl.temperature, wl.num_prompts) == (1, 256, 0.0, 32)
        assert app.state.budget_s == 30 * 60


async def test_numbers_as_people_type_them(make_app):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.screen.query_one("#model", Input).value = MODEL.id
        app.screen.query_one("#concurrency", Input).value = "1,8"
        app.screen.query_one("#output_len", Input).value = "2k"
        app.screen.query_one("#budget", Input).value = "about 1 h"
        await pilot.press("f5")
        await settle(pilot)
        assert isinstance(app.screen, AdviceScreen)
        assert app.state.workload.output_len == 2000 and app.state.workload.concurrency_levels == [1, 8]
        assert app.state.plan.session.settings.concurrency == [1, 8]
        assert app.state.budget_s == 3600


async def test_focused_field_is_visibly_styled(make_app):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        field = app.screen.query_one("#output_len", Input)
        before = field.styles.background
        field.focus()
        await pilot.pause()
        assert field.styles.background != before and field.styles.text_style.bold


async def test_advice_lists_candidates_and_editable_arms(make_app):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await to_advice(app, pilot)
        table = app.screen.query_one("#arms", DataTable)
        assert [k.value for k in table.rows] == ["baseline", "ngram-n4", "ngram-n2", "suffix-n8"]  # grouped, run order
        await pilot.press("a")
        await pilot.pause()
        app.screen.query_one("#prompt-input", Input).value = "ngram 6"
        await pilot.press("enter")
        await pilot.pause()
        assert "ngram-n6" in [k.value for k in table.rows]
        added = next(a for a in app.state.plan.arms if a.id == "ngram-n6")
        assert added.speculative_config["prompt_lookup_max"] == 4  # kept from the advised candidate
        table.move_cursor(row=3)
        await pilot.press("d")
        await pilot.pause()
        assert "suffix-n8" not in [k.value for k in table.rows]
        table.move_cursor(row=0)
        await pilot.press("d")
        await pilot.pause()
        assert isinstance(app.screen, ErrorModal)
        assert "baseline" in app.screen.message


async def test_sweep_runs_live_and_lands_on_results(make_app, db_path):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await to_advice(app, pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        await pilot.pause(0.2)
        assert isinstance(app.screen, SweepScreen)
        state = app.state.sweep_state
        assert state.finished and state.recommendation is not None
        queue = app.screen.query_one("#queue", DataTable)
        assert queue.row_count == 4
        icons = {str(queue.get_row_at(i)[1]): str(queue.get_row_at(i)[0]) for i in range(4)}
        assert icons == {"baseline": "✔", "n-gram N=4": "★", "suffix N=8": "✔", "n-gram N=2": "✔"}
        points = app.screen.query_one("#throughput", ThroughputChart).points
        assert {p.label: p.measured for p in points}["n-gram N=4"] == 15.4
        assert any(p.predicted is not None for p in points)
        assert "clamped" in str(app.screen.query_one("#warnings", Static).render())
        assert app.screen.query_one("#acceptance", AcceptanceChart).rates == (0.92, 0.77, 0.62, 0.31)  # the recommended arm
        await pilot.press("r")
        await settle(pilot)
        assert isinstance(app.screen, ResultsScreen)
        rec = str(app.screen.query_one("#recommendation-text", Static).render())
        assert "n-gram N=4" in rec and "vllm serve" in rec
        await pilot.press("c")
        assert app.clipboard.startswith("vllm serve HuggingFaceTB/SmolLM2-135M-Instruct")
        assert "--speculative-config" in app.clipboard and "ngram" in app.clipboard
        await pilot.press("j")
        assert json.loads(app.clipboard) == {"method": "ngram", "prompt_lookup_min": 2, "prompt_lookup_max": 4, "num_speculative_tokens": 4}
    with Store.open(db_path) as store:
        [summary] = store.list_sessions()
        assert summary.status == "finished" and summary.arms == 4


async def test_prompt_file_must_exist_and_replaces_the_builtin_set(make_app, tmp_path):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.screen.query_one("#model", Input).value = MODEL.id
        app.screen.query_one("#prompt_file", Input).value = str(tmp_path / "missing.jsonl")
        await pilot.press("f5")
        await settle(pilot)
        assert isinstance(app.screen, SetupScreen)
        assert "Prompt file:" in str(app.screen.query_one("#prompt_file-error", Static).render())
        assert "does not exist" in str(app.screen.query_one("#prompt_file-error", Static).render())
        prompts = tmp_path / "mine.jsonl"
        prompts.write_text('{"prompt": "def add(a, b):"}\n')
        app.screen.query_one("#prompt_file", Input).value = str(prompts)
        await pilot.press("f5")
        await settle(pilot)
        assert isinstance(app.screen, AdviceScreen)
        assert app.state.plan.session.settings.prompt_source == str(prompts)


async def test_help_is_generated_from_the_key_bindings(make_app):
    from specadvisor.tui.screens.advice import AdviceScreen as Advice
    from specadvisor.tui.screens.help import help_markdown

    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        text = help_markdown(app)
        assert "| Advice |" in text and "`b` plan within a time" in text and "`x` export plan" in text
        assert all((b.tooltip or b.description).lower() in text for b in Advice.BINDINGS if b.description)
        assert "`f3` sessions" in text.lower()
        assert "ctrl+a" not in text.lower() and "^a" not in text  # issue 41: Ctrl+A is the fields' line start, not a key of ours
        assert "| Train |" in text and "stop training" in text


async def test_engine_provisioning_shows_its_progress_inside_the_tui(db_path, calls):
    """`specadvisor demo`: the app opens at once, provisioning lines stream into it, then the sweep starts."""
    import threading

    from specadvisor.tui.app import create_app
    from specadvisor.tui.screens.provision import ProvisionScreen
    from tui_fakes import fake_services, finished_session

    release = threading.Event()
    ready = []  # the services the prepared engine comes with: the app must launch through these

    def prepare(progress):
        progress("[1/5] creating the engine venv")
        progress("[5/5] converting SmolLM2-135M-Instruct")
        release.wait(10)
        with Store.open(db_path) as store:
            session = finished_session(store).model_copy(update={"results": [], "status": "planned", "recommendation": None})
        ready.append(fake_services(db_path, calls))
        return ready[-1], session

    app = create_app(fake_services(db_path, calls), cursor_blink=False, prepare=prepare)
    app.refresh_interval, app.chart_interval = 0.02, 0.05
    async with app.run_test(size=(100, 30)) as pilot:
        for _ in range(40):
            await pilot.pause(0.05)
            if isinstance(app.screen, ProvisionScreen) and len(app.screen.lines) == 2:
                break
        assert isinstance(app.screen, ProvisionScreen)
        assert app.screen.lines == ["[1/5] creating the engine venv", "[5/5] converting SmolLM2-135M-Instruct"]
        release.set()
        await settle(pilot)
        assert isinstance(app.screen, SweepScreen) and calls.runners
        assert app.state.services is ready[0]


async def test_the_edit_workload_picks_its_prompt_set_and_output_length(make_app):
    from textual.widgets import Select

    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.screen.query_one("#model", Input).value = MODEL.id
        app.screen.query_one("#output_len", Input).value = "256"  # the usual default
        app.screen.query_one("#kind", Select).value = "edit"
        await settle(pilot)
        assert app.screen.query_one("#source", Select).value == "edit"
        assert app.screen.query_one("#output_len", Input).value == "128"  # edits stay inside the copy
        await pilot.press("f5")
        await settle(pilot)
        assert isinstance(app.screen, AdviceScreen)
        settings = app.state.plan.session.settings
        assert (settings.prompt_source, settings.output_len) == ("edit", 128)
        app.screen.app.pop_screen()
        await settle(pilot)
        app.screen.query_one("#source", Select).value = "rename"  # the long edits: their own length
        await settle(pilot)
        assert app.screen.query_one("#output_len", Input).value == "320"
        app.screen.query_one("#output_len", Input).value = "300"  # a length the user typed is kept
        app.screen.query_one("#source", Select).value = "humaneval"
        await settle(pilot)
        assert app.screen.query_one("#output_len", Input).value == "300"


async def test_the_time_limit_field_refuses_nonsense_in_one_line_and_starts_nothing(make_app, calls):
    """`sweep --time-limit` in the form: NaN, infinity, zero, a negative and a limit over the 7 days
    declared on SweepSettings each read as one line under the field, and nothing is advised or run."""
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.screen.query_one("#model", Input).value = MODEL.id
        expected = {
            "nan": "Time limit: cannot read 'nan' as a duration",
            "inf": "Time limit: cannot read 'inf' as a duration",
            "0": "Time limit must be more than zero",
            "-5": "Time limit: cannot read '-5' as a duration",
            "1e308": "Time limit: cannot read '1e308' as a duration",
            "99999999": "Time limit: 1e+08 min is over the 10080 min limit",
        }
        for text, message in expected.items():
            app.screen.query_one("#time_limit_s", Input).value = text
            await pilot.press("f5")
            await settle(pilot)
            assert isinstance(app.screen, SetupScreen)
            shown = str(app.screen.query_one("#time_limit_s-error", Static).render())
            assert message in shown and "\n" not in shown.strip(), (text, shown)
            assert app.focused is app.screen.query_one("#time_limit_s", Input)
        assert calls.inspected == [] and calls.runners == [] and app.state.plan is None


async def test_the_time_limit_reaches_the_sweep_and_survives_a_replan(make_app, calls):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.screen.query_one("#model", Input).value = MODEL.id
        assert "none" in app.screen.query_one("#time_limit_s", Input).placeholder  # empty: no limit
        app.screen.query_one("#time_limit_s", Input).value = "1 h 30 min"
        await pilot.press("f5")
        await settle(pilot)
        assert isinstance(app.screen, AdviceScreen)
        assert app.state.plan.session.settings.time_limit_s == 5400
        app.screen.replan(None)  # what the budget key does once answered
        await settle(pilot)
        assert app.state.plan.session.settings.time_limit_s == 5400
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert calls.runners[0].session.settings.time_limit_s == 5400


async def test_a_cleared_time_limit_means_none(make_app):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await to_advice(app, pilot)
        assert app.state.plan.session.settings.time_limit_s is None
