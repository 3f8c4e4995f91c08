"""Use case `sweep --dry-run`: what a sweep would run, said and never done (as `vllm bench sweep
serve --dry-run` prints its commands). The plan is made exactly as `start_sweep` makes it; then, for
each arm, the `vllm serve` command and environment its launch would get and the load it would send.
Nothing is launched, no server is contacted, the machine is not probed, the CPU engine is not
provisioned and no database is opened or created, so the time estimate uses the defaults (a real
sweep's plan line uses this machine's earlier sweeps where it has them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from specadvisor.errors import InputError

if TYPE_CHECKING:
    from specadvisor.app.sweeps import Prepared, SweepRequest

PORT = 8000  # the port shown in a dry run's commands: a real launch picks a free one


@dataclass(frozen=True)
class DryArm:
    """One arm as it would run: its label, concurrency, the launch (None: a running server) and its environment."""

    id: str
    label: str
    concurrency: int
    command: list[str] | None
    env: dict[str, str]


@dataclass(frozen=True)
class DryRun:
    """A planned session, not run: what it measures and how, arm by arm, with the time estimate."""

    prepared: Prepared
    arms: list[DryArm]
    launches: int
    seconds: float
    estimate_source: str
    notes: list[str] = field(default_factory=list)

    def document(self) -> dict[str, Any]:
        """The plan as plain data (`sweep --dry-run --json`)."""
        s = self.prepared.session.settings
        return {
            "dry_run": True,
            "model": self.prepared.session.model,
            "workload": self.prepared.session.workload.value,
            "settings": s.model_dump(mode="json"),
            "launches": self.launches,
            "estimate_s": round(self.seconds),
            "estimate_source": self.estimate_source,
            "arms": [{"id": a.id, "label": a.label, "concurrency": a.concurrency, "command": a.command, "env": a.env} for a in self.arms],
            "notes": self.notes,
        }


def dry_run(request: SweepRequest) -> DryRun:
    """The sweep `request` would run, planned as `start_sweep` plans it, without running anything."""
    from specadvisor.analysis.costs import measured_costs
    from specadvisor.app import engine_env
    from specadvisor.app.sweeps import Prepared, endpoint_arms, measurement_settings, plan_sweep, workload_kind
    from specadvisor.domain import Session
    from specadvisor.sweep.plan import SweepPlan

    cpu = None
    if request.cpu:
        cpu = engine_env.find_cpu()  # never provisioned by a dry run
        if cpu is None:
            raise InputError(
                "--cpu: the CPU engine is not provisioned yet, so a dry run cannot show its commands", hint="run `specadvisor engine setup-cpu` first"
            )
    notes: list[str] = []
    url = request.settings.endpoint
    if url:  # the server is not contacted: what it runs is read when the sweep starts
        levels = list(request.settings.concurrency)
        session = Session(model=request.model or "", workload=workload_kind(request), settings=measurement_settings(request.settings), concurrency=levels[0])
        session.arms = endpoint_arms(url, None, levels)
        prepared = Prepared(session)
        notes.append("the running server is identified (version, model, speculative config) when the sweep starts; a dry run does not contact it")
    else:
        prepared = plan_sweep(request, cpu, probe=False)
        if request.settings.engine_cmd and cpu is None:
            notes.append("the engine behind --engine-cmd is asked for its version when the sweep starts (a CPU build then gets the --cpu defaults)")
    session = prepared.session
    costs = measured_costs([], cpu_only=prepared.cpu)
    plan = SweepPlan(
        session=session, startup_estimate_s=0.0 if url else costs.startup_s, tokens_per_s_estimate=costs.tokens_per_s, estimate_source=costs.source
    )
    arms = [_arm(arm, session, prepared.server_env or {}) for arm in session.arms]
    return DryRun(prepared, arms, 0 if url else plan.launches(), plan.estimate_seconds(), costs.source, [*prepared.notes, *notes])


def _arm(arm: Any, session: Any, env: dict[str, str]) -> DryArm:
    """The arm's launch as the runner's server factory builds it (sweep/servers.py), on a shown port."""
    from specadvisor.engine.spec import ServerSpec, build_command
    from specadvisor.redact import redact_argv

    if session.settings.endpoint:
        return DryArm(arm.id, arm.label, arm.concurrency, None, {})
    spec = ServerSpec(
        model=session.model,
        speculative_config=arm.speculative_config,
        extra_args=[*session.settings.server_args, *arm.server_args],
        **({"engine_cmd": list(session.settings.engine_cmd)} if session.settings.engine_cmd else {}),
    )
    return DryArm(arm.id, arm.label, arm.concurrency, redact_argv(build_command(spec, PORT)), dict(env))
