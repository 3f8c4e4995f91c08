"""The deployable outputs of a session: the `--speculative-config` JSON and the `vllm serve` line.

Re-exported for the report and the front ends; the command line is built by
specadvisor.vllm_command, fed a session by specadvisor.trust (an imported session gets no bundle
args). An imported session's recommended config is printed only as the allow-list of
specadvisor.crossing lets it cross, for the model the user names or the placeholder MODEL
(specadvisor.trust.command_model): these lines are meant to be pasted and run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from specadvisor import trust, vllm_command
from specadvisor.analysis.recommend import level_decisions
from specadvisor.crossing import crossed_config
from specadvisor.domain import ArmStatus, Recommendation, Session
from specadvisor.figures import MAX_LOOKS
from specadvisor.trust import serve_command
from specadvisor.vllm_command import spec_config_json

# serve_command: the measured server args for a local session; an imported session's are never
# reused (specadvisor.trust).
__all__ = ["UNDECIDED_EXIT", "DecidingStep", "deciding_step", "recommended_command", "recommended_config", "serve_command", "spec_config_json"]

UNDECIDED_EXIT = 5  # `snippet` while the verdict is undecided: nothing to serve yet (1: the advice is not to speculate)
STEP_MARGIN = 1.25  # the budget a printed step asks for: its estimate and a quarter more (estimates are from the runs so far)


@dataclass(frozen=True)
class DecidingStep:
    """What would decide an undecided session: the step its verdict names, and the command that measures it."""

    text: str  # the open level(s)' verdict: what to measure and about how long
    command: str | None  # None: no command measures it as it stands (the plan's looks are taken)
    note: str = ""  # what the command does, in one line


def deciding_step(session: Session, rec: Recommendation | None) -> DecidingStep | None:
    """The step an undecided verdict names and the command that measures it here: `sweep --resume ID
    --budget M` continues the session's sequential measuring (its looks and their error carried over);
    an imported session is rebuilt as a new local one. None when the verdict is not undecided."""
    if rec is None or rec.decision != "undecided":
        return None
    confidence = rec.confidence or session.settings.confidence
    open_ = [d for d in level_decisions(session, confidence=confidence, looks=rec.looks or 1) if d.decision == "undecided"]
    text = "; ".join(f"at concurrency {d.concurrency}: {d.verdict}" if len(open_) > 1 else d.verdict for d in open_) or rec.headline
    seconds = [d.next_step.seconds for d in open_ if d.next_step is not None and d.next_step.seconds is not None]
    if trust.is_imported(session):
        return DecidingStep(
            text, trust.resume_command(session), "an imported session is measured again here as a new local session (its measurements are not resumed)"
        )
    if all(r.status == ArmStatus.pending for r in session.results):  # a plan saved (or exported for a GPU machine), never run
        return _run_the_plan(session)
    if not seconds:
        return DecidingStep(text, None, "no step within reach would decide it: the gain sits at the tie margin")
    if session.settings.budget_s is not None and session.settings.looks >= MAX_LOOKS:
        return DecidingStep(text, None, f"the plan's {MAX_LOOKS} looks are taken: a new sweep (more --trials, or --budget) measures it afresh")
    minutes = max(1, math.ceil(max(seconds) * STEP_MARGIN / 60))
    argv = ["specadvisor", "sweep", "--resume", session.id[:8], "--budget", str(minutes)]
    limit = session.settings.time_limit_s
    if limit is not None and limit < (minutes + 2) * 60:
        argv += ["--time-limit", str(minutes + 2)]  # the session's own limit would stop the step again
    return DecidingStep(text, vllm_command.shell_command(argv), f"measures that step on this machine, about {minutes} min, and judges again")


def _run_the_plan(session: Session) -> DecidingStep:
    """A plan that has not run: running it decides it, here or on the machine it was planned for."""
    sid = session.id[:8]
    text = "running this plan (it has not run yet)"
    if session.hardware.hypothetical:
        export, load, run = trust.handoff_commands(session, f"specadvisor-plan-{sid}.json")
        return DecidingStep(text, export, f"it was planned for {session.hardware.gpu_label}: export it, then there: {load}; {run}")
    return DecidingStep(text, vllm_command.shell_command(["specadvisor", "sweep", "--resume", sid]), "runs the plan on this machine")


def recommended_config(session: Session, rec: Recommendation | None, *, model: str | None = None) -> dict[str, Any] | None:
    """The config to show as the one to run: a local session's own, an imported one's re-derived
    (registry method, declared numbers, this machine's drafter: the catalog's for `model`, the
    user's target, else for the model the bundle names); None when nothing can be shown."""
    if rec is None or not rec.speculative_config:
        return None
    if not trust.is_imported(session):
        return rec.speculative_config
    return crossed_config(rec.speculative_config, target_model=trust.model_arg(model or session.model))


def recommended_command(session: Session, rec: Recommendation | None, *, width: int | None = None, model: str | None = None) -> str | None:
    """trust.recommended_command, with an imported session's config through the allow-list first
    and its model the user's `model` or the placeholder MODEL."""
    if rec is None or not trust.is_imported(session) or not rec.speculative_config:
        return trust.recommended_command(session, rec, width=width, model=model)
    config = recommended_config(session, rec, model=model)
    return None if config is None else trust.serve_command(session, config, width=width, model=model)
