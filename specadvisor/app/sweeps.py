"""Use cases that put a sweep together: `start_sweep` (a new one), `attach_endpoint` (a running
server as its arms), `resume` (an interrupted local one) and `rebuild` (an imported one as a new
local session). Each takes a typed request and returns a `Prepared` session for `app.running`,
named for its provenance (`session.provenance.entry_point`); `app.running.runner_for` records the
rest of the provenance when the session runs."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from specadvisor.app import engine_env
from specadvisor.errors import InputError

if TYPE_CHECKING:
    from specadvisor.domain import Arm, Session, SweepSettings, WorkloadKind
    from specadvisor.engine.attach import EndpointInfo
    from specadvisor.engine.cpu import CpuEngine
    from specadvisor.store import Store

Note = Callable[[str], None]
# attach mode keeps the fixed design: these settings are about launches it does not make
_SCHEDULING = ("drift_threshold", "ci_target", "confidence", "budget_s")


@dataclass(frozen=True)
class SweepRequest:
    """What a front end asks of a sweep, parsed and range-checked (`cli.validate` for the CLI)."""

    model: str | None = None
    drafter: str | None = None
    methods: tuple[tuple[str, dict[str, Any]], ...] = ()  # (method, its extra speculative-config keys)
    n_values: tuple[int, ...] = ()
    baseline: bool = True
    adaptive: bool = False
    prompts: str = "humaneval"
    workload: str | None = None  # domain.WorkloadKind's value; None: what the prompts are (bench.prompts.workload_of), chat for a file
    measurement: Mapping[str, Any] = field(default_factory=dict)  # SweepSettings fields, in its units
    bracket: bool = True
    goodput: bool = False
    engine_cmd: tuple[str, ...] | None = None  # None: the CPU engine's with cpu, else `vllm serve`
    endpoint: str | None = None
    api_key_env: str | None = None
    server_args: tuple[str, ...] = ()
    cpu: bool = False
    name: str = ""
    entry_point: str | None = None  # who started it, for provenance (the demo says so)


@dataclass
class Prepared:
    """A session ready to run and what its launches need (never stored: the environment holds secrets' names only)."""

    session: Session
    # The launches' environment as the use case computed it ({}: nothing to add); None: not computed
    # (the TUI's plan, a test's session): the runner derives it from the engine detected here.
    server_env: dict[str, str] | None = None
    api_key_env: str | None = None  # attach mode: the variable holding the endpoint's key
    model_name: str | None = None  # attach mode: the name the server serves the model under
    notes: list[str] = field(default_factory=list)  # about the plan, shown before it runs
    cpu: bool = False  # measured on the CPU engine (the plan's time estimate differs)
    endpoint_info: EndpointInfo | None = None  # attach mode: what the server said about itself, for provenance
    started_at: float | None = None  # attach mode: time.monotonic() before the server was identified (--time-limit counts from it)


def start_sweep(request: SweepRequest, *, progress: Note) -> Prepared:
    """A new session planned from the request: baseline + methods x N on the engine asked for (or an
    endpoint's arms). `progress` receives the CPU engine's provisioning lines."""
    cpu = engine_env.ensure_cpu(progress) if request.cpu else None
    return plan_sweep(request, cpu)


def plan_sweep(request: SweepRequest, cpu: CpuEngine | None) -> Prepared:
    """`start_sweep` once the engine is known (`cpu`: the provisioned CPU engine, or None)."""
    from specadvisor.bench.prompts import resolve_request_format
    from specadvisor.sweep.plan import plan_from_methods

    model = request.model or (str(cpu.model_dir) if cpu else None)
    if request.endpoint:
        return attach_endpoint(request, model)
    if not model:
        raise InputError("no model given", hint="pass --model MODEL (or --cpu for the CPU engine's SmolLM2)")
    if request.methods and not request.n_values:
        raise InputError("--method given without --n", hint="pass the N values to try, e.g. --n 1,3,5")
    # a bad prompt file (or raw text asked of chat-only rows) fails here, before the database is opened
    _, format_notes = resolve_request_format(request.prompts, request.measurement.get("request_format"))
    engine_cmd, server_args, server_env = _engine(request, cpu)
    notes: list[str] = [f"request format: {note}" for note in format_notes]
    if request.engine_cmd and not cpu:
        extra_args, extra_env, said = engine_env.cpu_build_defaults(engine_cmd, server_args)
        server_args += extra_args
        server_env.update(extra_env)
        if said:
            notes.append(
                f"the engine behind --engine-cmd is a CPU build: using the --cpu defaults {', '.join(said)} "
                "(pass them yourself with --server-arg or the environment to override)"
            )
    target = request.measurement.get("ci_target", 0.03 if request.adaptive else 0.0)  # 3 % with --adaptive unless given
    settings = measurement_settings(
        request,
        {**request.measurement, "ci_target": target or None},
        engine_cmd=engine_cmd,
        server_args=server_args,
        adaptive=request.adaptive,
        goodput=request.goodput,
        bracket=request.bracket,
    )
    plan = plan_from_methods(
        model, [(m, dict(extra)) for m, extra in request.methods], list(request.n_values), settings, baseline=request.baseline, drafter=request.drafter
    )
    plan.session.name = request.name
    plan.session.workload = workload_kind(request)
    plan.session.provenance.notes += [note for note in notes if note.startswith("request format: ")]  # shown wherever the session is
    if cpu:
        plan.session.vllm_version = cpu.vllm_version
    plan.session.provenance.entry_point = request.entry_point or ("sweep --cpu" if cpu else "sweep")
    return Prepared(plan.session, server_env=server_env, notes=notes, cpu=cpu is not None)


def attach_endpoint(request: SweepRequest, model: str | None = None) -> Prepared:
    """Attach mode: the running server is one configuration, measured at every requested concurrency
    level; its config is read from /server_info when exposed."""
    import asyncio
    import time

    from specadvisor.domain import Session
    from specadvisor.engine import Endpoint
    from specadvisor.engine.attach import IDENTIFY_DEADLINE_S

    assert request.endpoint is not None
    levels = list(request.measurement.get("concurrency", [1]))
    endpoint = Endpoint(request.endpoint, api_key_env=request.api_key_env)
    started_at = time.monotonic()
    limit = request.measurement.get("time_limit_s")
    info = asyncio.run(endpoint.info(deadline_s=min(IDENTIFY_DEADLINE_S, limit) if limit else IDENTIFY_DEADLINE_S))  # inside --time-limit
    spec, notes = endpoint_spec(info)
    measured = {k: v for k, v in request.measurement.items() if k not in _SCHEDULING}
    settings = measurement_settings(request, measured, endpoint=endpoint.url)
    session = Session(
        model=model or request.model or info.served_model or "",
        workload=workload_kind(request),
        settings=settings,
        arms=endpoint_arms(endpoint.url, spec, levels),
        vllm_version=info.version,
        name=request.name,
        concurrency=levels[0],
    )
    session.provenance.entry_point = "sweep --endpoint"
    return Prepared(session, api_key_env=request.api_key_env, model_name=info.served_model, endpoint_info=info, notes=notes, started_at=started_at)


def endpoint_spec(info: EndpointInfo) -> tuple[dict[str, Any] | None, list[str]]:
    """The server's speculative config through the bundles' allow-list (specadvisor.crossing)
    before anything stores it; `info` keeps only what crossed. One that cannot cross is refused."""
    from specadvisor.crossing import endpoint_config
    from specadvisor.errors import EngineError

    crossed = endpoint_config(info.speculative_config)
    if crossed.problem:
        raise EngineError(
            f"{info.url}/server_info reports a speculative config this machine does not measure: {crossed.problem}",
            hint="add the method to your rules folder (~/.config/specadvisor/rules), or measure a server running a method `specadvisor rules show` lists",
        )
    info.speculative_config = crossed.config
    return crossed.config, crossed.notes


def endpoint_arms(url: str, spec: dict[str, Any] | None, levels: list[int]) -> list[Arm]:
    """One arm per requested concurrency level on the running server (they share it: nothing is relaunched)."""
    from specadvisor.domain import Arm
    from specadvisor.redact import redact_text

    multi = len(levels) > 1
    what = f"{spec.get('method')} N={spec.get('num_speculative_tokens')}" if spec else "running server"
    return [
        Arm(
            id=f"endpoint-c{level}" if multi else "endpoint",
            label=f"{what} at {redact_text(url)}" + (f" @c{level}" if multi else ""),  # shown and stored: no password
            method=spec.get("method") if spec else None,
            n=spec.get("num_speculative_tokens") if spec else None,
            speculative_config=spec,
            concurrency=level,
        )
        for level in levels
    ]


def resume(request: SweepRequest, session_id: str, store: Store, *, rebuild_asked: bool, note: Note, progress: Note) -> Prepared:
    """An interrupted local session, to continue without redoing finished arms; an imported one only
    as a rebuild (`rebuild_asked`), never run as it came (its provenance notes the resume when it runs)."""
    from specadvisor.trust import is_imported, refuse_imported

    session = store.get_session(session_id)
    if is_imported(session):
        if not rebuild_asked:
            refuse_imported(session)
        return rebuild(request, session, note=note, progress=progress)
    if rebuild_asked:
        raise InputError(
            f"session {session.id[:8]} is local; --rebuild is for imported sessions", hint=f"resume it with: specadvisor sweep --resume {session.id[:8]}"
        )
    _limits_on_resume(session, request)
    if session.settings.endpoint:
        return Prepared(session, api_key_env=request.api_key_env)
    return Prepared(session, server_env=engine_env.stored_session_env(session, cpu_asked=request.cpu, progress=progress))


# What a resume may change: how much more to measure and for how long, never what is measured.
_RESUME_LIMITS = ("budget_s", "time_limit_s")


def _limits_on_resume(session: Session, request: SweepRequest) -> None:
    """`--budget` and `--time-limit` given with `--resume` replace the session's: an undecided session
    measures the step its verdict names (`snippet` prints the command); each resumed run gets them afresh."""
    given = {name: request.measurement[name] for name in _RESUME_LIMITS if request.measurement.get(name) is not None}
    if given and not session.settings.endpoint:
        session.settings = session.settings.model_copy(update=given)


def rebuild(request: SweepRequest, imported: Session, *, note: Note, progress: Note) -> Prepared:
    """A NEW local session with the imported one's arms, on this machine's engine (never the bundle's)."""
    from specadvisor.sweep.rebuild import rebuild_plan

    cpu = engine_env.ensure_cpu(progress) if request.cpu else None
    engine_cmd, server_args, server_env = _engine(request, cpu)
    model = request.model or (str(cpu.model_dir) if cpu else None)
    plan, notes = rebuild_plan(
        imported,
        model=model,
        engine_cmd=engine_cmd,
        server_args=server_args,
        prompt_source=request.prompts,
        drafter=request.drafter,
        adaptive=request.adaptive,
        request_format=str(request.measurement.get("request_format") or "auto"),
    )
    for line in notes:
        note(f"note: {line}")
    if cpu:
        plan.session.vllm_version = cpu.vllm_version
    plan.session.provenance.entry_point = "sweep --rebuild"
    note(f"rebuilt {len(plan.session.arms)} arms of imported session {imported.id[:8]} as new local session {plan.session.id[:8]}")
    return Prepared(plan.session, server_env=server_env, cpu=cpu is not None)


def _engine(request: SweepRequest, cpu: CpuEngine | None) -> tuple[list[str], list[str], dict[str, str]]:
    """(engine command, server args, environment): the request's command, else the CPU engine's."""
    engine_cmd = list(request.engine_cmd) if request.engine_cmd else (list(cpu.engine_cmd) if cpu else [])
    server_args = (list(cpu.server_args) if cpu else []) + list(request.server_args)
    return engine_cmd, server_args, dict(cpu.env) if cpu else {}


def measurement_settings(request: SweepRequest, measured: Mapping[str, Any], **mode: Any) -> SweepSettings:
    """What every sweep measures with (the settings as parsed once), whatever launches the servers;
    `mode` adds the launch- or endpoint-specific fields."""
    from specadvisor.bench.prompts import default_output_len
    from specadvisor.domain import SweepSettings

    values = {k: v for k, v in measured.items() if k not in mode}
    values.setdefault("output_len", default_output_len(request.prompts))
    values["request_format"] = request_format_of(request.prompts, values.get("request_format"))
    return SweepSettings(prompt_source=request.prompts, **values, **mode)


def workload_kind(request: SweepRequest) -> WorkloadKind:
    """The workload a new session is labelled with: the one asked, else what its prompts are (a
    built-in set's own: humaneval code, rename edit, ...), chat for a file that says nothing."""
    from specadvisor.bench.prompts import workload_of
    from specadvisor.domain import WorkloadKind

    return WorkloadKind(request.workload or workload_of(request.prompts) or "chat")


def request_format_of(prompts: str, asked: str | None) -> str:
    """The request format a new session records: `asked` (auto, or none asked: what `vllm bench
    serve` does with these prompts) resolved to chat or completions (request_format.py)."""
    from specadvisor.bench.prompts import resolve_request_format

    return resolve_request_format(prompts, asked)[0]
