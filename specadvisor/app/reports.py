"""Use cases that take a stored session away: its report (Markdown or self-contained HTML), the
snippet to serve the recommendation, its arms as `vllm bench sweep serve` serve-params, and
`vllm bench serve` results brought in as arms. The CLI's `report`, `snippet`, `export-plan` and
`import-bench` and the TUI's Results and Advice screens ask here."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from specadvisor.errors import InputError

if TYPE_CHECKING:
    from specadvisor.domain import Recommendation, Session
    from specadvisor.report.snippet import DecidingStep


def report(session: Session, fmt: Literal["md", "html"] = "md") -> str:
    """The session's report: Markdown, or one HTML file with its charts inline."""
    from specadvisor.report import html, markdown

    return html(session) if fmt == "html" else markdown(session)


@dataclass
class Snippet:
    """What serving the recommendation takes: its config (None: do not speculate, or undecided),
    the step that would decide an undecided verdict, and the model a command names (`--model` for an
    imported session; else the placeholder MODEL)."""

    session: Session
    recommendation: Recommendation
    config: dict[str, Any] | None
    step: DecidingStep | None  # the verdict is undecided: nothing to serve yet, this would decide it
    model: str | None = None

    @property
    def why_not(self) -> str:
        """One line saying why there is no config to serve."""
        rec = self.recommendation
        return rec.headline + (f": {rec.reasons[0]}" if rec.reasons and not rec.verdict.startswith("undecided") else "")

    def command(self, *, width: int | None = None) -> str:
        """The full `vllm serve` line (without speculation when there is no config)."""
        from specadvisor.report.snippet import serve_command

        return serve_command(self.session, self.config, width=width, model=self.model)

    @property
    def placeholder_note(self) -> str | None:
        return placeholder_note(self.session, self.model)


def snippet(session: Session, *, model: str | None = None) -> Snippet:
    """The recommendation's config as it may be run here (an imported session's only as the
    allow-list lets it cross; InputError when it cannot be re-derived); for an undecided verdict,
    the step that would decide it instead."""
    from specadvisor.app.sessions import recommendation
    from specadvisor.report.snippet import deciding_step, recommended_config

    rec = recommendation(session)
    assert rec is not None  # a stored session always has a verdict to compute
    step = deciding_step(session, rec)
    if step is not None or rec.do_not_speculate or not rec.speculative_config:
        return Snippet(session, rec, None, step, model)
    config = recommended_config(session, rec, model=model)
    if config is None:
        raise InputError(
            f"the recommended config of imported session {session.id[:8]} cannot be re-derived here (unknown method or no drafter for it)",
            hint="export a plan with `specadvisor export-plan ID --model MODEL --drafter DRAFTER`, "
            "or rebuild it: `specadvisor sweep --resume ID --rebuild --model MODEL --drafter DRAFTER`",
        )
    return Snippet(session, rec, config, None, model)


def undecided_exit() -> int:
    """`snippet`'s exit code while the verdict is undecided (report.snippet.UNDECIDED_EXIT)."""
    from specadvisor.report.snippet import UNDECIDED_EXIT

    return UNDECIDED_EXIT


def placeholder_note(session: Session, model: str | None = None) -> str | None:
    """What MODEL stands for, where a command printed for an imported session names it (None elsewhere)."""
    from specadvisor.trust import placeholder_note as note

    return note(session, model)


@dataclass
class ServeParams:
    """A session's arms as serve-params JSON, the measurement as `vllm bench serve` takes it (the
    prompts as a custom dataset, the concurrency levels as bench-params), and the command that runs them."""

    session: Session
    document: str
    notes: list[str] = field(default_factory=list)
    model: str | None = None
    prompts: str | None = None  # the session's prompts as JSONL (None: not available here)
    bench_params: str | None = None  # one entry per concurrency level, when there are several

    def companions(self, params_file: Path) -> dict[Path, str]:
        """The files written beside the serve-params: the prompts and, for several levels, the bench-params."""
        stem = params_file.name.removesuffix(".json")
        files = {}
        if self.prompts is not None:
            files[params_file.with_name(f"{stem}.prompts.jsonl")] = self.prompts
        if self.bench_params is not None:
            files[params_file.with_name(f"{stem}.bench-params.json")] = self.bench_params
        return files

    def command(self, params_file: str, *, width: int | None = None) -> str:
        """`vllm bench sweep serve` with these serve-params from `params_file` and its companions beside it."""
        from specadvisor.report.serve_params import bench_sweep_command

        stem = params_file.removesuffix(".json")
        prompts = f"{stem}.prompts.jsonl" if self.prompts is not None else "YOUR_PROMPTS.jsonl"
        return bench_sweep_command(
            self.session, params_file, prompts_file=prompts, bench_params_file=f"{stem}.bench-params.json", width=width, model=self.model
        )


def serve_params(session: Session, *, drafter: str | None = None, model: str | None = None) -> ServeParams:
    """The arms as `vllm bench sweep serve --serve-params` JSON (an imported session's drafter arms
    with `drafter`, its model never printed: `model` or the placeholder)."""
    from specadvisor.report.serve_params import bench_workload
    from specadvisor.report.serve_params import serve_params as params

    notes: list[str] = []
    document = json.dumps(params(session, drafter=drafter, notes=notes, model=model), indent=2) + "\n"
    workload = bench_workload(session)
    prompts = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in workload.prompts) if workload.prompts is not None else None
    several = json.dumps(workload.bench_params(), indent=2) + "\n" if len(workload.levels) > 1 else None
    return ServeParams(session, document, [*notes, *workload.notes], model, prompts, several)


@dataclass
class BenchImported:
    """The session `import-bench` made or added to; `added` False: the same files were imported before."""

    session: Session
    added: bool
    notes: list[str] = field(default_factory=list)


def import_bench(
    db: Path | None, files: list[Path], *, session_id: str | None, model: str | None, spec_config: dict[str, Any] | None, concurrency: int | None
) -> BenchImported:
    """`vllm bench serve --save-result` files as arms: added to a stored session, or a new one for the
    model they measured (`model`, else the files' model_id). Every file is validated before anything is
    written; what the files record (model, prompt count, concurrency, output length, request format) is
    read from them and what they do not (prompt set, temperature, seed, workload) stays "not recorded";
    the verdict is computed once. The same files imported again add nothing."""
    from specadvisor.analysis.recommend import recommend
    from specadvisor.app.sessions import open_store
    from specadvisor.domain import Session, SweepSettings
    from specadvisor.provenance import record_provenance
    from specadvisor.report.bench_import import NOT_RECORDED_PROMPTS, plan_import, read_bench_files

    read = read_bench_files(list(files))  # before the database is opened: bad input writes nothing
    if session_id is None:
        found = plan_import(read, model=model, spec_config=spec_config, concurrency=concurrency)  # checked before the database opens too
    with open_store(db) as store:
        if session_id:
            session = store.get_session(session_id)
            found = plan_import(read, model=model, spec_config=spec_config, concurrency=concurrency, into=session)
            levels = sorted(set(session.settings.concurrency) | set(found.levels))
            session.settings = session.settings.replace(concurrency=levels)
        else:
            existing = store.find_by_bundle(found.digest)
            if existing is not None:
                return BenchImported(existing, False, [f"these files were imported before, as session {existing.id[:8]}: nothing added"])
            settings = SweepSettings.of(
                prompt_source=NOT_RECORDED_PROMPTS,
                request_format=found.request_format,
                concurrency=found.levels,
                **({"num_prompts": found.num_prompts} if found.num_prompts else {}),
                **({"output_len": found.output_len} if found.output_len else {}),
            )
            session = Session(model=found.model, settings=settings, concurrency=found.levels[0], status="finished")
            session.provenance.unrecorded = list(found.unrecorded)  # type: ignore[arg-type]  # names checked by the model
            session.provenance.bundle_sha256 = found.digest
        session.arms.extend(found.arms)
        session.results.extend(found.results)
        record_provenance(session, entry_point="import-bench")
        session.recommendation = recommend(session)
        store.save_session(session)
    return BenchImported(session, True, found.notes)
