"""Issue 41: the TUI's Train step. From Advice (`t`, only when the advice calls for training) a Train
screen: its form, the run live from the app layer's event stream (stage, step/total, loss, accuracy bars,
steps/s, time left), the held-out result and the judging sweep on the Sweep screen; ctrl+c and quitting
stop the run cleanly (its server and trainer stopped, the record interrupted, resumable from the CLI).

The training pipeline is replaced at the app layer's seam (`Services.train`, a TrainSteps): a scripted
event source that records interrupted as the real runner does; the held-out reading, the drafter's
record and the store are the real ones. The real pipeline has its own end-to-end test."""

from __future__ import annotations

import asyncio

import pytest
from conftest import settle
from textual.widgets import Input, ProgressBar, Static

from specadvisor.app.sweeps import Prepared
from specadvisor.app.train_steps import TrainSteps
from specadvisor.domain import SweepSettings, TrainedDrafter, TrainEvent
from specadvisor.store import Store
from specadvisor.sweep.plan import plan_from_methods
from specadvisor.tui.screens.advice import AdviceScreen
from specadvisor.tui.screens.sweep import SweepScreen
from specadvisor.tui.screens.train import TrainScreen
from specadvisor.tui.widgets.modals import ConfirmModal, ErrorModal
from tui_fakes import ADVICE, MODEL, RATES, FakeRunner

FOLDER = "/drafters/smollm2-eagle3"


class FakePlan:
    def __init__(self, drafter: TrainedDrafter):
        self.drafter = drafter
        self.notes = ["training on the CPU engine: slow (seconds per step) and for trying the pipeline"]


class FakeTrainRunner:
    """The TrainRunner's contract: events, `drafter` kept current and saved, interrupted on cancel."""

    def __init__(self, plan: FakePlan, store, hold: asyncio.Event | None, log: dict):
        self.drafter, self.store, self.hold, self.log = plan.drafter, store, hold, log

    def _save(self, **changes) -> None:
        self.drafter = self.drafter.model_copy(update=changes)
        self.store.save_drafter(self.drafter)

    async def run(self):
        self._save(status="running")
        self.log["server_started"] = True
        try:
            yield TrainEvent(kind="stage", stage="server", message="starting vllm serve with hidden-state extraction")
            yield TrainEvent(kind="stage", stage="regenerate", step=20, total_steps=20, message="regenerated 20/20")
            for step in (100, 200, 300, 400, 500):
                if step == 300 and self.hold is not None:
                    await self.hold.wait()
                self._save(steps=step)
                yield TrainEvent(
                    kind="step",
                    stage="train",
                    step=step,
                    total_steps=500,
                    loss=3.0 - step / 500,
                    accuracy=[0.81, 0.55, 0.32],
                    steps_per_s=4.0,
                    eta_s=(500 - step) / 4,
                )
            self._save(status="complete", folder=FOLDER, stage="export")
            yield TrainEvent(kind="done", message=f"drafter ready: {FOLDER}", step=500)
        except asyncio.CancelledError:
            await asyncio.sleep(0.05)  # the real one waits for the trainer to stop and the server to exit
            self.log["stopped_cleanly"] = True
            self._save(status="interrupted", stopped_by="interrupted")
            raise


class FakeSteps(TrainSteps):
    def __init__(self, hold: asyncio.Event | None = None):
        self.hold, self.asked, self.log = hold, [], {}

    def plan(self, ask, store, *, hardware, progress):
        self.asked.append(ask)
        progress("speculators ready in the engine's environment")
        drafter = TrainedDrafter(target=ask.model, status="planned", heldout_ids=["a", "b"])
        store.save_drafter(drafter)
        return FakePlan(drafter)

    def runner(self, plan, store):
        return FakeTrainRunner(plan, store, self.hold, self.log)

    def _session(self, drafter, n_values, baseline):
        settings = SweepSettings(num_prompts=8, output_len=64)
        plan = plan_from_methods(drafter.target, [("eagle3", {"model": FOLDER})], n_values, settings, baseline=baseline, drafter=FOLDER)
        plan.session.drafter = FOLDER
        return plan.session

    def heldout(self, plan, drafter, store):
        session = self._session(drafter, [4], baseline=False)
        for arm in session.arms:
            RATES.setdefault(arm.id, [0.82, 0.58, 0.36, 0.2])
        return Prepared(session), FakeRunner(session, store)

    def judging(self, plan, drafter, store, grid, concurrency):
        from specadvisor.app.train import link_session

        session = self._session(drafter, grid, baseline=True)
        session.settings = session.settings.replace(concurrency=list(concurrency))
        link_session(store, drafter.id, session, heldout=False)
        return Prepared(session)


def advising_training(app, steps: FakeSteps) -> None:
    app.state.services.advise = lambda hw, model, workload: ADVICE.model_copy(update={"suggest_training": True})
    app.state.services.train = steps


async def to_train(app, pilot) -> TrainScreen:
    await settle(pilot)
    app.screen.query_one("#model", Input).value = MODEL.id
    await pilot.pause()
    await pilot.press("f5")
    await settle(pilot)
    assert isinstance(app.screen, AdviceScreen)
    assert "t trains one here" in str(app.screen.query_one("#train-offer", Static).render())
    await pilot.press("t")
    await pilot.pause()
    assert isinstance(app.screen, TrainScreen)
    return app.screen


def text(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


async def test_train_shows_the_run_live_then_the_heldout_result_and_runs_the_judging_sweep(make_app, calls, db_path):
    app = make_app()
    steps = FakeSteps()
    advising_training(app, steps)
    async with app.run_test(size=(120, 48)) as pilot:
        screen = await to_train(app, pilot)
        screen.query_one("#train-budget", Input).value = "500 steps"
        screen.query_one("#train-concurrency", Input).value = "1,8"
        await pilot.click("#train-start")
        await settle(pilot)
        (ask,) = steps.asked
        assert (ask.model, ask.steps, ask.minutes, ask.concurrency, ask.cpu, ask.prompts) == (MODEL.id, 500, None, (1, 8), True, "humaneval")
        assert [e.step for e in screen.events if e.kind == "step"] == [100, 200, 300, 400, 500]
        assert text(screen, "#train-figures") == "step 500/500 · loss 2.000 · 4.00 steps/s · 0 s left"
        accuracy = text(screen, "#train-accuracy")
        assert "pos 1" in accuracy and "81.0%" in accuracy and "pos 3" in accuracy and "█" in accuracy
        assert screen.query_one("#train-bar", ProgressBar).percentage == 1.0
        result = text(screen, "#train-result")
        assert "Held-out acceptance length 2.96 at N=4" in result and "pos 4" in result and "Judging sweep" in result
        with Store.open(db_path) as store:
            (drafter,) = store.list_drafters()
        assert drafter.status == "complete" and drafter.heldout_session_id
        await pilot.click("#train-judge")
        await settle(pilot)
        assert isinstance(app.screen, SweepScreen) and len(calls.runners) == 1
        judged = calls.runners[0].session
        assert judged.drafter == FOLDER and judged.settings.concurrency == [1, 8]
        with Store.open(db_path) as store:
            assert store.get_drafter(drafter.id).judge_session_ids == [judged.id]


async def test_ctrl_c_stops_the_training_cleanly_and_says_how_to_resume(make_app, db_path):
    app = make_app()
    hold = asyncio.Event()
    steps = FakeSteps(hold)
    advising_training(app, steps)
    async with app.run_test(size=(120, 48)) as pilot:
        screen = await to_train(app, pilot)
        await pilot.click("#train-start")
        for _ in range(40):
            await pilot.pause(0.05)
            if any(e.step == 200 for e in screen.events):
                break
        assert app.state.training
        await pilot.press("escape")  # leaving while it trains is refused
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal) and "--resume" in app.screen.question
        await pilot.press("y")
        await settle(pilot)
        assert steps.log.get("stopped_cleanly") and not app.state.training
        assert "recorded as interrupted" in text(screen, "#train-stage") and "specadvisor train --resume" in text(screen, "#train-stage")
    with Store.open(db_path) as store:
        (drafter,) = store.list_drafters()
    assert drafter.status == "interrupted" and drafter.stopped_by == "interrupted" and drafter.steps == 200


async def test_quitting_while_training_asks_then_stops_it_before_exiting(make_app, db_path):
    app = make_app()
    hold = asyncio.Event()
    steps = FakeSteps(hold)
    advising_training(app, steps)
    async with app.run_test(size=(120, 48)) as pilot:
        screen = await to_train(app, pilot)
        await pilot.click("#train-start")
        for _ in range(40):
            await pilot.pause(0.05)
            if any(e.step == 200 for e in screen.events):
                break
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal) and "A drafter is training" in app.screen.question
        await pilot.press("y")
        await pilot.pause(0.5)
    assert app.return_code == 0 and steps.log.get("stopped_cleanly")
    with Store.open(db_path) as store:
        assert store.list_drafters()[0].status == "interrupted"


async def test_training_is_offered_only_when_the_advice_calls_for_it(make_app):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.screen.query_one("#model", Input).value = MODEL.id
        await pilot.pause()
        await pilot.press("f5")
        await settle(pilot)
        assert isinstance(app.screen, AdviceScreen) and not app.screen.query("#train-offer")
        await pilot.press("t")
        await pilot.pause()
        assert isinstance(app.screen, AdviceScreen)


@pytest.mark.parametrize("budget, message", [("ten minutes", "cannot read"), ("0 steps", "as a number of steps"), ("", "Budget is empty")])
async def test_a_bad_budget_is_one_readable_error_and_nothing_starts(make_app, budget, message):
    app = make_app()
    steps = FakeSteps()
    advising_training(app, steps)
    async with app.run_test(size=(120, 48)) as pilot:
        screen = await to_train(app, pilot)
        screen.query_one("#train-budget", Input).value = budget
        await pilot.click("#train-start")
        await settle(pilot)
        assert isinstance(app.screen, ErrorModal) and message in app.screen.message
        assert steps.asked == []
