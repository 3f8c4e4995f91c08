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
    p.description = (
        "Import `vllm bench serve --save-result` JSON files measured elsewhere as the arms of a session (a new one, or "
        "--session's), judged by the same verdict as a sweep. Read from each file: the model (model_id), prompt count, "
        "--max-concurrency, output tokens per request and how prompts were sent (--backend). Not in the files, so shown "
        "as 'not recorded': the prompt set, temperature, seed and workload. A file with spec_decode_* counts needs the "
        "--spec-config it was served with; a file of another model, or files of different output lengths, are refused. "
        "The same files imported again add nothing. Prints the session id."
    )
    p.add_argument("files", nargs="+", type=Path, help="result files written by vllm bench serve --save-result")
    target = p.add_mutually_exclusive_group()
    target.add_argument("--session", default=None, help="add the arms to this session")
    target.add_argument("--model", default=None, help="the model the files measured (default: their model_id); a file naming another is refused")
    p.add_argument("--spec-config", default=None, help="the --speculative-config JSON the spec-decode files were served with (required for them)")
    p.add_argument(
        "--concurrency", type=int, default=None, help="the --max-concurrency they ran at, for files that do not record it (default: each file's own)"
    )
    p.set_defaults(func=run_import_bench)


def register_export_plan(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Write a session's arms as the serve-params JSON that `vllm bench sweep serve --serve-params` reads (one object of "
        "`vllm serve` flags per arm, named by _benchmark_name: the baseline and each speculative config), and print the "
        "`vllm bench sweep serve` command that measures them the way the session did, on another machine or without "
        "specadvisor. The session's prompts (NAME.prompts.jsonl) and several concurrency levels (NAME.bench-params.json) "
        "are written beside FILE."
    )
    p.add_argument("session", help="session id or unique prefix")
    p.add_argument(
        "--serve-params",
        required=True,
        metavar="FILE",
        help="the serve-params JSON to write: a file, a folder ending in / (serve_params-ID.json inside it), or - (stdout; the command goes to stderr)",
    )
    p.add_argument(
        "--model", default=None, help="the model to serve, for an imported session (default: the placeholder MODEL; a bundle's model is never printed)"
    )
    p.add_argument("--drafter", default=None, help="drafter model for an imported session's drafter arms (a bundle's own drafter is never exported)")
    p.add_argument("--force", action="store_true", help="replace an existing FILE (never the sessions database)")
    p.set_defaults(func=run_export_plan)


def _session(args: argparse.Namespace, id_or_prefix: str) -> Session:
    from specadvisor.app.sessions import open_store

    with open_store(args.db) as store:
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
    from specadvisor.app.reports import report

    fmt = args.format or ("html" if args.output and args.output.lower().endswith((".html", ".htm")) else "md")
    session = _session(args, args.session)
    target = output_path(args, args.output, f"specadvisor-{session.id[:8]}.{fmt}")  # checked before the report is built
    text = report(session, "html" if fmt == "html" else "md")
    if target is not None:
        write_atomically(target, text, force=args.force)
        print(f"wrote {target}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def run_snippet(args: argparse.Namespace) -> int:
    from specadvisor.app.reports import snippet, undecided_exit
    from specadvisor.vllm_command import PASTE_WIDTH, spec_config_json

    found = snippet(_session(args, args.session), model=_model_flag(args.model))
    step = found.step
    if step is not None:  # not "do not speculate": nothing to serve yet, and what would decide it (stdout stays empty)
        print(line(f"specadvisor: undecided, nothing to serve yet: {found.recommendation.headline}", 2000), file=sys.stderr)
        print(line(f"to decide it: {step.command} ({step.note})" if step.command else f"to decide it: {step.note}", 2000), file=sys.stderr)
        return undecided_exit()
    if found.config is None:
        print(line(found.why_not), file=sys.stderr)
        if args.command:
            _placeholder_note(found.placeholder_note)
            print(found.command(width=PASTE_WIDTH))
        return 1
    if args.command:
        _placeholder_note(found.placeholder_note)
        print(found.command(width=PASTE_WIDTH))  # the shell renderer escapes a bundle's U+2028 or RLM
    else:
        print(spec_config_json(found.config))
    return 0


def run_import_bench(args: argparse.Namespace) -> int:
    from specadvisor.app.reports import import_bench
    from specadvisor.cli import validate

    if args.concurrency is not None:
        validate.setting("concurrency", args.concurrency)
    model = _model_flag(args.model) if args.model is not None else None
    imported = import_bench(args.db, args.files, session_id=args.session, model=model, spec_config=_spec_config(args.spec_config), concurrency=args.concurrency)
    for note in imported.notes:
        print(line(f"specadvisor: note: {note}", 2000), file=sys.stderr)
    print(imported.session.id)
    return 0


def run_export_plan(args: argparse.Namespace) -> int:
    from specadvisor.app.reports import serve_params
    from specadvisor.vllm_command import PASTE_WIDTH

    session = _session(args, args.session)
    model = _model_flag(args.model)
    target = output_path(args, args.serve_params, f"serve_params-{session.id[:8]}.json")
    params = serve_params(session, drafter=args.drafter, model=model)
    for note in params.notes:
        print(f"specadvisor: note: {note}", file=sys.stderr)
    _placeholder_note(_note_for(session, model))
    if target is None:  # stdout holds the JSON alone, for a pipe; the command says where to save it
        sys.stdout.write(params.document)
        command = params.command(f"serve_params-{session.id[:8]}.json", width=PASTE_WIDTH)
        print(f"specadvisor: note: save it as serve_params-{session.id[:8]}.json, then run:\n{command}", file=sys.stderr)
        if params.prompts is not None or params.bench_params is not None:
            print("specadvisor: note: the prompts (and the concurrency levels) are written beside a file: pass --serve-params FILE", file=sys.stderr)
        return 0
    companions = {path: output_path(args, str(path), path.name) or path for path in params.companions(target)}  # the -o rule for each, checked first
    write_atomically(target, params.document, force=args.force)
    for path, text in params.companions(target).items():
        write_atomically(companions[path], text, force=args.force)
    print(params.command(str(target), width=PASTE_WIDTH))
    return 0


def _model_flag(model: str | None) -> str | None:
    """`--model` as given (your own input), refused when it would read as a flag."""
    if model is not None and (not model.strip() or model.startswith("-")):
        raise InputError(f"--model {line(model, 40)!r} is not a model name", hint="pass --model MODEL, e.g. --model Qwen/Qwen3-8B")
    return model


def _note_for(session: Session, model: str | None) -> str | None:
    from specadvisor.app.reports import placeholder_note

    return placeholder_note(session, model)


def _placeholder_note(note: str | None) -> None:
    """Say what MODEL stands for where a command printed for an imported session names it."""
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
