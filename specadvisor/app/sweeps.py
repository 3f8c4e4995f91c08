"""Use cases that put a sweep together: `start_sweep` (a new one), `attach_endpoint` (a running
server as its arms), `resume` (an interrupted local one) and `rebuild` (an imported one as a new
local session). Each takes a typed request and returns a `Prepared` session for `app.running`,
named for its provenance (`session.provenance.entry_point`); `app.running.runner_for` records the
rest of the provenance when the session runs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from specadvisor import bounds
from specadvisor.app import engine_env
from specadvisor.domain import SweepSettings
from specadvisor.errors import InputError

if TYPE_CHECKING:
    from specadvisor.domain import Arm, Session, WorkloadKind
    from specadvisor.engine.attach import EndpointInfo
    from specadvisor.engine.cpu import CpuEngine
    from specadvisor.store import Store

Note = Callable[[str], None]
# attach mode keeps the fixed design: these settings are about launches it does not make
_NOT_ATTACHED = ("drift_threshold", "ci_target", "confidence", "budget_s", "adaptive", "bracket", "engine_cmd", "server_args")
ADAPTIVE_CI_TARGET = 0.03  # --adaptive stops an arm at +/-3 % unless --ci-target says otherwise


@dataclass(frozen=True)
class SweepRequest:
    """What a front end asks of a sweep, parsed and range-checked. `settings` is validated and frozen:
    what the user set is `settings.model_fields_set` (the rest are defaults the use case may fill in,
    such as the prompt set's own output length), so nothing asked is dropped on the way."""

    model: str | None = None
    drafter: str | None = None
    methods: tuple[tuple[str, dict[str, Any]], ...] = ()  # (method, its extra speculative-config keys)
    n_values: tuple[int, ...] = ()
    baseline: bool = True
    workload: str | None = None  # domain.WorkloadKind's value; None: what the prompts are (bench.prompts.workload_of), chat for a file
    settings: SweepSettings = field(default_factory=SweepSettings)  # with the engine command, endpoint and server args asked
    api_key_env: str | None = None
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


def plan_sweep(request: SweepRequest, cpu: CpuEngine | None, *, probe: bool = True) -> Prepared:
    """`start_sweep` once the engine is known (`cpu`: the provisioned CPU engine, or None). `probe`
    False (a dry run): the engine behind --engine-cmd is not run to ask whether it is a CPU build."""
    from specadvisor.bench.prompts import resolve_request_format
    from specadvisor.sweep.plan import plan_from_methods

    model = request.model or (str(cpu.model_dir) if cpu else None)
    if request.settings.endpoint:
        return attach_endpoint(request, model)
    if not model:
        raise InputError("no model given", hint="pass --model MODEL (or --cpu for the CPU engine's SmolLM2)")
    if request.methods and not request.n_values:
        raise InputError("--method given without --n", hint="pass the N values to try, e.g. --n 1,3,5")
    bad = next((n for n in request.n_values if not 1 <= n <= bounds.MAX_N), None)
    if bad is not None:
        raise InputError(f"--n values must be from 1 to {bounds.MAX_N}, got {bad}", hint="e.g. --n 1,3,5")
    _check_goodput(request.settings)
    # a bad prompt file (or raw text asked of chat-only rows) fails here, before the database is opened
    _, format_notes = resolve_request_format(request.settings.prompt_source, request.settings.request_format)
    engine_cmd, server_args, server_env = _engine(request, cpu)
    notes: list[str] = [f"request format: {note}" for note in format_notes]
    if request.settings.engine_cmd and not cpu and probe:
        extra_args, extra_env, said = engine_env.cpu_build_defaults(engine_cmd, server_args)
        server_args += extra_args
        server_env.update(extra_env)
        if said:
            notes.append(
                f"the engine behind --engine-cmd is a CPU build: using the --cpu defaults {', '.join(said)} "
                "(pass them yourself with --server-arg or the environment to override)"
            )
    settings = measurement_settings(request.settings).replace(engine_cmd=engine_cmd, server_args=server_args)
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


def known_methods() -> list[str]:
    """The method ids `--method` takes (the method registry, rules/methods.toml)."""
    from specadvisor.rulebase import registry

    return list(registry.known_methods())


def require_method(name: str) -> None:
    """InputError naming the known methods when `name` is not one."""
    from specadvisor.rulebase import registry

    registry.require(name)


def needs_drafter(name: str) -> bool:
    """Whether the method measures with a drafter model (`--drafter`)."""
    from specadvisor.rulebase import registry

    return registry.needs_drafter(name)


def _check_goodput(settings: SweepSettings) -> None:
    if settings.goodput and settings.slo_tpot_ms is None and settings.slo_ttft_ms is None:
        raise InputError("--goodput needs a latency target", hint="pass --slo-tpot-ms (and/or --slo-ttft-ms), e.g. --slo-tpot-ms 30")


def attach_endpoint(request: SweepRequest, model: str | None = None) -> Prepared:
    """Attach mode: the running server is one configuration, measured at every requested concurrency
    level; its config is read from /server_info when exposed."""
    import asyncio
    import time

    from specadvisor.domain import Session
    from specadvisor.engine import Endpoint
    from specadvisor.engine.attach import IDENTIFY_DEADLINE_S

    assert request.settings.endpoint is not None
    levels = list(request.settings.concurrency)
    endpoint = Endpoint(request.settings.endpoint, api_key_env=request.api_key_env)
    started_at = time.monotonic()
    limit = request.settings.time_limit_s
    info = asyncio.run(endpoint.info(deadline_s=min(IDENTIFY_DEADLINE_S, limit) if limit else IDENTIFY_DEADLINE_S))  # inside --time-limit
    spec, notes = endpoint_spec(info)
    defaults = SweepSettings()
    measured = request.settings.replace(**{name: getattr(defaults, name) for name in _NOT_ATTACHED})
    settings = measurement_settings(measured).replace(endpoint=endpoint.url)
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
    session.settings = resumed_settings(session.settings, request.settings, session.id)
    if session.settings.endpoint:
        return Prepared(session, api_key_env=request.api_key_env)
    return Prepared(session, server_env=engine_env.stored_session_env(session, cpu_asked=request.cpu, progress=progress))


def rebuild(request: SweepRequest, imported: Session, *, note: Note, progress: Note) -> Prepared:
    """A NEW local session with the imported one's arms, on this machine's engine (never the bundle's)."""
    from specadvisor.sweep.rebuild import rebuild_plan

    cpu = engine_env.ensure_cpu(progress) if request.cpu else None
    engine_cmd, server_args, server_env = _engine(request, cpu)
    model = request.model or (str(cpu.model_dir) if cpu else None)
    prompts = request.settings.prompt_source
    plan, notes = rebuild_plan(
        imported,
        model=model,
        engine_cmd=engine_cmd,
        server_args=server_args,
        prompt_source=prompts,
        drafter=request.drafter,
        adaptive=request.settings.adaptive,
        request_format=request.settings.request_format or "auto",
    )
    asked = {k: v for k, v in request.settings.given().items() if k not in ("engine_cmd", "server_args", "endpoint", "prompt_source", "request_format")}
    if asked:  # the user's own flags over what crossed from the bundle: a new local session measures as asked
        plan.session.settings = plan.session.settings.replace(**asked)
    for line in notes:
        note(f"note: {line}")
    if cpu:
        plan.session.vllm_version = cpu.vllm_version
    plan.session.provenance.entry_point = "sweep --rebuild"
    note(f"rebuilt {len(plan.session.arms)} arms of imported session {imported.id[:8]} as new local session {plan.session.id[:8]}")
    return Prepared(plan.session, server_env=server_env, cpu=cpu is not None)


def _engine(request: SweepRequest, cpu: CpuEngine | None) -> tuple[list[str], list[str], dict[str, str]]:
    """(engine command, server args, environment): the request's command, else the CPU engine's."""
    asked = request.settings
    engine_cmd = list(asked.engine_cmd) if asked.engine_cmd else (list(cpu.engine_cmd) if cpu else [])
    server_args = (list(cpu.server_args) if cpu else []) + list(asked.server_args)
    return engine_cmd, server_args, dict(cpu.env) if cpu else {}


def measurement_settings(asked: SweepSettings) -> SweepSettings:
    """What every sweep measures with: the settings asked, with the defaults that depend on others
    filled in where nothing was asked (the prompt set's own output length; +/-3 % with --adaptive;
    a CI target of 0 is off; the request format resolved to chat or completions)."""
    from specadvisor.bench.prompts import default_output_len

    given = asked.model_fields_set
    fill: dict[str, Any] = {"request_format": request_format_of(asked.prompt_source, asked.request_format)}
    if "output_len" not in given:
        fill["output_len"] = default_output_len(asked.prompt_source)
    if "ci_target" not in given and asked.adaptive:
        fill["ci_target"] = ADAPTIVE_CI_TARGET
    elif asked.ci_target == 0:
        fill["ci_target"] = None
    return asked.replace(**fill)


def workload_kind(request: SweepRequest) -> WorkloadKind:
    """The workload a new session is labelled with: the one asked, else what its prompts are (a
    built-in set's own: humaneval code, rename edit, ...), chat for a file that says nothing."""
    from specadvisor.bench.prompts import workload_of
    from specadvisor.domain import WorkloadKind

    return WorkloadKind(request.workload or workload_of(request.settings.prompt_source) or "chat")


def request_format_of(prompts: str, asked: str | None) -> str:
    """The request format a new session records: `asked` (auto, or none asked: what `vllm bench
    serve` does with these prompts) resolved to chat or completions (request_format.py)."""
    from specadvisor.bench.prompts import resolve_request_format

    return resolve_request_format(prompts, asked)[0]


def resumed_settings(stored: SweepSettings, asked: SweepSettings, session_id: str) -> SweepSettings:
    """A resumed session's settings: those declared resumable (this run's time limit, where arms run)
    as asked, the stored ones otherwise. A measurement setting asked with another value is refused,
    never dropped: the finished arms were measured with the stored one."""
    changes: dict[str, Any] = {}
    for name, value in asked.given().items():
        if value == getattr(stored, name):
            continue
        if _resumable(name) and not (stored.endpoint and name in _NOT_ATTACHED):  # an attached server keeps the fixed design
            changes[name] = value
            continue
        flag = _flag(name)
        raise InputError(
            f"{flag} cannot change when resuming session {session_id[:8]}: its finished arms were measured with {flag} {_shown(name, getattr(stored, name))}",
            hint=f"resume without {flag}, or start a new sweep with it",
        )
    return stored.replace(**changes) if changes else stored


def _resumable(name: str) -> bool:
    from specadvisor.app.setting_table import BY_NAME

    return name in BY_NAME and BY_NAME[name].resumable


def _flag(name: str) -> str:
    from specadvisor.app.setting_table import BY_NAME

    return BY_NAME[name].flag if name in BY_NAME else name


def _shown(name: str, value: object) -> str:
    """A stored value as its flag reads it (percent, minutes)."""
    from specadvisor.app.setting_table import BY_NAME

    row = BY_NAME.get(name)
    if row is not None and row.scale != 1 and isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value * row.scale:g}"
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)
