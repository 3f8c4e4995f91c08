"""`specadvisor train` and `specadvisor drafters ...`: train an EAGLE-3 drafter with Speculators, then
judge it with a sweep; list, show and re-judge the drafters trained here."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from specadvisor.app.sessions import Store
    from specadvisor.app.train import Serving, TrainPlan
    from specadvisor.domain import Session, SweepSettings, TrainedDrafter, TrainEvent

MAX_MINUTES = 7 * 24 * 60
MAX_STEPS = 10_000_000


def register(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Train an EAGLE-3 drafter for MODEL with Speculators (online: the target's own answers to your prompts, "
        "hidden states from a vllm serve specadvisor launches), then measure it: vLLM's acceptance on held-out prompts, "
        "and the sweep that judges it against no speculation and n-gram at your concurrency."
    )
    parser.add_argument("--model", help="the target (Hub id or local folder); default with --cpu: the CPU engine's SmolLM2")
    parser.add_argument(
        "--prompts", default="humaneval", help="training prompts: a built-in set or a .jsonl/.json/.txt file, as in `sweep` (default: humaneval)"
    )
    parser.add_argument("--num-prompts", type=int, help="use a seeded sample of this many prompts (default: every distinct prompt)")
    parser.add_argument("--output-len", type=int, default=512, help="longest regenerated answer in tokens; answers end at EOS (default: 512)")
    parser.add_argument("--temperature", type=float, default=0.0, help="the temperature you serve at: answers are regenerated at it (default: 0)")
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--minutes", type=float, help="train for this long (optimizer time; resumed runs count what was spent)")
    budget.add_argument("--steps", type=int, help="train for this many optimizer steps")
    parser.add_argument("--draft-vocab-size", type=int, help="tokens the draft head predicts (default: a quarter of the target's vocabulary, at most 32,000)")
    parser.add_argument("--total-seq-len", type=int, default=2048, help="tokens packed per training batch (default: 2048)")
    parser.add_argument("--heldout", type=float, default=10.0, metavar="PCT", help="percent of the prompts kept out of training to measure drift (default: 10)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the held-out split, the sample and the trainer (default: 0)")
    parser.add_argument("--cpu", action="store_true", help="train against the CPU engine (SmolLM2; slow, to try the pipeline)")
    parser.add_argument("--engine-cmd", help="command that starts the server (default: 'vllm serve'); its Python must have Speculators")
    parser.add_argument(
        "--server-arg", action="append", default=[], metavar="ARG", help="extra vllm serve argument (repeatable, use --server-arg=--flag=value)"
    )
    parser.add_argument("--train-python", metavar="PATH", help="the Python that runs Speculators (default: the one behind the engine command)")
    parser.add_argument("--name", default="", help="a name for the drafter")
    parser.add_argument("--resume", metavar="ID", help="continue an interrupted training run")
    parser.add_argument(
        "--no-sweep", action="store_true", help="stop after training and the held-out check (judge it later with `specadvisor drafters judge ID`)"
    )
    _judge_options(parser)
    parser.add_argument("--json", action="store_true", help="print the drafter's record as JSON at the end")
    parser.set_defaults(func=_train)


def register_drafters(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="drafters_command", metavar="DRAFTERS_COMMAND")
    listing = commands.add_parser("list", help="drafters trained here, newest first")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(func=_list)
    show = commands.add_parser("show", help="one trained drafter: data, budget, loss curve, acceptance, drift")
    show.add_argument("id", help="drafter id or unique prefix")
    show.add_argument("--json", action="store_true", help="print JSON")
    show.set_defaults(func=_show)
    judge = commands.add_parser("judge", help="sweep a trained drafter against no speculation and n-gram (again: after a retrain or when traffic shifts)")
    judge.add_argument("id", help="drafter id or unique prefix")
    judge.add_argument("--engine-cmd", help="command that starts the server (default: 'vllm serve', or the CPU engine for a drafter trained there)")
    judge.add_argument("--server-arg", action="append", default=[], metavar="ARG", help="extra vllm serve argument (repeatable, use --server-arg=--flag=value)")
    _judge_options(judge)
    judge.add_argument("--json", action="store_true", help="print the sweep's summary as JSON")
    judge.set_defaults(func=_judge)


# The judging sweep's settings: the sweep settings' own declarations (kind, bound, unit), spelled for this command.
JUDGING = (
    ("prompt_source", "--sweep-prompts", "prompts of the judging sweep: what you will serve (default: the training prompts' source)"),
    ("num_prompts", "--sweep-num-prompts", "measured requests per arm in the judging sweep (default: 32)"),
    ("output_len", "--sweep-output-len", "fixed output length of the judging sweep (default: the prompt set's)"),
    ("concurrency", "--concurrency", "client concurrency level(s) of the judging sweep, e.g. 1 or 1,8 (default: 1)"),
    ("budget_s", "--budget", "minutes the judging sweep may spend measuring until decided (default: the fixed design)"),
)


def _judge_options(parser: argparse.ArgumentParser) -> None:
    from specadvisor.cli.setting_flags import add_setting_flag, spelled

    for name, flag, help in JUDGING:
        add_setting_flag(parser, spelled(name, flag), dest=f"judge_{name}", help=help)


# ---------------------------------------------------------------------- train


def _request(args: argparse.Namespace) -> Any:
    from specadvisor.app.train import TrainRequest
    from specadvisor.cli import validate
    from specadvisor.errors import InputError

    if args.minutes is not None and not (0 < args.minutes <= MAX_MINUTES):
        raise InputError(f"--minutes must be more than 0 and at most {MAX_MINUTES}, got {args.minutes}", hint="e.g. --minutes 10")
    if args.steps is not None:
        validate.integer(args.steps, "--steps", low=1, high=MAX_STEPS)
    if args.num_prompts is not None:
        validate.integer(args.num_prompts, "--num-prompts", low=1, high=10_000_000)
    validate.integer(args.output_len, "--output-len", low=8, high=32_768)
    validate.integer(args.total_seq_len, "--total-seq-len", low=128, high=131_072)
    if args.draft_vocab_size is not None:
        validate.integer(args.draft_vocab_size, "--draft-vocab-size", low=64, high=1_000_000)
    if not (0 <= args.temperature <= 2):
        raise InputError(f"--temperature must be from 0 to 2, got {args.temperature}", hint="e.g. --temperature 0")
    if not (1 <= args.heldout <= 40):
        raise InputError(f"--heldout must be from 1 to 40 percent, got {args.heldout}", hint="e.g. --heldout 10")
    return TrainRequest(
        model=args.model,
        prompts=args.prompts,
        num_prompts=args.num_prompts,
        output_len=args.output_len,
        temperature=args.temperature,
        minutes=args.minutes,
        steps=args.steps,
        draft_vocab_size=args.draft_vocab_size,
        total_seq_len=args.total_seq_len,
        heldout_share=args.heldout / 100,
        seed=args.seed,
        cpu=args.cpu,
        engine_cmd=tuple(validate.engine_cmd(args.engine_cmd)) if args.engine_cmd else None,
        server_args=tuple(validate.server_args(args.server_arg)),
        train_python=args.train_python,
        name=validate.name(args.name),
        resume=args.resume,
    )


def _train(args: argparse.Namespace) -> int:
    from specadvisor.app import train as use_case
    from specadvisor.app.sessions import open_store
    from specadvisor.cli.output import print_json

    request = _request(args)
    judge = _judge_args(args)
    with open_store(args.db) as store:
        plan = use_case.plan_training(request, store, progress=_say)
        for note in plan.notes:
            _say(f"plan: {note}")
        drafter = plan.job.drafter
        _say(
            f"training {drafter.id[:8]}: {len(plan.job.prompts)} prompts ({drafter.heldout_prompts} held out) from {drafter.settings.prompt_source}, {_budget(drafter)}; folder {drafter.work_dir}"
        )
        code = _run_training(plan, store)
        drafter = store.get_drafter(drafter.id)
        if code != 0:
            return code
        code = _after_training(store, plan, drafter, judge, sweep=not args.no_sweep)
        drafter = store.get_drafter(drafter.id)
        if args.json:
            print_json(drafter)
        return code


def _run_training(plan: TrainPlan, store: Store) -> int:
    import asyncio

    from specadvisor.app.train import training_runner
    from specadvisor.errors import SpecAdvisorError

    runner = training_runner(plan, store)
    line = _ProgressLine()

    async def consume() -> None:
        async for event in runner.run():
            line.show(event)

    try:
        asyncio.run(consume())
    except KeyboardInterrupt:
        line.done()
        print(
            f"specadvisor: training interrupted at step {runner.drafter.steps}; resume with: specadvisor train --resume {runner.drafter.id[:8]}",
            file=sys.stderr,
        )
        return 130
    except SpecAdvisorError:
        line.done()
        raise
    line.done()
    d = runner.drafter
    _say(f"trained {d.steps} steps in {d.train_seconds / 60:.1f} min (stopped by {d.stopped_by or 'budget'}); drafter folder {d.folder}")
    return 0


def _after_training(store: Store, plan: TrainPlan, drafter: TrainedDrafter, judge: SweepSettings, *, sweep: bool) -> int:
    """The held-out check, then (unless --no-sweep) the judging sweep over the N grid it suggests."""
    from specadvisor.app import train as use_case

    serving = use_case.serving_of(plan)
    code, grid = _heldout_check(store, serving, drafter)
    if code != 0:
        return code
    if not sweep:
        _say(f"judge it with: specadvisor drafters judge {drafter.id[:8]}")
        return 0
    return _run_judging(store, serving, store.get_drafter(drafter.id), grid, judge)


def _heldout_check(store: Store, serving: Serving, drafter: TrainedDrafter) -> tuple[int, list[int]]:
    """vLLM's acceptance per position on the prompts training never saw, stored with the drafter;
    (exit code, the N grid it suggests)."""
    from specadvisor.app import running
    from specadvisor.app import train as use_case
    from specadvisor.app.train import n_grid

    _say("held-out check: the drafter alone on prompts training never saw (vLLM's acceptance per position)")
    heldout = use_case.heldout_check(drafter, serving)
    running.drive(running.runner_for(heldout, store, running.RunOptions(parallel="1", note=_say)), lambda event: None)
    use_case.link_session(store, drafter.id, heldout.session, heldout=True)
    result = _drafter_result(heldout.session)
    if result is None:
        failed = next((r.error for r in heldout.session.results if r.error), None)
        _say(f"held-out check measured nothing: the drafter did not serve ({failed or 'see the session logs'}); session {heldout.session.id[:8]}")
        return 4, []
    grid, reason = n_grid([p.rate for p in sorted(result.per_position, key=lambda p: p.position)])
    _say(f"held-out acceptance length {result.mean_acceptance_length:.2f} at N={drafter.settings.ttt_steps + 1}; {reason}")
    return 0, grid


def _run_judging(store: Store, serving: Serving, drafter: TrainedDrafter, grid: list[int], judge: SweepSettings) -> int:
    from specadvisor.app import train as use_case
    from specadvisor.cli.sweep import execute

    prepared = use_case.judging_sweep(drafter, serving, grid, judge)
    _say(f"judging sweep: no speculation, n-gram and the drafter at N = {', '.join(map(str, grid))}")
    code = execute(store, prepared, json_out=False, parallel="1")
    drafter = use_case.link_session(store, drafter.id, prepared.session, heldout=False)
    for line in _drift_lines(store, drafter, prepared.session):
        _say(line)
    return code


def _judge_args(args: argparse.Namespace) -> SweepSettings:
    """The judging sweep's flags given, parsed and checked as `sweep`'s are (one validated SweepSettings)."""
    from specadvisor.cli import validate
    from specadvisor.cli.setting_flags import spelled
    from specadvisor.domain import SweepSettings

    given = {name: getattr(args, f"judge_{name}") for name, _, _ in JUDGING if getattr(args, f"judge_{name}", None) is not None}
    return SweepSettings.of(**{name: validate.setting_value(spelled(name, flag), given[name]) for name, flag, _ in JUDGING if name in given})


# ---------------------------------------------------------------------- drafters list / show / judge


def _list(args: argparse.Namespace) -> int:
    from specadvisor.app.sessions import open_store
    from specadvisor.cli.output import console, print_json

    with open_store(args.db) as store:
        drafters = store.list_drafters()
    if args.json:
        print_json([_row(d) for d in drafters])
        return 0
    out = console()
    if not drafters:
        out.print("no trained drafters yet: `specadvisor train --model M --prompts FILE --minutes 10`", markup=False)
        return 0
    for d in drafters:
        out.print(_one_line(d), markup=False, highlight=False)
    return 0


def _show(args: argparse.Namespace) -> int:
    from specadvisor.app.sessions import open_store
    from specadvisor.cli.output import console, print_json

    with open_store(args.db) as store:
        drafter = store.get_drafter(args.id)
        lines = _describe(store, drafter)
    if args.json:
        print_json(drafter)
        return 0
    out = console()
    for line in lines:
        out.print(line, markup=False, highlight=False)
    return 0


def _judge(args: argparse.Namespace) -> int:
    from specadvisor.app import train as use_case
    from specadvisor.app.sessions import open_store
    from specadvisor.app.train import n_grid
    from specadvisor.cli import validate
    from specadvisor.errors import InputError

    judge = _judge_args(args)
    with open_store(args.db) as store:
        drafter = store.get_drafter(args.id)
        if drafter.status != "complete" or not drafter.folder:
            raise InputError(
                f"trained drafter {drafter.id[:8]} is {drafter.status}, with no drafter folder yet",
                hint=f"finish it: specadvisor train --resume {drafter.id[:8]}",
            )
        serving = use_case.plan_judging(
            drafter,
            progress=_say,
            engine_cmd=tuple(validate.engine_cmd(args.engine_cmd)) if args.engine_cmd else None,
            server_args=tuple(validate.server_args(args.server_arg)),
        )
        result = _drafter_result(store.get_session(drafter.heldout_session_id)) if drafter.heldout_session_id else None
        if result is None:  # never measured (an interrupted held-out check): the drift reference and the N grid come first
            code, grid = _heldout_check(store, serving, drafter)
            if code != 0:
                return code
            drafter = store.get_drafter(drafter.id)
        else:
            grid, reason = n_grid([p.rate for p in sorted(result.per_position, key=lambda p: p.position)])
            _say(reason)
        return _run_judging(store, serving, drafter, grid, judge)


# ---------------------------------------------------------------------- rendering


class _ProgressLine:
    """One line, rewritten in place on a terminal (a line every 10 s otherwise): stage, step, loss,
    per-position accuracy, steps/s and what is left."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.last_print = 0.0
        self.open = False

    def show(self, event: TrainEvent) -> None:
        if event.kind == "error":  # the error itself ends the command with its one line
            self.done()
            return
        if not (event.kind == "step" or (event.kind == "stage" and event.step is not None)):
            self.done()
            if event.message:
                _say(_event_text(event))
            return
        text = _event_text(event)
        now = time.monotonic()
        if self.tty:
            sys.stderr.write("\r\x1b[2K" + text[:200])
            sys.stderr.flush()
            self.open = True
        elif now - self.last_print >= 10:
            _say(text)
            self.last_print = now

    def done(self) -> None:
        if self.open:
            sys.stderr.write("\n")
            sys.stderr.flush()
            self.open = False


def _event_text(event: TrainEvent) -> str:
    from specadvisor.textsafe import line

    if event.kind == "step":
        parts = [f"step {event.step}" + (f"/{event.total_steps}" if event.total_steps else "")]
        if event.loss is not None:
            parts.append(f"loss {event.loss:.3f}")
        if event.accuracy:
            parts.append("accuracy by position " + " ".join(f"{a:.2f}" for a in event.accuracy))
        if event.steps_per_s:
            parts.append(f"{event.steps_per_s:.2f} steps/s")
        if event.eta_s is not None:
            parts.append(f"{_clock(event.eta_s)} left")
        return line("train: " + ", ".join(parts), 240)
    if event.kind == "val":
        acc = " ".join(f"{a:.2f}" for a in event.accuracy)
        return line(f"train: validation ({event.message}): loss {event.loss or 0:.3f}, accuracy by position {acc}", 240)
    if event.kind == "stage" and event.step is not None:
        return line(f"{event.stage}: {event.message}", 240)
    return line(f"{event.stage or event.kind}: {event.message}", 400)


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}" if seconds >= 3600 else f"{seconds // 60}:{seconds % 60:02d}"


def _budget(drafter: TrainedDrafter) -> str:
    s = drafter.settings
    return f"{s.minutes:g} min" if s.minutes is not None else f"{s.steps} steps"


def _say(text: str) -> None:
    from specadvisor.textsafe import line

    print(f"specadvisor: {line(text, 600)}", file=sys.stderr, flush=True)


def _one_line(d: TrainedDrafter) -> str:
    from specadvisor.textsafe import line

    val = d.validation[-1].accuracy if d.validation else []
    acc = (" held-out accuracy " + " ".join(f"{a:.2f}" for a in val)) if val else ""
    return line(
        f"{d.id[:8]}  {d.status:<11}  {d.created_at:%Y-%m-%d %H:%M}  {d.target}  on {d.settings.prompt_source} x{d.train_prompts}  {d.steps} steps  {d.train_seconds / 60:.1f} min{acc}",
        300,
    )


def _row(d: TrainedDrafter) -> dict[str, Any]:
    return {
        "id": d.id,
        "status": d.status,
        "created_at": d.created_at,
        "target": d.target,
        "prompt_source": d.settings.prompt_source,
        "train_prompts": d.train_prompts,
        "steps": d.steps,
        "train_seconds": d.train_seconds,
        "folder": d.folder,
    }


def _drafter_result(session: Session) -> Any:
    """The trained drafter's arm result with the most positions measured (app.train_steps, shared with the TUI)."""
    from specadvisor.app.train_steps import drafter_result

    return drafter_result(session)


def _drift_lines(store: Store, drafter: TrainedDrafter, session: Session) -> list[str]:
    from specadvisor.app.train import drafter_drift

    if not drafter.heldout_session_id:
        return []
    heldout = _drafter_result(store.get_session(drafter.heldout_session_id))
    serving = _drafter_result(session)
    if heldout is None or serving is None:
        return []
    found = drafter_drift(heldout, serving, trained_on=drafter.settings.prompt_source, serving_on=session.settings.prompt_source)
    return [f"drift: {found.summary}"] if found else []


def _describe(store: Store, d: TrainedDrafter) -> list[str]:
    s = d.settings
    lines = [
        f"Trained drafter {d.id} ({d.status}{', stopped by ' + d.stopped_by if d.stopped_by else ''})",
        f"  target {d.target}, method {s.method}, folder {d.folder or '(not exported yet)'}",
        f"  data: {s.prompt_source}, {d.train_prompts} prompts regenerated by the target ({d.tokens} response tokens, {s.request_format}), "
        f"{d.heldout_prompts} held out; prompts sha256 {d.prompt_sha256[:16]}",
        f"  budget {_budget(d)}: {d.steps} steps over {d.epochs} epoch(s), {d.train_seconds / 60:.1f} min training, {d.wall_seconds / 60:.1f} min in all",
        f"  draft vocabulary {s.draft_vocab_size}, {s.ttt_steps} trained positions, {s.total_seq_len} tokens per batch, seed {s.seed}",
        f"  trained on {d.device or 'unknown'} with " + ", ".join(f"{k} {v}" for k, v in sorted(d.versions.items())),
    ]
    if d.curve:
        first, last = d.curve[0], d.curve[-1]
        lines.append(f"  loss {first.loss or 0:.3f} at step {first.step} -> {last.loss or 0:.3f} at step {last.step}")
    for v in d.validation[-3:]:
        lines.append(
            f"  validation after epoch {v.epoch + 1} (step {v.step}): loss {v.loss or 0:.3f}, accuracy by position " + " ".join(f"{a:.2f}" for a in v.accuracy)
        )
    if d.heldout_session_id:
        held = _drafter_result(store.get_session(d.heldout_session_id))
        if held is not None:
            rates = " ".join(f"{p.rate:.2f}" for p in sorted(held.per_position, key=lambda p: p.position))
            lines.append(
                f"  vLLM on held-out prompts (session {d.heldout_session_id[:8]}): acceptance length {held.mean_acceptance_length:.2f}, per position {rates}"
            )
    for sid in d.judge_session_ids:
        session = store.get_session(sid)
        verdict = session.recommendation.verdict if session.recommendation else "no verdict"
        lines.append(f"  judged in session {sid[:8]} ({session.settings.prompt_source}, concurrency {session.settings.concurrency}): {verdict}")
        lines += [f"    {x}" for x in _drift_lines(store, d, session)]
    if d.error:
        lines.append(f"  error: {d.error}")
    if d.status in ("interrupted", "failed"):
        lines.append(f"  resume with: specadvisor train --resume {d.id[:8]}")
    return lines
