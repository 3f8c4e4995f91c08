"""A sweep plan: the baseline plus candidate methods x N values, as arms of a Session.

The plan IS a session in state "planned", so the store can persist it before anything runs and a
resumed sweep reads back exactly what was planned. Editing helpers keep arm ids stable.
"""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import BaseModel, ConfigDict

from specadvisor.analysis.arms import arm_id, arm_label, family_key, family_label, server_key
from specadvisor.analysis.costs import Costs
from specadvisor.domain import Advice, Arm, Candidate, Session, SweepSettings
from specadvisor.errors import InputError
from specadvisor.rulebase import registry

# Rough costs for the time estimate; overridable per plan because a GPU and a CPU differ by 100x.
DEFAULT_STARTUP_S = 90.0
DEFAULT_TOKENS_PER_S = 50.0  # output tokens/s of ONE request stream without speculation


class SweepPlan(BaseModel):
    """An editable sweep: `session.arms` are the arms, `session.settings` how each is measured."""

    model_config = ConfigDict(validate_assignment=True)

    session: Session
    startup_estimate_s: float = DEFAULT_STARTUP_S
    tokens_per_s_estimate: float = DEFAULT_TOKENS_PER_S
    estimate_source: str = "rough defaults"  # where the two figures above come from (shown with the estimate)
    budget_s: float | None = None  # the time the user is willing to spend; sized the default plan
    left_out: list[str] = []  # arms the budget left out ("n-gram N=2"), for the user to add back
    host_note: str = ""  # what this host cannot measure and what the plan does instead (CPU-only hosts)
    host_warnings: list[str] = []  # what will not fit on this host (memory per arm): Start asks to confirm
    host_headlines: list[str] = []  # the same, one short line of figures each, for a narrow panel
    planned_for: str = ""  # a named GPU ("H100x8") this plan is for instead of this machine: not run here
    slots: int = 1  # servers at once (`--parallel`, the TUI's p): launches run in waves of this many
    slot_share: float = 1.0  # how much slower each server runs beside the others (a CPU host's cores split K ways: K)

    # ------------------------------------------------------------------ views

    @property
    def settings(self) -> SweepSettings:
        return self.session.settings

    @property
    def arms(self) -> list[Arm]:
        return self.session.arms

    def configurations(self) -> int:
        """Distinct server configurations: arms that differ only in concurrency share one."""
        return len({server_key(a) for a in self.session.arms})

    def launches(self) -> int:
        """Server launches of the full grid run serially: each configuration once per trial (a trial
        is a fresh server), plus the baseline's end-of-sweep bracket."""
        return self.configurations() * max(1, self.settings.trials) + (1 if self._bracketed() else 0)

    def estimate_seconds(self) -> float:
        """Wall-clock time: each launch is a start-up plus, per arm it serves, the tokens to generate
        over the expected rate; launches run `slots` at a time, each wave as long as its longest (as
        `analysis.costs.round_seconds` prices a round), each server `slot_share` times slower beside
        the others. One slot: the serial sum."""
        s = self.settings
        work: dict[str, float] = {}
        for arm in self.session.arms:
            streams = max(1, min(arm.concurrency, s.num_prompts))
            key = server_key(arm)
            work[key] = work.get(key, 0.0) + (s.warmup + s.num_prompts) * s.output_len / (self.tokens_per_s_estimate * streams)
        launches = [w for w in work.values() for _ in range(max(1, s.trials))]
        if self._bracketed():
            launches.append(sum(w for key, w in work.items() if key == server_key(self._baseline())))
        share = max(1.0, self.slot_share)
        durations = [self.startup_estimate_s + w * share for w in launches]
        width = max(1, self.slots)
        return sum(max(durations[i : i + width]) for i in range(0, len(durations), width))

    def _baseline(self) -> Arm:
        return next(a for a in self.session.arms if a.is_baseline)

    def over_budget_s(self) -> float | None:
        """Seconds the estimate passes the budget by (the baseline and each start N are kept however
        small the budget); None within the budget or without one."""
        if self.budget_s is None:
            return None
        over = self.estimate_seconds() - self.budget_s
        return over if over > 0 else None

    def refresh_left_out(self) -> None:
        """Drop from `left_out` what has been added back (by `+`), so the panel lists only what is missing."""
        planned = {arm_label(a, with_concurrency=False) for a in self.session.arms}
        self.left_out = [label for label in self.left_out if label not in planned]

    def _bracketed(self) -> bool:
        return self.settings.bracket and self.configurations() > 1 and any(a.is_baseline for a in self.session.arms)

    # ------------------------------------------------------------------ edits

    def add_arm(
        self,
        method: str | None,
        n: int | None = None,
        extra: dict[str, Any] | None = None,
        *,
        label: str | None = None,
        concurrency: int | None = None,
    ) -> list[Arm]:
        """Add one configuration (method None = the baseline) at every concurrency level of the plan
        (or only at `concurrency`). Returns the arms added; an arm already planned is not duplicated."""
        levels = [concurrency] if concurrency else list(self.settings.concurrency)
        template = _arm_template(method, n, extra or {})
        added: list[Arm] = []
        multi = self._multi(levels)
        for level in levels:
            arm = template.model_copy(update={"concurrency": level})
            arm.id = arm_id(None if arm.is_baseline else _family_name(arm), arm.n, level, multi)
            arm.label = label or _label(arm, multi)
            if any(server_key(a) == server_key(arm) and a.concurrency == level for a in self.session.arms):
                continue  # the same configuration at the same level is planned already (under any id)
            same_id = next((a for a in self.session.arms if a.id == arm.id), None)
            if same_id is not None:  # another family with the same name (e.g. other ngram lookup sizes)
                arm.id = f"{arm.id}-{hashlib.sha1(family_key(arm).encode()).hexdigest()[:6]}"
            self.session.arms.append(arm)
            added.append(arm)
        if added and self.left_out:
            self.refresh_left_out()
        return added

    def remove_arm(self, arm_id_: str) -> None:
        before = len(self.session.arms)
        self.session.arms = [a for a in self.session.arms if a.id != arm_id_]
        if len(self.session.arms) == before:
            raise InputError(f"no arm {arm_id_!r} in this plan", hint="use one of: " + ", ".join(a.id for a in self.arms))

    def _multi(self, levels: list[int]) -> bool:
        return len(set(self.settings.concurrency) | set(levels)) > 1


def estimate_seconds(plan_or_session: SweepPlan | Session) -> float:
    """Estimated run time of a plan or of a planned session (default rates)."""
    plan = plan_or_session if isinstance(plan_or_session, SweepPlan) else SweepPlan(session=plan_or_session)
    return plan.estimate_seconds()


# ---------------------------------------------------------------------- constructors


def plan_from_methods(
    model: str,
    methods: list[tuple[str, dict[str, Any]]],
    n_values: list[int],
    settings: SweepSettings,
    baseline: bool = True,
    *,
    drafter: str | None = None,
) -> SweepPlan:
    """A grid: each (method id, extra speculative-config keys) at every N, plus the baseline."""
    if not model:
        raise InputError("no model given", hint="pass --model MODEL")
    if methods and not n_values:
        raise InputError("no N values given", hint="pass --n 1,3,5")
    if any(n < 1 for n in n_values):
        raise InputError(f"N must be >= 1, got {n_values}", hint="num_speculative_tokens counts draft tokens per step")
    plan = SweepPlan(session=_new_session(model, settings, drafter))
    if baseline:
        plan.add_arm(None)
    for method_id, extra in methods:
        for n in sorted(set(n_values)):
            plan.add_arm(method_id, n, extra)
    if not plan.arms:
        raise InputError("the plan has no arms", hint="add --method or keep the baseline")
    return plan


def plan_from_advice(
    advice: Advice,
    *,
    model: str,
    settings: SweepSettings,
    max_arms: int | None = None,
    budget_s: float | None = None,
    candidates: list[Candidate] | None = None,
    costs: Costs | None = None,
    slots_at_once: int = 1,
    slot_share: float = 1.0,
) -> SweepPlan:
    """The advisor's candidates (or the given subset, e.g. what a CPU host can run) over their N grids.

    Arms are chosen round-robin by candidate score, until `max_arms` or the estimate would pass
    `budget_s`. Within a candidate the order is the N its advice starts from (the N the emitted
    config says, so the recommended start is always measured), then the ends of its grid (largest,
    which the predictor needs, then smallest), then the N nearest the start. The baseline and each
    candidate's start N are always kept, so a tiny budget can still be exceeded: `over_budget_s`
    says by how much. The plan then lists them grouped by candidate, in the order they run: the
    baseline, then each candidate by score, largest N first. A configuration two candidates share
    is planned once. `slots_at_once` servers run side by side (`slot_share` times slower each): the
    budget counts the waves they make."""
    plan = SweepPlan(session=_new_session(model, settings, None), budget_s=budget_s, slots=slots_at_once, slot_share=slot_share)
    if costs is not None:
        plan.startup_estimate_s, plan.tokens_per_s_estimate, plan.estimate_source = costs.startup_s, costs.tokens_per_s, costs.source
    plan.session.advice = advice
    plan.session.vllm_version = advice.vllm_version
    plan.add_arm(None)
    ranked = sorted(advice.candidates if candidates is None else candidates, key=lambda c: -c.score)
    families: dict[str, tuple[str, dict[str, Any], set[int], list[int]]] = {}  # candidates with one configuration family are one group
    for cand in ranked:
        method, extra = candidate_config(cand)
        family = families.setdefault(candidate_family(cand), (method, extra, set(), []))
        family[2].update(cand.n_grid)
        start = start_n(cand)
        if start is not None:
            family[2].add(start)
            family[3].append(start)
        if cand.drafter and plan.session.drafter is None:
            plan.session.drafter = cand.drafter
    queues = [[(method, n, extra) for n in trim_order(ns, starts)] for method, extra, ns, starts in families.values()]
    chosen: list[list[tuple[str, int, dict[str, Any]]]] = [[] for _ in queues]
    trial = SweepPlan(
        session=plan.session.model_copy(deep=True),
        startup_estimate_s=plan.startup_estimate_s,
        tokens_per_s_estimate=plan.tokens_per_s_estimate,
        slots=slots_at_once,
        slot_share=slot_share,
    )
    slots = None if max_arms is None else max(0, max_arms - 1)
    while any(queues):
        for i, queue in enumerate(queues):
            if not queue:
                continue
            method, n, extra = queue.pop(0)
            template = _arm_template(method, n, extra)
            if any(server_key(a) == server_key(template) for a in trial.session.arms):
                continue  # another candidate planned this very configuration
            first_of_candidate = not chosen[i]
            full = slots is not None and slots <= 0
            added = [] if full else trial.add_arm(method, n, extra)
            if added and not first_of_candidate and budget_s is not None and trial.estimate_seconds() > budget_s:
                for arm in added:
                    trial.remove_arm(arm.id)
                added = []
            if added:
                chosen[i].append((method, n, extra))
                if slots is not None:
                    slots -= 1
            else:
                plan.left_out.append(arm_label(template))
    for picks in chosen:  # grouped by candidate, largest N first: the order the runner follows
        for method, n, extra in sorted(picks, key=lambda pick: -pick[1]):
            plan.add_arm(method, n, extra)
    return plan


def start_n(cand: Candidate) -> int | None:
    """The N the advice emits for a candidate (its config's num_speculative_tokens)."""
    n = cand.speculative_config.get("num_speculative_tokens")
    return n if isinstance(n, int) and n >= 1 else None


def trim_order(ns: set[int], starts: list[int]) -> list[int]:
    """The order a budget keeps N values in: the advised start N(s), the largest and smallest N, then
    the rest nearest the first start (larger first on a tie). Trimming cuts from the end of it."""
    grid = sorted(ns)
    if not grid:
        return []
    anchor = starts[0] if starts else grid[-1]
    head = list(dict.fromkeys([*starts, grid[-1], grid[0]]))
    rest = sorted((n for n in grid if n not in head), key=lambda n: (abs(n - anchor), -n))
    return head + rest


def candidate_config(cand: Candidate) -> tuple[str, dict[str, Any]]:
    """(vLLM method, extra speculative-config keys) of an advised candidate, N left out."""
    method, extra = registry.resolve(cand.method, {k: v for k, v in cand.speculative_config.items() if k not in ("method", "num_speculative_tokens")})
    if cand.parallel_drafting:
        extra.setdefault("parallel_drafting", True)
    return method, extra


def candidate_family(cand: Candidate) -> str:
    """The configuration family (everything but N) an advised candidate's arms belong to."""
    method, extra = candidate_config(cand)
    return family_key(_arm_template(method, 1, extra))


def _new_session(model: str, settings: SweepSettings, drafter: str | None) -> Session:
    return Session(
        model=model,
        drafter=drafter,
        concurrency=settings.concurrency[0] if settings.concurrency else 1,
        settings=settings,
        status="planned",
    )


def _arm_template(method: str | None, n: int | None, extra: dict[str, Any]) -> Arm:
    if method is None:
        return Arm(id="baseline", label="baseline (no speculation)")
    if n is None or n < 1:
        raise InputError(f"{method}: N must be >= 1", hint="num_speculative_tokens counts draft tokens per step")
    vllm_method, keys = registry.resolve(method, extra)
    config = {"method": vllm_method, **keys, "num_speculative_tokens": n}
    return Arm(id="", label="", method=vllm_method, n=n, speculative_config=config, parallel_drafting=registry.is_parallel(vllm_method, config))


def _family_name(arm: Arm) -> str:
    return family_label(arm).replace("(", "").replace(")", "")


def _label(arm: Arm, multi_concurrency: bool) -> str:
    """The stored label: the one arm label the TUI, the CLI and the reports show."""
    if arm.is_baseline:
        base = "baseline (no speculation)"
        return f"{base} · c{arm.concurrency}" if multi_concurrency and arm.concurrency != 1 else base
    return arm_label(arm, with_concurrency=multi_concurrency)
