"""`specadvisor sweep`: measure a grid of speculative configs headlessly, with a live rich display.

Argument parsing and rendering only: the plan, runner, predictor and recommendation live in
specadvisor.sweep, shared with the TUI.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import TYPE_CHECKING, Any

from specadvisor.cli.sweep_args import SweepArgs
from specadvisor.errors import InputError

if TYPE_CHECKING:  # imported inside the command: `specadvisor sweep --help` imports no model or store
    from specadvisor.domain import Session, SweepSettings
    from specadvisor.store import Store

_RAY_EXTRA = "pip install 'specadvisor[ray]'"


def register(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Launch one vLLM server per configuration (baseline + methods x N), measure each, "
        "persist every finished arm, predict untested N and recommend. Ctrl-C stops the current server; "
        "--resume SESSION continues without redoing finished arms."
    )
    p.add_argument("--model", help="target model (HF id or local dir); with --cpu defaults to the CPU engine's SmolLM2")
    p.add_argument("--drafter", help="drafter model for eagle3/dflash/draft_model methods")
    p.add_argument(
        "--method", action="append", default=[], help="method id (ngram, suffix, eagle3, peagle, dflash, draft_model, mtp...); repeat or comma-separate"
    )
    p.add_argument("--n", default=None, help="num_speculative_tokens values, e.g. 1,3,7")
    p.add_argument("--baseline", action=argparse.BooleanOptionalAction, default=True, help="also measure no speculation (default: yes)")
    p.add_argument("--adaptive", action="store_true", help="measure the largest N first, predict the rest, launch only promising N")
    p.add_argument("--prompts", default="humaneval", help="prompt source: humaneval, sharegpt, math, rag, edit, or a file (default: %(default)s)")
    p.add_argument("--num-prompts", default="32", help="measured requests per arm, e.g. 32 or 1k (default: %(default)s)")
    p.add_argument("--output-len", default=None, help="output tokens per request, fixed (ignore_eos), e.g. 256 or 2k (default: 256; 128 for --prompts edit)")
    p.add_argument("--concurrency", default="1", help="client concurrency level(s), e.g. 1 or 1,8 (default: %(default)s)")
    p.add_argument("--temperature", type=float, default=0.0, help="sampling temperature of every request; acceptance drops as it rises (default: %(default)s)")
    p.add_argument("--warmup", type=int, default=2, help="warmup requests per arm, excluded from results (default: %(default)s)")
    p.add_argument(
        "--trials",
        type=int,
        default=1,
        help="measured trials per arm, each on a fresh server; trial k of every arm runs before trial k+1 of any (default: %(default)s)",
    )
    p.add_argument(
        "--bracket", action=argparse.BooleanOptionalAction, default=True, help="measure the baseline again at the end to measure drift (default: yes)"
    )
    p.add_argument(
        "--drift-threshold",
        type=float,
        default=5.0,
        metavar="PCT",
        help="baseline drift (%%) flagged in the output (default 5); the verdict counts drift as launch-to-launch spread",
    )
    p.add_argument(
        "--confidence",
        type=float,
        default=95.0,
        metavar="PCT",
        help="confidence asked of the verdict (default 95): speculate only when the whole interval is 3%% or more faster",
    )
    p.add_argument(
        "--budget",
        type=float,
        default=None,
        metavar="MIN",
        help="measure until decided: while a level is undecided, add launches (and requests on them) for up to MIN more minutes (default: off, the fixed design)",
    )
    p.add_argument(
        "--parallel",
        default="auto",
        metavar="auto|K",
        help="servers at once: auto = one per free GPU group (serial without GPUs); K on a CPU-only host splits the cores",
    )
    p.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help=f"run the arms on a Ray cluster (ADDRESS, else the local one), one actor per server beside its load generator; needs {_RAY_EXTRA}",
    )
    p.add_argument(
        "--ci-target",
        type=float,
        default=None,
        metavar="PCT",
        help="stop an arm once its throughput interval is within +/-PCT%% (default 3 with --adaptive, else off; 0 = off)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of every request and of the prompt sample, so runs repeat (default: %(default)s)")
    p.add_argument("--request-rate", type=float, default=None, help="Poisson request rate (default: as fast as concurrency allows)")
    p.add_argument(
        "--spec-extra",
        action="append",
        default=[],
        metavar="[METHOD:]JSON",
        help="extra speculative-config keys, e.g. '{\"prompt_lookup_min\":2}' or 'ngram:{\"prompt_lookup_max\":4}'",
    )
    p.add_argument("--slo-tpot-ms", type=float, default=None, help="latency target on p99 TPOT (ms)")
    p.add_argument("--slo-ttft-ms", type=float, default=None, help="latency target on p99 TTFT (ms)")
    p.add_argument(
        "--goodput",
        action="store_true",
        help="capacity instead of fixed concurrency: per configuration, one launch and a Poisson rate sweep "
        "that binary-searches the highest req/s whose p99 TPOT/TTFT meets --slo-tpot-ms/--slo-ttft-ms",
    )
    engine = p.add_mutually_exclusive_group()
    engine.add_argument("--engine-cmd", default=None, help="command that launches vLLM (default 'vllm serve')")
    engine.add_argument("--endpoint", default=None, help="measure a running server at URL as one arm (nothing is launched)")
    p.add_argument("--api-key-env", default=None, help="environment variable holding the endpoint's API key (never stored)")
    p.add_argument(
        "--server-arg", action="append", default=[], metavar="ARG", help="extra vllm serve argument (repeat; e.g. --server-arg=--max-model-len=4096)"
    )
    p.add_argument("--cpu", action="store_true", help="use the CPU build of vLLM provisioned by `specadvisor engine setup-cpu`")
    p.add_argument("--name", default="", help="a name for the session")
    p.add_argument("--json", action="store_true", help="print results as JSON (no live display)")
    p.add_argument(
        "--resume", metavar="SESSION", default=None, help="continue an interrupted sweep (a session imported from a bundle is refused: see --rebuild)"
    )
    p.add_argument(
        "--rebuild",
        action="store_true",
        help="with --resume of an imported session: plan its arms as a NEW local session on this machine's engine "
        "(engine command and server args from this machine and your flags, never from the bundle)",
    )
    p.add_argument("--entry-point", default=None, help=argparse.SUPPRESS)  # the demo says it started the session
    p.set_defaults(func=run)


def run(namespace: argparse.Namespace) -> int:
    from specadvisor.cli import validate
    from specadvisor.settings import paths
    from specadvisor.store import Store

    # A new sweep is fully validated before the database is opened: bad input writes nothing.
    args = SweepArgs.from_namespace(namespace)
    validate.sweep_args(args)
    if args.rebuild and not args.resume:
        raise InputError("--rebuild needs --resume SESSION", hint="e.g. specadvisor sweep --resume 3f2a --rebuild")
    if args.goodput and args.slo_tpot_ms is None and args.slo_ttft_ms is None:
        raise InputError("--goodput needs a latency target", hint="pass --slo-tpot-ms (and/or --slo-ttft-ms), e.g. --slo-tpot-ms 30")
    built = None if args.resume else _new(args)
    db_path = args.db or paths().database
    if args.resume and not db_path.expanduser().exists():
        raise InputError(
            f"no session matches {args.resume!r}: there is no database at {db_path}", hint="see `specadvisor sessions list` for the ids, or pass --db PATH"
        )
    store = Store.open(db_path)
    try:
        session, runner_kwargs = built or _resume(args, store)
        if args.goodput or session.settings.goodput:
            return _execute_capacity(args, store, session, runner_kwargs)
        if args.ray is not None:
            from specadvisor.sweep.ray_cluster import ray_runner

            runner_kwargs.update(ray_runner(args.ray or None, args.parallel, session, runner_kwargs.pop("server_env", {})))
        else:
            runner_kwargs["slots"] = _slots(args, session)
        return _execute(args, store, session, runner_kwargs)
    finally:
        store.close()


# ---------------------------------------------------------------------- building the session


def _new(args: SweepArgs):
    from specadvisor.bench.prompts import BUILTIN_SOURCES, load_prompts
    from specadvisor.cli import validate
    from specadvisor.provenance import record_provenance
    from specadvisor.sweep.plan import plan_from_methods

    cpu = _cpu_engine() if args.cpu else None
    model = args.model or (str(cpu.model_dir) if cpu else None)
    methods = _methods(args)
    n_values = validate.int_list(args.n, "--n", low=1, high=validate.MAX_N) if args.n else []
    if args.endpoint:
        return _endpoint_session(args, model)
    if not model:
        raise InputError("no model given", hint="pass --model MODEL (or --cpu for the CPU engine's SmolLM2)")
    if methods and not n_values:
        raise InputError("--method given without --n", hint="pass the N values to try, e.g. --n 1,3,5")
    if args.prompts.strip().lower() not in BUILTIN_SOURCES:
        load_prompts(args.prompts, 1)  # a bad prompt file fails here, before the database is opened
    engine_cmd = validate.engine_cmd(args.engine_cmd) if args.engine_cmd else (list(cpu.engine_cmd) if cpu else [])
    server_args = (list(cpu.server_args) if cpu else []) + list(args.server_arg)
    server_env = dict(cpu.env) if cpu else {}
    notes: list[str] = []
    if args.engine_cmd and not cpu:
        extra_args, extra_env, said = _cpu_build_defaults(engine_cmd, server_args)
        server_args += extra_args
        server_env.update(extra_env)
        if said:
            notes.append(
                f"the engine behind --engine-cmd is a CPU build: using the --cpu defaults {', '.join(said)} "
                "(pass them yourself with --server-arg or the environment to override)"
            )
    settings = _measurement_settings(
        args,
        _ints(args.concurrency, "--concurrency"),
        engine_cmd=engine_cmd,
        server_args=server_args,
        adaptive=args.adaptive,
        goodput=args.goodput,
        **_scheduling(args),
    )
    plan = plan_from_methods(model, methods, n_values, settings, baseline=args.baseline, drafter=args.drafter)
    plan.session.name = args.name
    if cpu:
        plan.session.vllm_version = cpu.vllm_version
    record_provenance(plan.session, entry_point=args.entry_point or ("sweep --cpu" if cpu else "sweep"))
    return plan.session, {"server_env": server_env, "plan_notes": notes}


def _cpu_build_defaults(engine_cmd: list[str], server_args: list[str]) -> tuple[list[str], dict[str, str], list[str]]:
    """The --cpu server defaults when the engine behind --engine-cmd reports the CPU platform
    (nothing for a GPU build, or an engine the probe cannot read)."""
    import os

    from specadvisor.engine.cpu import cpu_build_defaults
    from specadvisor.hardware.engine_probe import probe_engine

    if probe_engine(engine_cmd).platform != "cpu":
        return [], {}, []
    return cpu_build_defaults(server_args, dict(os.environ))


def _endpoint_session(args: SweepArgs, model: str | None):
    """Attach mode: the running server is one configuration, measured at every requested concurrency
    level; its config is read from /server_info when exposed."""
    import asyncio

    from specadvisor.domain import Session
    from specadvisor.engine import Endpoint
    from specadvisor.provenance import record_provenance

    levels = _ints(args.concurrency, "--concurrency")
    endpoint = Endpoint(args.endpoint, api_key_env=args.api_key_env)
    info = asyncio.run(endpoint.info())
    spec = info.speculative_config
    settings = _measurement_settings(args, levels, endpoint=endpoint.url)
    session = Session(
        model=model or info.served_model or "",
        settings=settings,
        arms=endpoint_arms(endpoint.url, spec, levels),
        vllm_version=info.version,
        name=args.name,
        concurrency=levels[0],
    )
    record_provenance(session, entry_point="sweep --endpoint", endpoint_info=info)
    return session, {"api_key_env": args.api_key_env, "model_name": info.served_model}


def endpoint_arms(url: str, spec: dict | None, levels: list[int]) -> list:
    """One arm per requested concurrency level on the running server (they share it: nothing is relaunched)."""
    from specadvisor.domain import Arm
    from specadvisor.redact import redact_text

    multi = len(levels) > 1
    what = f"{spec.get('method')} N={spec.get('num_speculative_tokens')}" if spec else "running server"
    arms = []
    for level in levels:
        arms.append(
            Arm(
                id=f"endpoint-c{level}" if multi else "endpoint",
                label=f"{what} at {redact_text(url)}" + (f" @c{level}" if multi else ""),  # shown and stored: no password
                method=spec.get("method") if spec else None,
                n=spec.get("num_speculative_tokens") if spec else None,
                speculative_config=spec,
                concurrency=level,
            )
        )
    return arms


def _resume(args: SweepArgs, store: Store):
    from specadvisor.provenance import record_provenance
    from specadvisor.trust import is_imported, refuse_imported

    session = store.get_session(args.resume)
    if is_imported(session):
        if not args.rebuild:
            refuse_imported(session)
        return _rebuild(args, session)
    if args.rebuild:
        raise InputError(
            f"session {session.id[:8]} is local; --rebuild is for imported sessions", hint=f"resume it with: specadvisor sweep --resume {session.id[:8]}"
        )
    record_provenance(session, entry_point="resume")
    env: dict[str, str] = {}
    cpu = _find_cpu()
    if args.cpu or (cpu is not None and session.settings.engine_cmd == list(cpu.engine_cmd)):
        cpu = cpu or _cpu_engine()
        env = dict(cpu.env)
    if not env and session.settings.engine_cmd and not session.settings.endpoint:
        env = _cpu_build_defaults(session.settings.engine_cmd, session.settings.server_args)[1]  # args were stored
    kwargs: dict[str, Any] = {"server_env": env}
    if session.settings.endpoint:
        kwargs = {"api_key_env": args.api_key_env}
    return session, kwargs


def _rebuild(args: SweepArgs, imported):
    """A NEW local session with the imported one's arms, on this machine's engine (never the bundle's)."""
    from specadvisor.cli import validate
    from specadvisor.provenance import record_provenance
    from specadvisor.sweep.rebuild import rebuild_plan

    cpu = _cpu_engine() if args.cpu else None
    engine_cmd = validate.engine_cmd(args.engine_cmd) if args.engine_cmd else (list(cpu.engine_cmd) if cpu else [])
    server_args = (list(cpu.server_args) if cpu else []) + list(args.server_arg)
    model = args.model or (str(cpu.model_dir) if cpu else None)
    plan, notes = rebuild_plan(imported, model=model, engine_cmd=engine_cmd, server_args=server_args, prompt_source=args.prompts, drafter=args.drafter)
    for note in notes:
        print(f"specadvisor: note: {note}", file=sys.stderr)
    if cpu:
        plan.session.vllm_version = cpu.vllm_version
    record_provenance(plan.session, entry_point="sweep --rebuild")
    print(f"rebuilt {len(plan.session.arms)} arms of imported session {imported.id[:8]} as new local session {plan.session.id[:8]}", file=sys.stderr)
    return plan.session, {"server_env": dict(cpu.env) if cpu else {}}


def _cpu_engine():
    from specadvisor.engine.cpu import ensure_cpu_engine

    return ensure_cpu_engine(lambda line: print(line, file=sys.stderr))


def _find_cpu():
    from specadvisor.engine.cpu import find_cpu_engine

    return find_cpu_engine()


def _methods(args: SweepArgs) -> list[tuple[str, dict]]:
    from specadvisor.cli import validate
    from specadvisor.rulebase import registry

    names = validate.method_names(args.method) if args.method else []
    common: dict[str, Any] = {}
    per_method: dict[str, dict[str, Any]] = {}
    for raw in args.spec_extra:
        target, text = _split_extra(raw)
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"--spec-extra {raw!r} is not valid JSON: {exc.msg}", hint="use e.g. '{\"prompt_lookup_min\": 2}'") from exc
        if not isinstance(value, dict):
            raise InputError(f"--spec-extra {raw!r} is not a JSON object", hint="use e.g. '{\"prompt_lookup_min\": 2}'")
        validate.spec_extra(value, raw)
        (per_method.setdefault(target, {}) if target else common).update(value)
    unknown = set(per_method) - set(names)
    if unknown:
        raise InputError(f"--spec-extra names method(s) not swept: {', '.join(sorted(unknown))}", hint="add them with --method")
    out = []
    for name in names:
        extra = {**common, **per_method.get(name, {})}
        if registry.needs_drafter(name) and "model" not in extra:
            if not args.drafter:
                raise InputError(f"method {name} needs a drafter model", hint="pass --drafter MODEL")
            extra["model"] = args.drafter
        out.append((name, extra))
    return out


def _split_extra(raw: str) -> tuple[str | None, str]:
    raw = raw.strip()
    if raw.startswith("{"):
        return None, raw
    head, sep, rest = raw.partition(":")
    if not sep:
        raise InputError(f"--spec-extra {raw!r} is neither JSON nor METHOD:JSON", hint="use e.g. 'ngram:{\"prompt_lookup_min\": 2}'")
    return head.strip(), rest


def _scheduling(args: SweepArgs) -> dict[str, Any]:
    """Bracketing, drift threshold and the early-stop target as SweepSettings fields."""
    if args.drift_threshold < 0:
        raise InputError(f"--drift-threshold must be >= 0, got {args.drift_threshold}", hint="e.g. --drift-threshold 5")
    target = args.ci_target if args.ci_target is not None else (3.0 if args.adaptive else 0.0)
    if target < 0:
        raise InputError(f"--ci-target must be >= 0, got {target}", hint="e.g. --ci-target 3 (percent), 0 = off")
    if not 50 <= args.confidence < 100:
        raise InputError(f"--confidence must be within 50..99.99 (percent), got {args.confidence:g}", hint="e.g. --confidence 95")
    if args.budget is not None and not (math.isfinite(args.budget) and args.budget >= 0):
        raise InputError(f"--budget must be a number of minutes >= 0, got {args.budget:g}", hint="e.g. --budget 20")
    budget = args.budget * 60 if args.budget is not None else None
    return {
        "bracket": args.bracket,
        "drift_threshold": args.drift_threshold / 100,
        "ci_target": target / 100 or None,
        "confidence": args.confidence / 100,
        "budget_s": budget,
    }


def _slots(args: SweepArgs, session) -> list:
    """Where arms run (`--parallel`): GPU groups of the arm's tensor-parallel size, or core ranges."""
    from specadvisor.sweep.host import slots_for

    session.settings.parallel_choice = str(args.parallel).strip().lower()
    slots = slots_for(args.parallel, session)
    if any(s.shared for s in slots):
        if not any("gpu-memory-utilization" in a for a in session.settings.server_args):
            print("specadvisor: note: several servers share a GPU; pass --server-arg=--gpu-memory-utilization=0.3 so that they fit", file=sys.stderr)
        # Measured on an H200 (vLLM 0.26, SmolLM2, c=8): ngram N=4 over the baseline read 0.46x side by
        # side on one GPU and 0.55x alone. The ranking held; the ratio did not.
        print("specadvisor: note: servers sharing a GPU contend for its compute: trust the ranking, confirm the speedup with --parallel 1", file=sys.stderr)
    return slots


def _ints(text: str, flag: str) -> list[int]:
    """Comma-separated positive counts as people type them (`1,8`, `1 8`, `2k`): one parser with the TUI."""
    from specadvisor.quantities import parse_count_list

    return parse_count_list(str(text), flag)


def _measurement_settings(args: SweepArgs, concurrency: list[int], **mode: Any) -> SweepSettings:
    """What every sweep measures with (prompts, lengths, sampling, trials, load, SLOs), whatever
    launches the servers; `mode` adds the launch- or endpoint-specific fields."""
    from specadvisor.bench.prompts import default_output_len
    from specadvisor.domain import SweepSettings

    return SweepSettings(
        prompt_source=args.prompts,
        num_prompts=_count(args.num_prompts, "--num-prompts"),
        output_len=_count(args.output_len, "--output-len") if args.output_len is not None else default_output_len(args.prompts),
        temperature=args.temperature,
        seed=args.seed,
        warmup=max(0, args.warmup),
        trials=_positive(args.trials, "--trials"),
        concurrency=concurrency,
        request_rate=args.request_rate,
        slo_tpot_ms=args.slo_tpot_ms,
        slo_ttft_ms=args.slo_ttft_ms,
        **mode,
    )


def _count(text: str | int, flag: str) -> int:
    """A positive count as people type it (`256`, `2k`), parsed by the TUI's parser."""
    from specadvisor.quantities import parse_count

    return parse_count(str(text), flag)


def _positive(value: int, flag: str) -> int:
    if value < 1:
        raise InputError(f"{flag} must be at least 1, got {value}", hint=f"pass {flag} 1 or more")
    return value


# ---------------------------------------------------------------------- running and rendering


def _execute(args: SweepArgs, store: Store, session: Session, runner_kwargs: dict[str, Any]) -> int:
    from specadvisor.analysis.summary import session_summary
    from specadvisor.cli.live_view import LiveSweepView
    from specadvisor.cli.output import console, print_json
    from specadvisor.sweep.runner import run_sweep_blocking

    notes = runner_kwargs.pop("plan_notes", [])
    view = None if args.json else LiveSweepView(session, console())
    if view:
        view.console.print(_plan_line(session, cpu=bool(args.cpu)))
        for note in notes:
            view.console.print(f"plan: {note}")
    else:
        for note in notes:
            print(f"specadvisor: plan: {note}", file=sys.stderr)
    try:
        if view:
            with view:
                runner = run_sweep_blocking(session, store, view.on_event, **runner_kwargs)
        else:
            runner = run_sweep_blocking(session, store, lambda e: None, **runner_kwargs)
    except KeyboardInterrupt:
        print(f"specadvisor: sweep interrupted; resume with: specadvisor sweep --resume {session.id[:8]}", file=sys.stderr)
        return 130
    summary = session_summary(runner.session, launches_used=runner.launches_used, launches_full_grid=runner.launches_full_grid)
    if args.json:
        print_json(summary)
    else:
        view.print_summary(summary)
    return _exit_code(runner.session)


def _execute_capacity(args: SweepArgs, store: Store, session: Session, runner_kwargs: dict[str, Any]) -> int:
    """`--goodput`: each configuration once, its goodput under the latency target (sweep.capacity)."""
    import asyncio

    from specadvisor.analysis.capacity import capacity_answer, slo_of
    from specadvisor.cli.output import console, print_json
    from specadvisor.sweep.capacity import run_capacity
    from specadvisor.sweep.runner import VllmServerFactory

    slo_of(session)  # a missing target is bad input before anything launches
    session.settings.goodput = True
    out = None if args.json else console()
    note = (lambda line: out.print(line, markup=False, highlight=False)) if out else (lambda line: None)
    factory = VllmServerFactory(runner_kwargs.get("server_env") or {})
    try:
        session = asyncio.run(run_capacity(session, store, server_factory=factory, note=note))
    except KeyboardInterrupt:
        print(f"specadvisor: capacity sweep interrupted; resume with: specadvisor sweep --resume {session.id[:8]}", file=sys.stderr)
        return 130
    answer = capacity_answer(session)
    if args.json:
        print_json({
            "session": session.id, "answer": answer,
            "arms": [{"arm": r.arm_id, "goodput_rps": r.goodput_rps, "rates": [p.model_dump() for p in r.rate_points]} for r in session.results],
        })  # fmt: skip
    else:
        out.print(answer or "no configuration met the latency target at any measured rate", markup=False, highlight=False)
    return _exit_code(session)


def _exit_code(session) -> int:
    """0 when at least one arm produced a measurement; 4 (engine) when every arm failed, so a script
    never takes a sweep of failures for a result."""
    from specadvisor.cli.main import error_line
    from specadvisor.domain import ArmStatus
    from specadvisor.errors import EngineError

    usable = [r for r in session.results if r.status in (ArmStatus.ok, ArmStatus.stopped_early)]
    if usable or not session.arms:
        return 0
    failed = [r for r in session.results if r.status == ArmStatus.failed]
    cause = f"; first cause: {failed[0].error}" if failed and failed[0].error else ""
    err = EngineError(
        f"no arm of session {session.id[:8]} produced a measurement{cause}", hint="see the server logs and `specadvisor sessions show " + session.id[:8] + "`"
    )
    print(f"specadvisor: error: {error_line(err)}", file=sys.stderr)
    return err.exit_code


def _plan_line(session, *, cpu: bool) -> str:
    from specadvisor.sweep.plan import SweepPlan

    plan = SweepPlan(session=session)
    if cpu:  # measured on the CPU engine: ~70 s start-up, ~10 tok/s per stream
        plan.startup_estimate_s, plan.tokens_per_s_estimate = 70.0, 10.0
    todo = [a for a in session.arms if session.result_for(a.id) is None]
    return (
        f"plan: {len(session.arms)} arms ({len(todo)} to measure) on {plan.launches()} server launches, "
        f"about {plan.estimate_seconds() / 60:.0f} min for the full grid{' (--adaptive launches fewer)' if session.settings.adaptive else ''}"
    )
