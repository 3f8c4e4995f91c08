"""`specadvisor sessions`: list, show, delete, export, import and compare stored sessions.

Arguments are parsing and rendering only; the use cases are `specadvisor.app.sessions`'.
Every string shown comes from a database or a bundle someone else may have written, so it is
escaped before rich renders it.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from specadvisor.errors import InputError

if TYPE_CHECKING:
    from specadvisor.app.sessions import Comparison, SessionSummary, Store
    from specadvisor.app.views import Speedup
    from specadvisor.domain import Session


def register(parser: argparse.ArgumentParser) -> None:
    parser.description = "Manage measured sessions. IDs may be given as unique prefixes. Without an ACTION: this help."
    sub = parser.add_subparsers(dest="sessions_command", metavar="ACTION")

    p = sub.add_parser("list", help="stored sessions, newest first")
    _json_flag(p)
    p.set_defaults(func=run_list)

    p = sub.add_parser("show", help="one session: arms, results, recommendation, provenance")
    p.add_argument("id", help="session id or unique prefix")
    p.add_argument(
        "--recompute",
        action="store_true",
        help="re-derive the verdict from the stored measurements with this version's decision rule (runs nothing, changes nothing stored)",
    )
    _json_flag(p)
    p.set_defaults(func=run_show)

    p = sub.add_parser("delete", help="delete a session (asks first unless --yes)")
    p.add_argument("id", help="session id or unique prefix")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    _json_flag(p)
    p.set_defaults(func=run_delete)

    p = sub.add_parser("export", help="write a session to a versioned JSON bundle (secrets redacted)")
    p.add_argument("id", help="session id or unique prefix")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="bundle file to write, a folder ending in /, or - (stdout)")
    p.add_argument("--redact-paths", action="store_true", help="also replace home-directory paths with ~")
    p.add_argument("--force", action="store_true", help="replace an existing FILE (never the sessions database)")
    _json_flag(p)
    p.set_defaults(func=run_export)

    p = sub.add_parser("import", help="add a session from a bundle (validated before anything is written)")
    p.add_argument("file", type=Path, help="bundle written by `sessions export`")
    _json_flag(p)
    p.set_defaults(func=run_import)

    p = sub.add_parser("compare", help="put two or more sessions side by side")
    p.add_argument("ids", nargs="+", metavar="ID", help="two or more session ids or unique prefixes")
    _json_flag(p)
    p.set_defaults(func=run_compare)


def _json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def _open(args: argparse.Namespace) -> Store:
    from specadvisor.app.sessions import open_store

    return open_store(args.db)


# ---------------------------------------------------------------------------- commands


def run_list(args: argparse.Namespace) -> int:
    from specadvisor.app.sessions import summaries as stored

    summaries = stored(args.db)
    if args.json:
        from specadvisor.cli.output import print_json

        print_json(summaries)
    elif sys.stdout.isatty():
        render_list(summaries)
    else:
        print_rows(summaries)
    return 0


def run_show(args: argparse.Namespace) -> int:
    from specadvisor import request_format
    from specadvisor.app.sessions import show
    from specadvisor.app.views import session_tails, stop_line
    from specadvisor.cli.output import print_json

    with _open(args) as store:
        shown = show(store, args.id, recompute=getattr(args, "recompute", False))
    session, stored = shown.session, shown.stored
    if args.json:
        from specadvisor.app.views import all_speedups

        # the session's fields as models: print_json encodes them in one pass (no Python copy of 100,000 arms)
        document = {name: getattr(session, name) for name in type(session).model_fields}
        # each arm's speedup and interval as the verdict computes them: the same figures the tables show
        document["speedups"] = {
            arm_id: {"speedup": figure.value, "speedup_ci": list(figure.ci) if figure.ci else None, "baseline": figure.reference} if figure else None
            for arm_id, figure in all_speedups(session).items()
        }
        document["request_format"] = request_format.recorded(session.settings.request_format, session.settings.prompt_source)
        document["stopped"] = stop_line(session)
        document["tail_requests"] = {arm_id: tail.text() for arm_id, tail in session_tails(session).items() if tail.tail}  # analysis.tails
        if getattr(args, "recompute", False):
            document["recomputed"] = True
            document["stored_verdict"] = stored.headline if stored is not None else None
        print_json(document)
        return 0
    render_session(session)
    if getattr(args, "recompute", False):
        from specadvisor.cli.output import console
        from specadvisor.textsafe import markup

        was = stored.headline if stored is not None else "none"
        console().print(f"(verdict recomputed from the stored measurements; stored verdict: {markup(was)})")
    return 0


def run_delete(args: argparse.Namespace) -> int:
    from specadvisor.app.sessions import delete, describe
    from specadvisor.cli.output import print_json

    with _open(args) as store:
        session_id, what = describe(store, args.id)
        if not args.yes:
            _confirm(f"Delete session {session_id} ({what})? [y/N] ")
        delete(store, session_id)
    if args.json:
        print_json({"deleted": session_id})
    else:
        print(f"deleted session {session_id}")
    return 0


def _confirm(question: str) -> None:
    if not sys.stdin.isatty():
        raise InputError("refusing to delete without confirmation: stdin is not a terminal", hint="pass --yes to delete non-interactively")
    try:
        answer = input(question)
    except EOFError:
        answer = ""
    if answer.strip().lower() not in ("y", "yes"):
        raise InputError("deletion cancelled", hint="answer y to delete, or pass --yes")


def run_export(args: argparse.Namespace) -> int:
    from specadvisor.app.sessions import bundle_bytes, export
    from specadvisor.cli.output import print_json
    from specadvisor.cli.report import output_path

    if args.output == "-" and args.json:
        raise InputError("-o - writes the bundle to stdout, where --json would write too", hint="drop --json, or give -o FILE")
    output_path(args, args.output, "bundle.json")  # a refusal before the database is opened
    with _open(args) as store:
        session = store.get_session(args.id)
    target = output_path(args, args.output, f"specadvisor-{session.id[:8]}.json")
    if target is None:
        sys.stdout.buffer.write(bundle_bytes(session, redact_paths=args.redact_paths))
        sys.stdout.flush()
        return 0
    path = export(session, target, redact_paths=args.redact_paths, force=args.force)
    if args.json:
        print_json({"exported": session.id, "path": str(path), "redact_paths": args.redact_paths})
    else:
        print(f"exported session {session.id} to {path}")
    return 0


def run_import(args: argparse.Namespace) -> int:
    from specadvisor import textsafe
    from specadvisor.app.sessions import import_into
    from specadvisor.cli.output import print_json

    session, created = import_into(None, args.file, db=args.db)  # validated before the database is even opened
    if args.json:
        print_json({"session_id": session.id, "created": created, "origin": session.provenance.origin})
    elif created:
        print(f"imported session {session.id} from {textsafe.line(args.file.name)} (read-only evidence: it can be shown, compared and reported, never resumed)")
    else:
        print(f"session {session.id} is already in the database; nothing imported")
    return 0


def run_compare(args: argparse.Namespace) -> int:
    from specadvisor.app.sessions import compare
    from specadvisor.cli.output import print_json

    if len(args.ids) < 2:  # before the database is opened
        raise InputError("compare needs at least two sessions", hint="e.g. specadvisor sessions compare 1a2b 3c4d")
    with _open(args) as store:
        comparison = compare(store, args.ids)
    if args.json:
        print_json(comparison)
        return 0
    render_comparison(comparison)
    return 0


# ---------------------------------------------------------------------------- rendering


def _fmt(value: float | None, spec: str = ".1f", suffix: str = "") -> str:
    """A figure for a table cell: "-" when missing or not finite, and never 300 digits wide."""
    if value is None or not math.isfinite(value):
        return "-"
    return f"{value:.4g}{suffix}" if abs(value) >= 1e9 else f"{value:{spec}}{suffix}"


def plain_table(columns: list[str], rows: list[list[str]], max_cell: int = 80) -> list[str]:
    """Aligned text lines, every cell one safe terminal line: linear in the rows, where a rich Table
    measured and wrapped each cell (47 s for `sessions show` of a 10,000-arm bundle)."""
    from specadvisor.textsafe import UNSAFE_CHARACTERS, line

    if UNSAFE_CHARACTERS.search("".join(cell for row in rows for cell in row)) or any(len(cell) > max_cell for row in rows for cell in row):
        cells = [[line(cell, max_cell) for cell in row] for row in rows]
    else:
        cells = rows  # already safe lines (one search over the table, not one per cell of 100,000 rows)
    widths = [len(col) for col in columns]
    for row in cells:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    head = "  ".join(col.ljust(w) for col, w in zip(columns, widths, strict=True)).rstrip()
    rule = "  ".join("-" * w for w in widths)
    return [head, rule, *("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells)]


def _speedup_text(speedup: Speedup | None) -> str:
    return speedup.text() if speedup is not None else "-"


LIST_COLUMNS = ("id", "created", "status", "model", "hardware", "vLLM", "workload", "format", "arms", "best", "speedup")
NO_SESSIONS = "No sessions yet. Run `specadvisor sweep` or import a bundle with `specadvisor sessions import FILE`."


def list_rows(summaries: list[SessionSummary]) -> list[list[str]]:
    """One row of plain text per session (control characters made visible: a row is one line)."""
    from specadvisor.textsafe import line

    rows = []
    for s in summaries:
        status = s.status if s.origin == "local" else f"{s.status} ({s.origin})"
        cells = [s.id[:8], s.created_at.strftime("%Y-%m-%d %H:%M"), status, s.model or "-", s.gpu or "-", s.vllm_version or "?"]
        cells += [s.workload or "-", s.request_format or "-"]
        cells += [str(s.arms), s.best_arm or "-", _fmt(s.best_speedup, ".2f", "x")]
        rows.append([line(cell) for cell in cells])
    return rows


def print_rows(summaries: list[SessionSummary]) -> None:
    """Piped output, as `docker ps` and `gh` print it: a header, then one line per session, columns
    padded with spaces, nothing wrapped or cut (`--json` is the format for scripts)."""
    if not summaries:
        print(NO_SESSIONS, file=sys.stderr)
        return
    rows = [list(LIST_COLUMNS), *list_rows(summaries)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(LIST_COLUMNS))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


def render_list(summaries: list[SessionSummary]) -> None:
    """On a terminal: a table, one line per session; long models and GPUs are cut to fit (`…`)."""
    from rich.table import Table

    from specadvisor.cli.output import console
    from specadvisor.textsafe import markup as escape

    out = console()
    if not summaries:
        out.print(escape(NO_SESSIONS))
        return
    table = Table(box=None, pad_edge=False, padding=(0, 2, 0, 0), header_style="bold")
    for column in LIST_COLUMNS:
        table.add_column(column, no_wrap=True, overflow="ellipsis", min_width=8 if column in ("model", "hardware") else None)
    for row in list_rows(summaries):
        table.add_row(*(escape(cell) for cell in row))
    out.print(table)


def render_session(session: Session) -> None:

    from specadvisor import request_format
    from specadvisor.app.reports import placeholder_note
    from specadvisor.app.views import all_speedups, deciding_step, provenance_facts, recommended_command, recorded, shown_reasons, tabled_arms, tail_lines
    from specadvisor.cli.output import console
    from specadvisor.textsafe import markup
    from specadvisor.textsafe import markup as escape
    from specadvisor.vllm_command import PASTE_WIDTH

    out = console()
    out.print(f"[bold]Session {escape(session.id)}[/bold] {escape(session.name)}")
    out.print(f"  status {escape(session.status)}, created {session.created_at:%Y-%m-%d %H:%M} UTC")
    out.print(f"  model {escape(session.model or '-')}, drafter {escape(session.drafter or '-')}")
    out.print(
        f"  workload {escape(recorded(session, 'workload', session.workload.value))}, "
        f"temperature {recorded(session, 'temperature', f'{session.temperature:g}')}, concurrency {session.concurrency}, "
        f"prompts {escape(recorded(session, 'prompt_source', session.settings.prompt_source))} x{session.settings.num_prompts}, "
        f"output {recorded(session, 'output_len', str(session.settings.output_len))} tokens",
        soft_wrap=True,
    )
    shown_format = recorded(session, "request_format", request_format.recorded(session.settings.request_format, session.settings.prompt_source))
    out.print(f"  request format {escape(shown_format)}", soft_wrap=True)
    out.print(f"  hardware {escape(session.hardware.gpu_label)} ({escape(session.hardware_fingerprint or '-')}), vLLM {escape(session.vllm_version or '?')}")
    for key, value in provenance_facts(session):
        out.print(f"  {escape(key)}: {escape(value)}", soft_wrap=True)
    rows = []
    speedups = all_speedups(session)  # the verdict's own figures
    tabled, left_out = tabled_arms(session)
    for arm in tabled:
        result = session.result_for(arm.id)
        if result is None:
            rows.append([arm.label, "not run", "-", "-", "-", "-", ""])
            continue
        rows.append(
            [
                arm.label,
                result.status.value,
                _fmt(result.output_throughput),
                _speedup_text(speedups.get(arm.id)),
                _fmt(result.mean_acceptance_length, ".2f"),
                _fmt(None if result.acceptance_rate is None else result.acceptance_rate * 100, ".0f", "%"),
                " ".join(f"{p.accepted}/{p.drafts}" for p in result.per_position),
            ]
        )
    columns = ["arm", "status", "tok/s", "speedup", "mean AL", "accept", "accepted/drafts per position"]
    out.file.write("\n".join(plain_table(columns, rows)) + "\n")  # plain lines: rich would measure and wrap each
    if left_out:
        out.print(escape(left_out), soft_wrap=True)
    for label, text in tail_lines(session, tabled):
        out.print(f"  tail requests, {escape(label)}: {escape(text)}", soft_wrap=True)
    rec = session.recommendation
    if rec is not None:
        speed = f" ({_fmt(rec.speedup, '.2f', 'x')})" if rec.arm_id and rec.speedup else ""
        out.print(f"[bold]Verdict:[/bold] {escape(rec.headline)}{speed}", soft_wrap=True)
        for pick in rec.per_concurrency if len(rec.per_concurrency) > 1 else []:
            if (pick.verdict or pick.summary) not in rec.headline:  # the headline already names each level's answer
                out.print(f"  at concurrency {pick.concurrency}: {escape(pick.verdict or pick.summary)}", soft_wrap=True)
        reasons, more = shown_reasons(session, rec)  # as the TUI's panel: --json has them all
        for reason in reasons:
            out.print(f"  - {escape(reason)}")
        if more:
            out.print(f"  {escape(more)}", soft_wrap=True)
        # broken before each option with ` \` (as advise and snippet --command print it): a terminal's own wrap pastes badly
        command = recommended_command(session, rec, width=PASTE_WIDTH) if rec.speculative_config else None
        if command:
            lines = command.split(" \\\n")  # each printed on its own: markup() would escape the newline
            for number, part in enumerate(lines):
                tail = " \\" if number < len(lines) - 1 else ""
                out.print(f"  serve with: {markup(part)}{tail}" if number == 0 else f"  {markup(part)}{tail}", soft_wrap=True)
            note = placeholder_note(session)
            if note:
                out.print(f"  ({markup(note)})", soft_wrap=True)
        step = deciding_step(session, rec)  # undecided: nothing to serve yet, and what would decide it
        if step is not None:
            out.print(f"  to decide it: {markup(step.command + ' (' + step.note + ')' if step.command else step.note)}", soft_wrap=True)
    if session.notes:
        out.print(f"Notes: {markup(session.notes)}", soft_wrap=True)  # one line: a bundle's newlines cannot forge output
    prov = session.provenance
    if prov.origin == "imported":
        out.print(f"Imported from {escape(prov.imported_from or '?')} (sha256 {escape((prov.bundle_sha256 or '')[:12])}) at {prov.imported_at}")
        out.print("  read-only evidence: shown, compared and reported, never resumed; commands above are rebuilt for this machine")


def render_comparison(comparison: Comparison) -> None:
    from rich.table import Table

    from specadvisor.app.views import row_cap
    from specadvisor.cli.output import console
    from specadvisor.textsafe import markup as escape

    out = console()
    heads = [c.short_id for c in comparison.sessions]
    summary = Table(show_edge=False, pad_edge=False)
    summary.add_column("")
    for head in heads:
        summary.add_column(head)
    rows = [
        ("model", [c.model or "-" for c in comparison.sessions]),
        ("hardware", [c.gpu for c in comparison.sessions]),
        ("vLLM", [c.vllm_version or "?" for c in comparison.sessions]),
        ("workload", [f"{c.workload}, sent as {c.request_format}" for c in comparison.sessions]),
        ("measured on", [c.measured_on for c in comparison.sessions]),
        ("GPU driver", [f"{c.gpu_driver} ({c.gpu_runtime})" for c in comparison.sessions]),
        ("CPU", [c.cpu for c in comparison.sessions]),
        ("OS", [c.os for c in comparison.sessions]),
        ("Python", [c.python for c in comparison.sessions]),
        ("vLLM build", [c.engine_build for c in comparison.sessions]),
        ("prompt content sha256 (as sent)", [c.prompt_sha256 for c in comparison.sessions]),
        ("started", [c.started_at for c in comparison.sessions]),
        ("best config", [c.best_arm or "-" for c in comparison.sessions]),
        ("best tok/s", [_fmt(c.best_throughput) for c in comparison.sessions]),
        ("best speedup", [_fmt(c.best_speedup, ".2f", "x") for c in comparison.sessions]),
    ]
    for title, values in rows:
        summary.add_row(title, *(escape(v) for v in values))
    out.print(summary)
    listed = comparison.arms
    if len(listed) > row_cap():  # over the report's row cap: rows with nothing measured say nothing
        listed = [row for row in listed if any(cell.status is not None for cell in row.cells)]
    arm_rows = [
        [
            row.label,
            *(
                "-" if cell.status is None else f"{_fmt(cell.output_throughput)} {cell.speedup_text()} AL {_fmt(cell.mean_acceptance_length, '.2f')}"
                for cell in row.cells
            ),
        ]
        for row in listed
    ]
    out.print("per arm: tok/s, speedup [the verdict's interval], mean acceptance length", markup=False, highlight=False)
    out.file.write("\n".join(plain_table(["arm", *heads], arm_rows)) + "\n")  # plain lines: rich would measure and wrap each
    if len(listed) < len(comparison.arms):
        ids = " ".join(c.short_id for c in comparison.sessions)
        out.print(
            f"{len(comparison.arms) - len(listed)} of {len(comparison.arms)} arms, measured in none of the sessions, are not listed; "
            f"`specadvisor sessions compare {escape(ids)} --json` lists every arm.",
            soft_wrap=True,
        )
    for note in comparison.differences:
        out.print(f"[yellow]note:[/yellow] {escape(note)}")
