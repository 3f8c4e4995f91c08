"""Training a drafter step by step, for a front end that shows each step (the TUI's Train screen):
whether the advice calls for one, the form's answers read and checked, the training run's event
stream, the held-out check and its reading, and the judging sweep. Each step is `app.train`'s own
(`plan_training`, `training_runner`, `heldout_check`, `judging_sweep`); this module only strings
them together the way the CLI's `specadvisor train` does, so the screen imports no training code.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from specadvisor.errors import InputError

if TYPE_CHECKING:
    from specadvisor.app.running import Runner
    from specadvisor.app.sweeps import Prepared
    from specadvisor.app.train import TrainPlan
    from specadvisor.domain import Advice, ArmResult, HardwareProfile, ModelProfile, Session, TrainedDrafter, TrainEvent
    from specadvisor.store import Store

Note = Callable[[str], None]
MAX_MINUTES = 7 * 24 * 60  # the CLI's --minutes bound
MAX_STEPS = 10_000_000  # the CLI's --steps bound


def training_reason(advice: Advice, model: ModelProfile) -> str | None:
    """Why training a drafter is the way up here (None: the advice does not call for it): the advice
    says so (no drafter fits), or the target has no published drafter and no MTP heads."""
    if advice.suggest_training:
        return "No drafter fits this model: a drafter trained on your prompts (EAGLE-3, with Speculators) is the way up."
    if not model.drafters and not model.mtp.present:
        return f"No published drafter and no MTP heads for {model.id}: train an EAGLE-3 drafter on your prompts (Speculators)."
    return None


def parse_budget(text: str) -> tuple[float | None, int | None]:
    """The form's budget as (minutes, steps): "10 min", "1 h" or "500 steps"; bounded as the CLI's
    --minutes and --steps are."""
    raw = text.strip().lower()
    if not raw:
        raise InputError("Budget is empty", hint="give a time (e.g. 10 min) or optimizer steps (e.g. 500 steps)")
    if raw.endswith(("steps", "step")):
        number = raw.rsplit("step", 1)[0].strip()
        if not number.isdigit() or not 1 <= int(number) <= MAX_STEPS:
            raise InputError(f"Budget: cannot read {text.strip()!r} as a number of steps", hint=f"e.g. 500 steps (1 to {MAX_STEPS:,})")
        return None, int(number)
    from specadvisor.quantities import parse_duration

    seconds = parse_duration(raw, "Budget")
    if seconds is None or not 0 < seconds / 60 <= MAX_MINUTES:
        raise InputError(f"Budget: {text.strip()!r} is not a time from 1 s to 7 days", hint="e.g. 10 min, 1 h, or 500 steps")
    return seconds / 60, None


@dataclass(frozen=True)
class TrainAsk:
    """What the Train screen's form asks, checked: the target, the prompts, the budget, the judging
    sweep's concurrency, and where it runs (the CPU engine on a machine without a GPU)."""

    model: str
    prompts: str = "humaneval"
    minutes: float | None = None
    steps: int | None = None
    concurrency: tuple[int, ...] = (1,)
    cpu: bool = False
    engine_cmd: tuple[str, ...] | None = None


class TrainEvents(Protocol):
    """A training run as a front end drives it: its events, and its record as it stands (`app.train.training_runner`)."""

    drafter: TrainedDrafter

    def run(self) -> AsyncIterator[TrainEvent]: ...


@dataclass(frozen=True)
class HeldOut:
    """The held-out check's reading: vLLM's acceptance of the drafter alone on prompts training never
    saw, and the N grid it suggests for the judging sweep (`error`: it measured nothing)."""

    session_id: str
    acceptance_length: float | None = None
    rates: list[float] = field(default_factory=list)
    n: int | None = None
    grid: list[int] = field(default_factory=list)
    reason: str = ""
    error: str | None = None


def drafter_result(session: Session) -> ArmResult | None:
    """The trained drafter's arm result with the most positions measured (None: nothing measured)."""
    from specadvisor.domain import ArmStatus

    arms = {a.id: a for a in session.arms if session.drafter and (a.speculative_config or {}).get("model") == session.drafter}
    measured = [r for r in session.results if r.arm_id in arms and r.status in (ArmStatus.ok, ArmStatus.stopped_early) and r.mean_acceptance_length is not None]
    return max(measured, key=lambda r: (len(r.per_position), arms[r.arm_id].n or 0), default=None)


class TrainSteps:
    """The real steps (`app.train`); the TUI's tests pass their own at the same seams."""

    def plan(self, ask: TrainAsk, store: Store, *, hardware: HardwareProfile | None, progress: Note) -> TrainPlan:
        """The checked job (`app.train.plan_training`): refusals are one line each, before anything starts."""
        from specadvisor.app.train import TrainRequest, plan_training

        request = TrainRequest(model=ask.model, prompts=ask.prompts, minutes=ask.minutes, steps=ask.steps, cpu=ask.cpu, engine_cmd=ask.engine_cmd)
        return plan_training(request, store, progress=progress, hardware=None if ask.cpu else hardware)

    def runner(self, plan: TrainPlan, store: Store) -> TrainEvents:
        """The run's event stream; cancelling its task stops the server and the worker and records it interrupted."""
        from specadvisor.app.train import training_runner

        return training_runner(plan, store)

    def heldout(self, plan: TrainPlan, drafter: TrainedDrafter, store: Store) -> tuple[Prepared, Runner]:
        """The held-out check, planned and ready to run (one server at a time)."""
        from specadvisor.app import running
        from specadvisor.app.train import heldout_check, serving_of

        prepared = heldout_check(drafter, serving_of(plan))
        return prepared, running.runner_for(prepared, store, running.RunOptions(parallel="1"))

    def heldout_result(self, store: Store, drafter: TrainedDrafter, session: Session) -> HeldOut:
        """What the check measured (linked to the drafter's record) and the grid it suggests."""
        from specadvisor.app.train import link_session, n_grid

        link_session(store, drafter.id, session, heldout=True)
        stored = store.get_session(session.id)
        result = drafter_result(stored)
        if result is None:
            failed = next((r.error for r in stored.results if r.error), None)
            return HeldOut(session.id, error=f"the drafter did not serve ({failed or 'see the session logs'})")
        rates = [p.rate for p in sorted(result.per_position, key=lambda p: p.position)]
        grid, reason = n_grid(rates)
        n = next((a.n for a in stored.arms if a.id == result.arm_id), None)
        return HeldOut(session.id, result.mean_acceptance_length, rates, n, grid, reason)

    def judging(self, plan: TrainPlan, drafter: TrainedDrafter, store: Store, grid: list[int], concurrency: tuple[int, ...]) -> Prepared:
        """The sweep that judges the drafter (baseline, n-gram, the drafter over `grid`), linked to its record."""
        from specadvisor.app.train import judging_sweep, link_session, serving_of
        from specadvisor.domain import SweepSettings

        prepared = judging_sweep(store.get_drafter(drafter.id), serving_of(plan), grid, SweepSettings.of(concurrency=list(concurrency)))
        link_session(store, drafter.id, prepared.session, heldout=False)
        return prepared
