"""The Advice screen's plan: readable labels, grouped in run order, edited per candidate, sized by a
budget, and on a CPU-only host limited to what can be measured here, with the GPU plan exported."""

from __future__ import annotations

import json

from conftest import settle
from textual.widgets import DataTable, Input, Static

from specadvisor.domain import Advice, Candidate
from specadvisor.store import Store
from specadvisor.tui.screens.advice import AdviceScreen
from tui_fakes import ADVICE, MODEL

QWEN_ADVICE = Advice(
    verdict="Speculate: EAGLE-3 drafters are published for this model.",
    candidates=[
        Candidate(
            id="peagle",
            method="eagle3",
            parallel_drafting=True,
            drafter="RedHatAI/Qwen3-8B-speculator.peagle",
            speculative_config={"method": "eagle3", "model": "RedHatAI/Qwen3-8B-speculator.peagle", "parallel_drafting": True, "num_speculative_tokens": 3},
            n_grid=[3, 5, 7],
            score=0.9,
            expected_speedup=(1.8, 2.6),
        ),
        Candidate(
            id="eagle3",
            method="eagle3",
            drafter="RedHatAI/Qwen3-8B-speculator.eagle3",
            speculative_config={"method": "eagle3", "model": "RedHatAI/Qwen3-8B-speculator.eagle3", "num_speculative_tokens": 3},
            n_grid=[3, 4, 7],
            score=0.8,
            expected_speedup=(1.6, 2.3),
        ),
        Candidate(
            id="dflash",
            method="dflash",
            drafter="z-lab/Qwen3-8B-DFlash",
            speculative_config={"method": "dflash", "model": "z-lab/Qwen3-8B-DFlash", "num_speculative_tokens": 8},
            n_grid=[8],
            score=0.7,
        ),
        ADVICE.candidates[0].model_copy(update={"score": 0.3}),
    ],
    vllm_version="0.32.0",
)


def qwen_app(make_app):
    app = make_app()
    app.state.services.advise = lambda hw, model, workload: QWEN_ADVICE
    app.state.services.inspect_model = lambda ref: MODEL.model_copy(update={"id": ref, "params_b": 8.0})
    return app


async def open_advice(app, pilot, budget: str | None = None) -> None:
    await settle(pilot)
    app.screen.query_one("#model", Input).value = "Qwen/Qwen3-8B"
    if budget is not None:
        app.screen.query_one("#budget", Input).value = budget
    await pilot.press("f5")
    await settle(pilot)
    assert isinstance(app.screen, AdviceScreen)


def rows(app) -> list[list[str]]:
    table = app.screen.query_one("#arms", DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


async def test_cpu_only_host_is_told_and_plans_what_it_can(make_app, db_path, tmp_path):
    app = qwen_app(make_app)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_advice(app, pilot)
        note = str(app.screen.query_one("#host-note", Static).render())
        assert "CPU-only host" in note and "P-EAGLE" in note and "EAGLE-3" in note and "DFlash" in note and "cannot be measured here" in note
        assert [r[1] for r in rows(app)] == ["baseline", "n-gram N=4", "n-gram N=2"]
        assert all(a.speculative_config is None or a.speculative_config["method"] == "ngram" for a in app.state.plan.arms)
        # the full plan goes to a GPU machine: serve-params with every advised method, the session saved
        await pilot.press("x")
        await pilot.pause()
        assert app.screen.query_one("#prompt-input", Input).value == "H100x1"
        await pilot.press("enter")  # the GPU machine the plan is for
        await pilot.pause()
        target = tmp_path / "gpu-plan.json"
        app.screen.query_one("#prompt-input", Input).value = str(target)
        await pilot.press("enter")
        await settle(pilot)
        params = json.loads(target.read_text())
        methods = {p["speculative_config"]["method"] if p.get("speculative_config") else None for p in params}
        assert {"eagle3", "dflash", "ngram", None} <= methods
    with Store.open(db_path) as store:
        [saved] = [s for s in store.list_sessions() if s.status == "planned"]
        session = store.get_session(saved.id)
        assert session.settings.engine_cmd == [] and any(a.parallel_drafting for a in session.arms)
        assert session.hardware.hypothetical and "H100" in session.hardware.gpu_label


async def test_gpu_plan_labels_are_unique_grouped_and_header_uncut(make_app):
    from domain_helpers import gpu_hardware

    app = qwen_app(make_app)
    app.state.services.detect = gpu_hardware
    async with app.run_test(size=(120, 40)) as pilot:
        await open_advice(app, pilot, budget="none")
        table = rows(app)
        labels = [r[1] for r in table]
        assert len(labels) == len(set(labels))
        assert labels[:4] == ["baseline", "P-EAGLE N=7 · speculator.peagle", "P-EAGLE N=5 · speculator.peagle", "P-EAGLE N=3 · speculator.peagle"]
        assert [r[0] for r in table][:5] == ["", "#1", "", "", "#2"]  # the candidate number opens each group
        assert not app.screen.query_one("#host-note", Static).display
        titles = [str(c.title) for c in app.screen.query("Collapsible")]
        assert titles[0] == "#1 P-EAGLE · speculator.peagle · 1.80-2.60x"
        assert titles[2] == "#3 DFlash · DFlash"  # no published estimate: nothing to say in the header
        widths = [c.size.width for c in app.screen.query("Collapsible")]
        assert all(len(t) + 4 <= w for t, w in zip(titles, widths, strict=True)), "candidate headers fit their panel"


async def test_budget_sizes_the_plan_and_n_is_added_per_candidate(make_app):
    from domain_helpers import gpu_hardware

    app = qwen_app(make_app)
    app.state.services.detect = gpu_hardware
    async with app.run_test(size=(120, 40)) as pilot:
        await open_advice(app, pilot, budget="none")
        everything = len(app.state.plan.arms)
        await pilot.press("b")
        await pilot.pause()
        app.screen.query_one("#prompt-input", Input).value = "about 10 min"
        await pilot.press("enter")
        await settle(pilot)
        assert app.state.budget_s == 600 and len(app.state.plan.arms) < everything
        estimate = str(app.screen.query_one("#estimate", Static).render())
        assert "(plan within 10 min)" in estimate and "left out for time:" in estimate
        # add N=9 to the highlighted P-EAGLE group: the drafter and flags are kept
        app.screen.query_one("#arms", DataTable).move_cursor(row=1)
        await pilot.press("a")
        await pilot.pause()
        app.screen.query_one("#prompt-input", Input).value = "9"
        await pilot.press("enter")
        await pilot.pause()
        added = next(a for a in app.state.plan.arms if a.n == 9)
        assert added.speculative_config["parallel_drafting"] and added.speculative_config["model"].endswith("peagle")
        assert "P-EAGLE N=9 · speculator.peagle" in [r[1] for r in rows(app)]


async def test_capacity_key_starts_a_goodput_sweep_with_the_target(make_app, calls):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.screen.query_one("#model", Input).value = MODEL.id
        await pilot.press("f5")
        await settle(pilot)
        await pilot.press("g")
        await pilot.pause()
        app.screen.query_one("#prompt-input", Input).value = "250 ms, 2000"
        await pilot.press("enter")
        await settle(pilot)
        settings = calls.runners[-1].session.settings
        assert settings.goodput and settings.slo_tpot_ms == 250 and settings.slo_ttft_ms == 2000


async def test_a_capacity_target_past_its_bound_is_refused_and_the_session_stays_readable(make_app, calls):
    """The Capacity prompt took a p99 TPOT target of 1e12 ms, saved it past validation (model_copy)
    and the session could no longer be read ("Input should be less than or equal to 86400000"). The
    target is now checked as --slo-tpot-ms is: one readable line, nothing run, the plan unchanged."""
    from specadvisor.domain import Session

    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.screen.query_one("#model", Input).value = MODEL.id
        await pilot.press("f5")
        await settle(pilot)
        await pilot.press("g")
        await pilot.pause()
        app.screen.query_one("#prompt-input", Input).value = "1e12"
        await pilot.press("enter")
        await settle(pilot)
        shown = " ".join(str(w.render()) for w in app.screen.query(Static))
        assert "p99 TPOT target (--slo-tpot-ms) must be at most 86,400,000 ms" in shown, shown
        assert calls.runners == []
        session = app.state.plan.session
        assert not session.settings.goodput and session.settings.slo_tpot_ms is None
        assert Session.model_validate_json(session.model_dump_json()) == session  # still a session that reads back


def test_the_real_services_run_a_capacity_session_with_the_capacity_runner(db_path):
    from specadvisor.domain import SweepSettings
    from specadvisor.sweep.capacity import CapacityRunner
    from specadvisor.sweep.plan import plan_from_methods
    from specadvisor.tui.services import default_services

    session = plan_from_methods("m", [("ngram", {})], [2], SweepSettings(goodput=True, slo_tpot_ms=30)).session
    with Store.open(db_path) as store:
        assert isinstance(default_services(db_path).make_runner(session, store), CapacityRunner)
