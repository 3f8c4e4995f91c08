"""`specadvisor sweep`: measure a grid of speculative configs headlessly, with a live rich display.

Argument parsing and rendering only: the flags become an `app.sweeps.SweepRequest`, the app layer
(`specadvisor.app`, shared with the TUI and the demo) plans, resumes or rebuilds the session and
picks its runner; this module shows it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from typing import TYPE_CHECKING, Any

from specadvisor.cli.setting_flags import add_setting_flags
from specadvisor.cli.sweep_args import SweepArgs
from specadvisor.cli.workloads import WORKLOADS
from specadvisor.errors import InputError

if TYPE_CHECKING:  # imported inside the command: `specadvisor sweep --help` imports no model or store
    from specadvisor.app.running import Runner
    from specadvisor.app.sessions import Store
    from specadvisor.app.sweeps import Prepared, SweepRequest
    from specadvisor.domain import Session, SweepEvent

_RAY_EXTRA = "pip install 'specadvisor[ray]'"


def register(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Launch one vLLM server per configuration (baseline + methods x N), measure each, "
        "persist every finished arm, predict untested N and recommend. You choose the arms: --method with --n (every method "
        "at every N), --drafter for a method that loads a drafter; without --method only the baseline is measured "
        "(`advise` ranks the methods and gives each an N grid to pass here; the TUI sweeps the advised plan). "
        "Servers run one at a time without GPUs, else one per free GPU group (--parallel). Ctrl-C stops the current "
        "server; --resume SESSION continues without redoing finished arms."
    )
    p.add_argument("--model", help="target model (HF id or local dir); with --cpu defaults to the CPU engine's SmolLM2")
    p.add_argument(
        "--drafter", help="drafter model for the methods that load one (eagle3, dflash, draft_model...; required by them unless --spec-extra gives 'model')"
    )
    p.add_argument(
        "--method", action="append", default=[], help="method id (ngram, suffix, eagle3, peagle, dflash, draft_model, mtp...); repeat or comma-separate"
    )
    p.add_argument("--n", default=None, help="num_speculative_tokens values each --method is measured at, e.g. 1,3,7 (required with --method)")
    p.add_argument("--baseline", action=argparse.BooleanOptionalAction, default=True, help="also measure no speculation (default: yes)")
    p.add_argument(
        "--workload",
        choices=WORKLOADS,
        default=None,
        help="what the prompts are, as stored and used as local evidence by `advise` (default: the built-in set's: humaneval code, "
        "rename and edit edit, ...; chat for a file)",
    )
    add_setting_flags(p)
    p.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help=f"run the arms on a Ray cluster (ADDRESS, else the local one), one actor per server beside its load generator; needs {_RAY_EXTRA}",
    )
    p.add_argument(
        "--spec-extra",
        action="append",
        default=[],
        metavar="[METHOD:]JSON",
        help="extra speculative-config keys, e.g. '{\"prompt_lookup_min\":2}' or 'ngram:{\"prompt_lookup_max\":4}'",
    )
    p.add_argument("--api-key-env", default=None, help="environment variable holding the endpoint's API key (never stored)")
    p.add_argument("--cpu", action="store_true", help="use the CPU build of vLLM provisioned by `specadvisor engine setup-cpu`")
    p.add_argument("--name", default="", help="a name for the session")
    p.add_argument("--json", action="store_true", help="print results as JSON (no live display)")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print what would run (each arm's vllm serve command and environment, the load it sends, the time estimate) "
        "and exit: nothing is launched, probed, provisioned or stored (with --json: the plan as JSON)",
    )
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
    from specadvisor.app import sweeps
    from specadvisor.app.sessions import database, open_store

    # A new sweep is fully validated before the database is opened: bad input writes nothing.
    args = SweepArgs.from_namespace(namespace)
    request = _request(args)
    if args.dry_run:
        return _dry_run(args, request)
    prepared = None if args.resume else sweeps.start_sweep(request, progress=_progress)
    db_path = database(args.db)
    if args.resume and not db_path.exists():
        raise InputError(
            f"no session matches {args.resume!r}: there is no database at {db_path}", hint="see `specadvisor sessions list` for the ids, or pass --db PATH"
        )
    store = open_store(db_path)
    try:
        if prepared is None:
            assert args.resume is not None
            prepared = sweeps.resume(request, args.resume, store, rebuild_asked=args.rebuild, note=_note, progress=_progress)
        return execute(store, prepared, json_out=args.json, parallel=request.settings.parallel_choice, ray=args.ray, goodput=request.settings.goodput)
    finally:
        store.close()


# ---------------------------------------------------------------------- parsing into a request


def _request(args: SweepArgs) -> SweepRequest:
    """The flags as the app layer's typed request, each parsed and checked once (`cli.validate`)."""
    from specadvisor.app.sweeps import SweepRequest
    from specadvisor.cli import validate

    checked = validate.sweep_args(args)
    if args.rebuild and not args.resume:
        raise InputError("--rebuild needs --resume SESSION", hint="e.g. specadvisor sweep --resume 3f2a --rebuild")
    if args.resume and not args.rebuild and (args.method or args.n is not None or args.spec_extra):
        raise InputError("--method, --n and --spec-extra plan a new sweep; --resume continues a stored one", hint="drop them, or start a new sweep")
    return SweepRequest(
        model=args.model,
        drafter=args.drafter,
        methods=tuple(_methods(args, checked.methods)) if not args.resume else (),
        n_values=tuple(checked.n_values),
        baseline=args.baseline,
        workload=args.workload,
        settings=checked.settings,
        api_key_env=args.api_key_env,
        cpu=args.cpu,
        name=args.name,
        entry_point=args.entry_point,
    )


def _dry_run(args: SweepArgs, request: SweepRequest) -> int:
    """`--dry-run`: the plan and each arm's launch, printed; nothing run, probed or stored."""
    from specadvisor.app.dry_run import dry_run
    from specadvisor.cli.output import print_json
    from specadvisor.textsafe import line
    from specadvisor.vllm_command import PASTE_WIDTH, shell_command

    if args.resume:
        raise InputError("--dry-run shows a new sweep's plan; a resumed one continues its stored arms", hint="see them with `specadvisor sessions show ID`")
    if args.ray is not None:
        raise InputError("--dry-run shows the launches on this host; --ray places them on a cluster's actors", hint="drop --ray to see the plan")
    planned = dry_run(request)
    if args.json:
        print_json(planned.document())
        return 0
    session = planned.prepared.session
    s = session.settings
    print("dry run: nothing is launched, probed or stored")
    launches = f"{planned.launches} server launches" if planned.launches else "no launch (a running server)"
    print(line(f"plan: {len(planned.arms)} arms on {launches}, about {planned.seconds / 60:.0f} min ({planned.estimate_source})", 400))
    print(_workload_line(session) + f", temperature {s.temperature:g}")
    print(
        line(
            f"each arm: {s.warmup} warmup and {s.num_prompts} measured requests per trial, {s.trials} trial(s), "
            f"{'the baseline again at the end' if s.bracket and not s.endpoint else 'no bracket'}"
            + (f", stopped after {s.time_limit_s / 60:g} min" if s.time_limit_s else "")
            + (f", up to {s.budget_s / 60:g} more min until decided" if s.budget_s else ""),
            400,
        )
    )
    for note in planned.notes:
        print(line(f"plan: {note}", 2000))
    for index, arm in enumerate(planned.arms, start=1):
        print()
        print(line(f"[{index}/{len(planned.arms)}] {arm.label} at concurrency {arm.concurrency}", 400))
        if arm.command is None:
            print("  measures the running server: nothing is launched")
        else:
            print(shell_command(arm.command, env=arm.env, width=PASTE_WIDTH))
    return 0


def _progress(line: str) -> None:
    """The CPU engine's provisioning lines, as they come."""
    print(line, file=sys.stderr)


def _note(line: str) -> None:
    print(f"specadvisor: {line}" if line.startswith("note:") else line, file=sys.stderr)


def _methods(args: SweepArgs, names: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """`--method` names (checked) with their `--spec-extra` keys, and the drafter where one is needed."""
    from specadvisor.app.sweeps import needs_drafter
    from specadvisor.cli import validate

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
        if needs_drafter(name) and "model" not in extra:
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


# ---------------------------------------------------------------------- running and rendering


def execute(store: Store, prepared: Prepared, *, json_out: bool, parallel: str = "auto", ray: str | None = None, goodput: bool = False) -> int:
    """Run a prepared session (its runner from `app.running.runner_for`) with the live view (or
    quietly, `json_out`), then print its summary; the exit code says whether any arm measured. The
    demo's headless run shows its session here too."""
    from specadvisor.app import running

    runner = running.runner_for(prepared, store, running.RunOptions(parallel=parallel, ray=ray, goodput=goodput, note=_note))
    if prepared.session.settings.goodput:
        return _show_capacity(runner, prepared.session, json_out=json_out)
    return _show_sweep(runner, prepared, store, json_out=json_out)


def _show_sweep(runner: Runner, prepared: Prepared, store: Store, *, json_out: bool) -> int:
    from specadvisor.app import running
    from specadvisor.app.views import summary
    from specadvisor.cli.live_view import LiveSweepView
    from specadvisor.cli.output import console, print_json
    from specadvisor.domain import SweepFinished

    session = prepared.session
    view = None if json_out else LiveSweepView(session, console())
    if view:
        view.console.print(_plan_line(session, store))
        view.console.print(_workload_line(session), markup=False, highlight=False)
        for note in prepared.notes:
            view.console.print(f"plan: {note}")
    else:
        for note in prepared.notes:
            print(f"specadvisor: plan: {note}", file=sys.stderr)
    finished: list[SweepFinished] = []

    def on_event(event: SweepEvent) -> None:
        if isinstance(event, SweepFinished):
            finished.append(event)
        if view:
            view.on_event(event)

    try:
        with view or contextlib.nullcontext():
            running.drive(runner, on_event)
    except KeyboardInterrupt:
        print(f"specadvisor: sweep interrupted; resume with: specadvisor sweep --resume {session.id[:8]}", file=sys.stderr)
        return 130
    launches = {"launches_used": finished[-1].launches_used, "launches_full_grid": finished[-1].launches_full_grid} if finished else {}
    summarised = summary(session, **launches)
    if json_out:
        print_json(summarised)
    else:
        assert view is not None
        view.print_summary(summarised)
    return _exit_code(session)


def _show_capacity(runner: Runner, session: Session, *, json_out: bool) -> int:
    """`--goodput`: each configuration once, its goodput under the latency target; its progress lines as they come."""
    from specadvisor.app import running
    from specadvisor.app.views import capacity_answer
    from specadvisor.cli.output import console, print_json
    from specadvisor.domain import ServerLog

    out = None if json_out else console()

    def on_event(event: SweepEvent) -> None:
        if out is not None and isinstance(event, ServerLog):
            out.print(event.line, markup=False, highlight=False)

    try:
        running.drive(runner, on_event)
    except KeyboardInterrupt:
        print(f"specadvisor: capacity sweep interrupted; resume with: specadvisor sweep --resume {session.id[:8]}", file=sys.stderr)
        return 130
    answer = capacity_answer(session)
    if out is None:
        print_json({
            "session": session.id, "answer": answer,
            "arms": [{"arm": r.arm_id, "goodput_rps": r.goodput_rps, "rates": [p.model_dump() for p in r.rate_points]} for r in session.results],
        })  # fmt: skip
    else:
        out.print(answer or "no configuration met the latency target at any measured rate", markup=False, highlight=False)
    return _exit_code(session)


def _exit_code(session: Session) -> int:
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


def _workload_line(session: Session) -> str:
    """What is measured: the workload, its prompts and how they are sent (chat template or raw text)."""
    from specadvisor import request_format
    from specadvisor.textsafe import line

    s = session.settings
    sent = request_format.recorded(s.request_format, s.prompt_source)
    return line(f"workload: {session.workload.value}, prompts {s.prompt_source} x{s.num_prompts}, {s.output_len} output tokens, sent as {sent}", 400)


def _plan_line(session: Session, store: Store) -> str:
    """The plan and its time, from the same estimate the TUI's plan shows (start-ups and request
    rates measured by this machine's sweeps when there are any)."""
    from specadvisor.app.plan import estimate

    found = estimate(session, store)
    return (
        f"plan: {found.arms} arms ({found.to_measure} to measure) on {found.launches} server launches, "
        f"about {found.seconds / 60:.0f} min for the full grid{' (--adaptive launches fewer)' if session.settings.adaptive else ''} ({found.source})"
    )
