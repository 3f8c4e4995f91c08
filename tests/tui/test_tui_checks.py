"""Issue 24 on screen: a plan checked against the machine and the budget before Start, a GPU choice in
Setup, progress that tells the truth, and the small things (palette, Ctrl+A, screenshots, honest copy)."""

from __future__ import annotations

from dataclasses import replace

from conftest import settle, to_advice
from textual.widgets import DataTable, Input, ProgressBar, Static

from specadvisor.store import Store
from specadvisor.tui.screens.advice import AdviceScreen
from specadvisor.tui.screens.results import ResultsScreen
from specadvisor.tui.screens.setup import SetupScreen
from specadvisor.tui.screens.sweep import SweepScreen
from specadvisor.tui.widgets.modals import ConfirmModal, InfoModal
from tui_fakes import ADVICE, HARDWARE, MODEL, finished_session, seconds_into_startup, starting_server


def text(app, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


def notices(app) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def test_an_8b_model_on_this_cpu_host_warns_in_the_plan_and_start_asks(make_app, calls):
    """Issue 24: an 8B bf16 model on a 24 GiB CPU host planned with a green Start and no warning."""
    app = make_app()
    app.state.services.inspect_model = lambda ref: MODEL.model_copy(update={"id": ref, "params_b": 8.0, "dtype": "bfloat16"})
    async with app.run_test(size=(120, 40)) as pilot:
        await to_advice(app, pilot, model="meta-llama/Llama-3.1-8B-Instruct")
        note = text(app, "#host-note")
        assert note.startswith("⚠ baseline, n-gram") and "21.9 GiB per server" in note and "19.2 GiB this host can give" in note
        tooltip = str(app.screen.query_one("#host-note", Static).tooltip)  # the arithmetic and what to do
        assert "weights 14.9 GiB bfloat16" in tooltip and "of 24.0 GiB RAM" in tooltip and "use a smaller or quantized model" in tooltip
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal) and "memory:" in app.screen.question
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, AdviceScreen) and calls.runners == []
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.press("y")
        await settle(pilot)
        assert len(calls.runners) == 1 and isinstance(app.screen, SweepScreen)


def shown_in(app, selector: str) -> str:
    """The text a widget shows on screen as it is laid out (what is cut or scrolled off is not there), one line
    per row, joined by spaces."""
    region = app.screen.query_one(selector).region
    strips = app.screen._compositor.render_strips()
    return " ".join(strips[y].crop(region.x, region.right).text.strip() for y in range(region.y, region.bottom))


async def test_the_memory_warning_keeps_its_figures_in_the_plan_panel_at_80x24(make_app):
    """Issue 41: at 80x24 the plan panel cut the memory warning after 'each GPU needs': the figures
    (81 GiB per GPU, 72 GiB usable) were lost. The panel shows them first; the sentence is the tooltip."""
    app = make_app()
    deepseek = {"params_b": 671.0, "dtype": "bfloat16", "num_hidden_layers": 61}
    app.state.services.inspect_model = lambda ref: MODEL.model_copy(update={"id": ref, **deepseek})
    async with app.run_test(size=(80, 24)) as pilot:
        await to_advice(app, pilot, model="deepseek-ai/DeepSeek-V3", gpu="H100x8")
        shown = shown_in(app, "#host-note")
        assert "Planned for 8x H100" in shown
        assert "needs about 81 GiB per GPU at TP 8, 72 GiB usable" in shown
        assert "(weights 78," in str(app.screen.query_one("#host-note", Static).tooltip)


async def test_at_80x24_the_plan_panel_keeps_the_over_time_warning(make_app):
    """Issue 41's walk at 80x24: with the advice's two header lines, the plan panel cut its estimate's bottom
    lines and the '⚠ over 1 min by' warning with them. What fails first is at the panel's top."""
    app = make_app()
    header = (
        "for code at concurrency 1: temperature 0.2 (the code workload's usual settings), 64 output tokens (as you passed it); "
        "the sweep measures at temperature 0, 64 output tokens (Setup)"
    )
    app.state.services.advise = lambda hw, model, workload: ADVICE.model_copy(update={"assumed": header})
    async with app.run_test(size=(80, 24)) as pilot:
        await to_advice(app, pilot, budget="1 min")
        shown = shown_in(app, "#host-note")
        assert shown.startswith("⚠ over 1 min by") and "b allows more time" in shown, shown
        # the header says what the advice assumed atop the candidates, not across the plan's rows
        assert "Advice for code at concurrency 1" in shown_in(app, "#candidates")
        assert shown_in(app, "#arms").split() == ["#", "arm", "baseline", "#1", "n-gram", "N=2", "#2", "suffix", "N=8"]


async def test_an_estimate_over_the_budget_says_so_and_start_confirms(make_app, calls):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await to_advice(app, pilot, budget="1 min")
        assert "(plan within 1 min)" in text(app, "#estimate") and text(app, "#host-note").startswith("⚠ over 1 min by")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal) and "time: about" in app.screen.question and "over the 1 min to plan within" in app.screen.question
        await pilot.press("escape")
        await pilot.pause()
        assert calls.runners == []
        # within the budget: Start starts, nothing asked
        await pilot.press("b")
        await pilot.pause()
        app.screen.query_one("#prompt-input", Input).value = "none"
        await pilot.press("enter")
        await settle(pilot)
        assert "⚠ over" not in text(app, "#host-note") and "⚠ over" not in text(app, "#estimate")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert len(calls.runners) == 1


async def test_adding_a_left_out_n_updates_the_list_and_the_counts(make_app):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await to_advice(app, pilot, budget="1 min")
        assert "left out for time: n-gram N=4" in text(app, "#estimate")
        arms_before = len(app.state.plan.arms)
        table = app.screen.query_one("#arms", DataTable)
        table.move_cursor(row=next(i for i, a in enumerate(app.state.plan.arms) if a.method == "ngram"))
        await pilot.press("plus")
        await pilot.pause()
        app.screen.query_one("#prompt-input", Input).value = "4"
        await pilot.press("enter")
        await pilot.pause()
        estimate = text(app, "#estimate")
        assert "n-gram N=4" not in estimate and f"{arms_before + 1} arms" in estimate
        assert "n-gram N=4" in [str(table.get_row_at(i)[1]) for i in range(table.row_count)]


async def test_suffix_is_left_out_when_the_engine_lacks_arctic_inference(make_app, tmp_path):
    venv = tmp_path / "engine"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python3").write_text("")
    site = venv / "lib" / "python3.12" / "site-packages"
    site.mkdir(parents=True)
    (site / "vllm-0.32.0.dist-info").mkdir()
    script = venv / "bin" / "vllm"
    script.write_text(f"#!{venv / 'bin' / 'python3'}\n")
    hardware = replace(HARDWARE, engine=replace(HARDWARE.engine, command=[str(script)]))
    app = make_app()
    app.state.services.detect = lambda: hardware
    async with app.run_test(size=(120, 40)) as pilot:
        await to_advice(app, pilot)
        assert not [a for a in app.state.plan.arms if a.method == "suffix"]
        assert "suffix left out: arctic-inference is not installed in the engine's environment" in text(app, "#host-note")
        # installed there: planned again
        (site / "arctic_inference-0.1.1.dist-info").mkdir()
        await pilot.press("escape")
        await pilot.press("f5")
        await settle(pilot)
        assert [a for a in app.state.plan.arms if a.method == "suffix"]


async def test_a_named_gpu_drives_the_advice_the_plan_and_the_export(make_app, calls, tmp_path):
    seen = []
    app = make_app()
    advise = app.state.services.advise

    def recording(hardware, model, workload):
        seen.append(hardware)
        return advise(hardware, model, workload)

    app.state.services.advise = recording
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        gpu = app.screen.query_one("#gpu", Input)
        gpu.value = "RTX9999"
        await pilot.pause()
        assert "unknown GPU" in text(app, "#gpu-error") and "known GPUs:" in text(app, "#gpu-error")
        gpu.value = "H100x8"
        await pilot.pause()
        assert "Advice for H100x8" in text(app, "#hardware")
        await to_advice(app, pilot)
        assert seen[-1].hypothetical and len(seen[-1].gpus) == 8
        assert app.state.plan.planned_for and "H100" in app.state.plan.planned_for and app.state.plan.session.settings.engine_cmd == []
        assert "Planned for" in text(app, "#host-note") and "H100" in app.screen.sub_title
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert calls.runners == [] and "not this machine" in notices(app)[-1]
        await pilot.press("x")
        await pilot.pause()
        assert app.screen.query_one("#prompt-input", Input).value == "H100x8"
        await pilot.press("enter")
        await pilot.pause()
        app.screen.query_one("#prompt-input", Input).value = str(tmp_path / "h100.json")
        await pilot.press("enter")
        await settle(pilot)
        assert (tmp_path / "h100.json").is_file()
        assert isinstance(app.screen, InfoModal) and "Ranking for 8x" in app.screen.title_text and "#1 n-gram" in app.screen.text
        # back to this machine: the CPU host's plan again
        await pilot.press("escape", "escape")
        await pilot.pause()
        assert isinstance(app.screen, SetupScreen)
        app.screen.query_one("#gpu", Input).value = ""
        await pilot.press("f5")
        await settle(pilot)
        assert not seen[-1].hypothetical and not app.state.plan.planned_for


async def test_the_palette_offers_every_screen_action(make_app):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)

        def titles() -> set[str]:
            return {c.title for c in app.get_system_commands(app.screen)}

        assert {"Advise", "Help", "Sessions"} <= titles()
        await to_advice(app, pilot)
        assert {"Start sweep", "Export plan", "Plan within a time", "Add N", "Capacity"} <= titles()
        await pilot.press("f3")
        await pilot.pause()
        assert {"Import", "Export", "Compare 2", "Resume", "Delete"} <= titles()


async def test_ctrl_a_in_a_text_field_goes_to_the_line_start(make_app):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        field = app.screen.query_one("#model", Input)
        field.value = "Qwen/Qwen3-8B"
        field.cursor_position = len(field.value)
        await pilot.press("ctrl+a")
        await pilot.pause()
        assert field.cursor_position == 0 and isinstance(app.screen, SetupScreen)


async def test_a_screenshot_lands_in_a_folder_that_exists_and_says_where(make_app, tmp_path, monkeypatch):
    monkeypatch.setenv("SPECADVISOR_HOME", str(tmp_path / "home"))
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.deliver_screenshot()
        await pilot.pause(0.5)
        saved = list((tmp_path / "home" / "data" / "screenshots").glob("*.svg"))
        assert len(saved) == 1 and saved[0].read_text().lstrip().startswith("<svg")
        assert any("Saved screenshot to" in n and "screenshots" in n for n in notices(app))


async def test_an_unmeasured_plan_says_not_measured_yet(make_app, db_path):
    from specadvisor.domain import SweepSettings
    from specadvisor.sweep.plan import plan_from_advice
    from tui_fakes import ADVICE

    with Store.open(db_path) as store:
        plan = plan_from_advice(ADVICE, model=MODEL.id, settings=SweepSettings())
        plan.session.name = "saved-plan"
        store.save_session(plan.session)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await settle(pilot)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ResultsScreen)
        shown = text(app, "#recommendation-text")
        assert shown.startswith("Not measured yet") and "Do NOT speculate" not in shown
        assert str(app.screen.query_one("#best-acceptance").render()) == "not measured yet"


async def test_copy_says_where_it_went_not_that_it_landed(make_app, db_path):
    with Store.open(db_path) as store:
        finished_session(store)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await settle(pilot)
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("j")
        await pilot.pause()
        assert notices(app)[-1].startswith("Sent the --speculative-config JSON to the terminal's clipboard (OSC 52)")
        assert not any(n.startswith("Copied") for n in notices(app))


async def test_a_server_start_up_shows_elapsed_seconds_and_the_log_line(make_app, calls):
    SlowStart, _ = starting_server("INFO Loading safetensors checkpoint shards: 50% Completed")

    app = make_app()
    app.state.services.make_runner = SlowStart
    async with app.run_test(size=(120, 40)) as pilot:
        await to_advice(app, pilot)
        await seconds_into_startup(app, pilot, 57.4)  # 57 s into the start-up
        current = text(app, "#current")
        assert current.startswith("baseline · starting 57 s · Loading safetensors"), current
        assert app.screen.query_one("#overall", ProgressBar).percentage == 0
        app.stop_sweep()
        await pilot.pause(0.2)
        assert text(app, "#current").startswith("stopped")


def test_advice_quotes_sessions_measured_here_not_imported_ones(db_path):
    from specadvisor.app.evidence import sessions_measured_here as measured_here

    with Store.open(db_path) as store:
        own = finished_session(store, name="mine")
        theirs = finished_session(store, name="a-teammate's")
        theirs.provenance.origin = "imported"
        for session in (own, theirs):
            session.hardware_fingerprint = HARDWARE.fingerprint()  # the same machine, as far as fingerprints go
            store.save_session(session)
    assert [s.id for s in measured_here(db_path, MODEL.id, HARDWARE)] == [own.id]


async def test_at_80_columns_the_advice_footer_keeps_every_key(make_app):
    """Issue 41: at 80x24 the Advice footer lost p, esc, ^q and f1 (the end of a long row is cut)."""
    from textual.widgets._footer import FooterKey

    app = make_app()
    app.state.services.advise = lambda hw, model, workload: ADVICE.model_copy(update={"suggest_training": True})  # t offered too: the longest row
    async with app.run_test(size=(80, 24)) as pilot:
        await to_advice(app, pilot)
        keys = [k for k in app.screen.query(FooterKey) if k.display]
        shown = {k.key: k.description for k in keys}
        assert {"ctrl+s", "b", "x", "g", "p", "t", "escape", "ctrl+q", "f1"} <= set(shown), shown
        assert all(k.region.right <= 80 and k.region.width >= len(k.description) for k in keys), [(k.key, k.region) for k in keys]
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert {"Start sweep", "Plan within a time", "Export plan", "Add N", "Remove"} <= titles  # the palette keeps the full names


async def test_the_exported_plan_is_the_plan_shown(make_app, db_path, tmp_path):
    """Issue 41: the panel said 7 arms · 8 launches, `x` wrote 23 arms (the full grid, replanned)."""
    import json

    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await to_advice(app, pilot, gpu="H100x8", budget="2 min")
        await pilot.press("p")  # one server at a time: the budget then trims the grid
        await pilot.pause()
        app.screen.query_one("#prompt-input", Input).value = "1"
        await pilot.press("enter")
        await settle(pilot)
        shown = [a.id for a in app.state.plan.arms]
        assert app.state.plan.left_out and len(shown) == 3, shown  # trimmed: the full grid has 4
        await pilot.press("x")
        await pilot.pause()
        await pilot.press("enter")  # H100x8, the GPU the plan on screen is for
        await pilot.pause()
        target = tmp_path / "shown.json"
        app.screen.query_one("#prompt-input", Input).value = str(target)
        await pilot.press("enter")
        await settle(pilot)
        params = json.loads(target.read_text())
        assert len(params) == len(shown) and f"{len(shown)} arms · " in notices(app)[-1]
    with Store.open(db_path) as store:
        [saved] = [s for s in store.list_sessions() if s.status == "planned"]
        assert [a.id for a in store.get_session(saved.id).arms] == shown
