"""`specadvisor report | snippet | import-bench | export-plan`: outputs drawn from a stored session."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specadvisor.errors import InputError
from specadvisor.fileio import write_atomic
from specadvisor.textsafe import line

if TYPE_CHECKING:
    from specadvisor.domain import Session
    from specadvisor.store import Store


def register_report(p: argparse.ArgumentParser) -> None:
    p.add_argument("session", help="session id or unique prefix")
    p.add_argument("--format", choices=("md", "html"), default=None, help="default: from -o's extension, else md")
    p.add_argument("-o", "--output", default=None, help="file to write, a folder ending in / (the default name inside it), or - (stdout, the default)")
    p.add_argument("--force", action="store_true", help="replace an existing -o file (never the sessions database)")
    p.set_defaults(func=run_report)


def register_snippet(p: argparse.ArgumentParser) -> None:
    p.add_argument("session", help="session id or unique prefix")
    p.description = (
        "Print the recommended --speculative-config (exit 0). Exit 1 when the advice is not to speculate (with --command, "
        "the plain serve command); exit 5 while the verdict is undecided: nothing is printed on stdout, and stderr names "
        "the step that would decide it and the command that measures it (`sweep --resume ID --budget MIN`)."
    )
    p.add_argument("--command", action="store_true", help="print the full `vllm serve` command instead")
    p.add_argument("--model", default=None, help="the model the command serves, for an imported session (default: the placeholder MODEL)")
    p.set_defaults(func=run_snippet)


def register_import_bench(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", type=Path)
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--session", default=None, help="add the arms to this session")
    target.add_argument("--model", default=None, help="create a new session for this model")
    p.add_argument("--spec-config", default=None, help="the speculative config the spec-decode files were measured with (JSON)")
    p.add_argument("--concurrency", type=int, default=1, help="the --max-concurrency they were measured at")
    p.set_defaults(func=run_import_bench)


def register_export_plan(p: argparse.ArgumentParser) -> None:
    p.add_argument("session", help="session id or unique prefix")
    p.add_argument("--serve-params", required=True, metavar="FILE", help="file to write, a folder ending in /, or - (stdout; the command goes to stderr)")
    p.add_argument(
        "--model", default=None, help="the model to serve, for an imported session (default: the placeholder MODEL; a bundle's model is never printed)"
    )
    p.add_argument("--drafter", default=None, help="drafter model for an imported session's drafter arms (a bundle's own drafter is never exported)")
    p.add_argument("--force", action="store_true", help="replace an existing FILE (never the sessions database)")
    p.set_defaults(func=run_export_plan)


def _open_store(args: argparse.Namespace) -> Store:
    from specadvisor.settings import paths
    from specadvisor.store import Store

    return Store.open(args.db or paths().database)


def _session(args: argparse.Namespace, id_or_prefix: str) -> Session:
    with _open_store(args) as store:
        return store.get_session(id_or_prefix)


def output_path(args: argparse.Namespace, raw: str | None, default_name: str) -> Path | None:
    """The one output rule (specadvisor.fileio.output_target): None for stdout, else the file to
    write; an existing file only with --force, and never the sessions database."""
    from specadvisor.fileio import output_target
    from specadvisor.settings import paths

    if raw is None:
        return None
    return output_target(raw, default_name=default_name, force=getattr(args, "force", False), protected=[args.db or paths().database])


def write_atomically(path: Path, text: str, *, force: bool = False) -> None:
    """A failed write never leaves half a report (see specadvisor.fileio)."""
    write_atomic(path, text, force=force)


def run_report(args: argparse.Namespace) -> int:
    from specadvisor.report import html, markdown

    fmt = args.format or ("html" if args.output and args.output.lower().endswith((".html", ".htm")) else "md")
    session = _session(args, args.session)
    target = output_path(args, args.output, f"specadvisor-{session.id[:8]}.{fmt}")  # checked before the report is built
    text = html(session) if fmt == "html" else markdown(session)
    if target is not None:
        write_atomically(target, text, force=args.force)
        print(f"wrote {target}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def run_snippet(args: argparse.Namespace) -> int:
    from specadvisor.analysis.recommend import recommend
    from specadvisor.report.snippet import UNDECIDED_EXIT, deciding_step, recommended_config, serve_command, spec_config_json
    from specadvisor.vllm_command import PASTE_WIDTH

    session = _session(args, args.session)
    model = _model_flag(args.model)
    rec = session.recommendation or recommend(session)
    step = deciding_step(session, rec)
    if step is not None:  # not "do not speculate": nothing to serve yet, and what would decide it (stdout stays empty)
        print(line(f"specadvisor: undecided, nothing to serve yet: {rec.headline}", 2000), file=sys.stderr)
        print(line(f"to decide it: {step.command} ({step.note})" if step.command else f"to decide it: {step.note}", 2000), file=sys.stderr)
        return UNDECIDED_EXIT
    if rec.do_not_speculate or not rec.speculative_config:
        print(line(rec.headline + (f": {rec.reasons[0]}" if rec.reasons and not rec.verdict.startswith("undecided") else "")), file=sys.stderr)
        if args.command:
            _placeholder_note(session, model)
            print(serve_command(session, None, width=PASTE_WIDTH, model=model))
        return 1
    config = recommended_config(session, rec, model=model)  # an imported session's only as the allow-list lets it cross
    if config is None:
        raise InputError(
            f"the recommended config of imported session {session.id[:8]} cannot be re-derived here (unknown method or no drafter for it)",
            hint="export a plan with `specadvisor export-plan ID --model MODEL --drafter DRAFTER`, "
            "or rebuild it: `specadvisor sweep --resume ID --rebuild --model MODEL --drafter DRAFTER`",
        )
    if args.command:
        _placeholder_note(session, model)
        print(serve_command(session, config, width=PASTE_WIDTH, model=model))  # the shell renderer escapes a bundle's U+2028 or RLM
    else:
        print(spec_config_json(config))
    return 0


def run_import_bench(args: argparse.Namespace) -> int:
    from specadvisor.analysis.recommend import recommend
    from specadvisor.cli import validate
    from specadvisor.domain import Session, SweepSettings
    from specadvisor.provenance import record_provenance
    from specadvisor.report.bench_import import bench_arm, import_bench_results

    validate.setting("concurrency", args.concurrency)
    spec_config = _spec_config(args.spec_config)
    results = import_bench_results(args.files)  # every file validated before anything is written
    with _open_store(args) as store:
        if args.session:
            session = store.get_session(args.session)
        else:
            session = Session(model=args.model, settings=SweepSettings(concurrency=[args.concurrency]), concurrency=args.concurrency, status="finished")
        taken = {a.id for a in session.arms}
        for result in results:
            while result.arm_id in taken:
                result.arm_id += "-2"
            arm = bench_arm(result, spec_config if result.num_drafts is not None else None, args.concurrency)
            session.arms.append(arm)
            session.results.append(result)
            taken.add(arm.id)
        record_provenance(session, entry_point="import-bench")
        session.recommendation = recommend(session)
        store.save_session(session)
    print(session.id)
    return 0


def run_export_plan(args: argparse.Namespace) -> int:
    from specadvisor.report.serve_params import bench_sweep_command, serve_params
    from specadvisor.vllm_command import PASTE_WIDTH

    session = _session(args, args.session)
    model = _model_flag(args.model)
    notes: list[str] = []
    target = output_path(args, args.serve_params, f"serve_params-{session.id[:8]}.json")
    params = serve_params(session, drafter=args.drafter, notes=notes, model=model)
    for note in notes:
        print(f"specadvisor: note: {note}", file=sys.stderr)
    document = json.dumps(params, indent=2) + "\n"
    _placeholder_note(session, model)
    if target is None:  # stdout holds the JSON alone, for a pipe; the command says where to save it
        sys.stdout.write(document)
        command = bench_sweep_command(session, f"serve_params-{session.id[:8]}.json", width=PASTE_WIDTH, model=model)
        print(f"specadvisor: note: save it as serve_params-{session.id[:8]}.json, then run:\n{command}", file=sys.stderr)
        return 0
    write_atomically(target, document, force=args.force)
    print(bench_sweep_command(session, str(target), width=PASTE_WIDTH, model=model))
    return 0


def _model_flag(model: str | None) -> str | None:
    """`--model` as given (your own input), refused when it would read as a flag."""
    if model is not None and (not model.strip() or model.startswith("-")):
        raise InputError(f"--model {line(model, 40)!r} is not a model name", hint="pass --model MODEL, e.g. --model Qwen/Qwen3-8B")
    return model


def _placeholder_note(session: Session, model: str | None) -> None:
    """Say what MODEL stands for where a command printed for an imported session names it."""
    from specadvisor.trust import placeholder_note

    note = placeholder_note(session, model)
    if note:
        print(f"specadvisor: note: {note}", file=sys.stderr)


def _spec_config(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"--spec-config is not valid JSON: {exc.msg}", hint='e.g. \'{"method":"ngram","num_speculative_tokens":4}\'') from exc
    if not isinstance(value, dict) or not value.get("method"):
        raise InputError("--spec-config must be a JSON object with a 'method'", hint='e.g. \'{"method":"ngram","num_speculative_tokens":4}\'')
    return value
