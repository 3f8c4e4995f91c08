"""`specadvisor advise`: ranked speculative-decoding candidates for a model, GPU and workload."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specadvisor.cli.workloads import WORKLOADS

if TYPE_CHECKING:
    from specadvisor.domain import Advice, Candidate, HardwareProfile, ModelProfile, Session
    from specadvisor.rulebase import RuleBase


def register(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Reads the rule base (shipped rules, your rules folder, --rules DIR) and results already "
        "measured on this machine. Always includes the no-speculation baseline and says when speculation is unlikely to pay."
    )
    parser.add_argument("--model", required=True, metavar="M", help="Hugging Face id, local folder or catalog name")
    parser.add_argument("--drafter", metavar="D", help="a drafter of your own (folder or id) to consider first")
    parser.add_argument("--workload", choices=WORKLOADS, default="chat", help="what the prompts are like (default: %(default)s)")
    parser.add_argument("--concurrency", type=int, default=1, metavar="N", help="requests served at once (default 1)")
    parser.add_argument("--gpu", metavar="NAME[xCOUNT]", help="plan for a GPU you do not have here, e.g. H100x8 or MI300X")
    parser.add_argument("--vllm-version", metavar="X.Y", help="vLLM version that will serve (default: the detected one, else the newest known)")
    parser.add_argument(
        "--output-len", type=int, default=None, metavar="L", help="typical output tokens per request (default: the workload's, e.g. 2048 for math)"
    )
    parser.add_argument(
        "--temperature", type=float, default=None, metavar="T", help="sampling temperature served (default: the model card's, else the workload's)"
    )
    parser.add_argument(
        "--tensor-parallel-size",
        type=int,
        default=None,
        metavar="N",
        help="GPUs per replica (default: chosen from the memory plan; required when the model's size is unknown)",
    )
    parser.add_argument(
        "--params-b", type=float, default=None, metavar="B", help="the model's parameter count in billions, when it cannot be read from config.json"
    )
    parser.add_argument("--train", action="store_true", help="you are willing to train a drafter")
    parser.add_argument("--rules", type=Path, action="append", default=[], metavar="DIR", help="extra rules folder (repeatable; overrides by id)")
    parser.add_argument("--offline", action="store_true", help="do not contact the Hugging Face Hub")
    parser.add_argument("--json", action="store_true", help="print the advice as JSON (candidates, baseline, warnings, commands)")
    parser.add_argument("--explain", action="store_true", help="print every rule checked and what it changed")
    parser.set_defaults(func=run)


def _positive(value: int | float, flag: str, minimum: float) -> None:
    from specadvisor.errors import InputError

    if value < minimum:
        raise InputError(f"{flag} must be >= {minimum:g}, got {value}", hint=f"pass a value of at least {minimum:g}")


def _model(ref: str, offline: bool) -> tuple[ModelProfile, list[str]]:
    """Inspect the model; an unknown private model still gets advice (lookup methods) with a warning."""
    from specadvisor.domain import ModelProfile
    from specadvisor.errors import InputError
    from specadvisor.modelinfo import inspect_model

    try:
        return inspect_model(ref, offline=True if offline else None), []
    except InputError as err:
        if not ref.strip():
            raise
        return ModelProfile(id=ref.strip(), source="unknown"), [f"Model not inspected ({err.message}): size and MTP heads unknown."]


def _discover(model: ModelProfile, rulebase: RuleBase, offline: bool) -> tuple[ModelProfile, str]:
    """Drafters on the Hub for a model with a known id that the catalog lacks ("discovered, unreviewed")."""
    if model.source in ("local", "unknown"):
        return model, ""
    from specadvisor.modelinfo.discover import discover_drafters
    from specadvisor.rulebase import drafters_for

    known = {d.drafter for d in drafters_for(model.id, rulebase)} | {d.drafter for d in model.drafters}
    found = discover_drafters(model, offline=True if offline else None, known=known)
    if not found.drafters:
        return model, found.note
    return model.model_copy(update={"drafters": [*model.drafters, *found.drafters]}), found.note


def _hardware(gpu: str | None) -> HardwareProfile:
    from specadvisor import hardware

    return hardware.hypothetical(gpu) if gpu else hardware.detect()


def _local_sessions(db: Path | None, model: ModelProfile, hw: HardwareProfile) -> list[Session]:
    """Sessions measured on this machine for this model and GPU (the TUI's answer too); none when
    there is no database yet (never create one)."""
    from specadvisor.app.evidence import sessions_measured_here

    return sessions_measured_here(db, model.id, hw)


def run(args: argparse.Namespace) -> int:
    from specadvisor.advisor import advise
    from specadvisor.cli import validate
    from specadvisor.domain import Workload, WorkloadKind
    from specadvisor.errors import InputError
    from specadvisor.rulebase import load_rulebase, parse_version

    _positive(args.concurrency, "--concurrency", 1)
    for flag, value, minimum in (
        ("--output-len", args.output_len, 1),
        ("--tensor-parallel-size", args.tensor_parallel_size, 1),
    ):
        if value is not None:
            _positive(value, flag, minimum)
    validate.setting("temperature", args.temperature, optional=True)  # nan, inf and 1e308 are one line too
    validate.setting("params_b", args.params_b, optional=True)
    if args.vllm_version:
        parse_version(args.vllm_version)
    rulebase = load_rulebase(args.rules)
    model, notes = _model(args.model, args.offline)
    model, discovered = _discover(model, rulebase, args.offline)
    from specadvisor.rulebase import workload_defaults

    defaults = workload_defaults(args.workload, model.id, rulebase)
    output_len = args.output_len or defaults.output_len
    temperature = args.temperature if args.temperature is not None else defaults.temperature
    hw = _hardware(args.gpu)
    drafter = None
    if args.drafter:
        from specadvisor.modelinfo import inspect_drafter

        drafter = inspect_drafter(args.drafter, model, offline=True if args.offline else None)
    workload = Workload(
        kind=WorkloadKind(args.workload),
        concurrency=args.concurrency,
        output_len=output_len,
        temperature=temperature,
        willing_to_train=args.train,
    )
    if workload.concurrency < 1:
        raise InputError("--concurrency must be >= 1", hint="pass the number of requests served at once")
    advice = advise(
        hw,
        model,
        workload,
        drafter=drafter,
        vllm_version=args.vllm_version,
        local_sessions=_local_sessions(args.db, model, hw),
        rulebase=rulebase,
        tensor_parallel_size=args.tensor_parallel_size,
        params_b=args.params_b,
    )
    if discovered:
        advice.trace.insert(0, f"drafter discovery: {discovered}")
    described = defaults.describe(args.output_len, args.temperature)
    if described:
        advice.trace.insert(0, described)
    advice.warnings[:0] = [*notes, *model.warnings]
    if args.json:
        from specadvisor.cli.output import print_json

        print_json(advice_json(advice, model, hw))
    else:
        render(advice, model, hw, explain_trace=args.explain)
    return 0


def _commands(advice: Advice, model: ModelProfile, hw: HardwareProfile, config: dict[str, Any] | None, *, width: int | None = None) -> dict[str, Any]:
    """Serve and container commands; None for both when the model's size (so its TP) is unknown or
    the plan does not fit. One line each for --json (scripts); `width` breaks them for people."""
    from specadvisor.advisor import container_command, serve_command

    if not advice.tensor_parallel_known or advice.fits is False or advice.target_check != "loads":
        return {"serve_command": None, "container_command": None}
    ref = model.path if model.source == "local" and model.path else model.id
    local = [ref] if model.source == "local" and model.path else []
    if config and isinstance(config.get("model"), str) and _is_local_folder(config["model"]):
        local.append(config["model"])
    tp = advice.tensor_parallel_size
    extra = [*(["--max-model-len", str(advice.max_model_len)] if advice.max_model_len else []), *advice.serve_flags]
    return {
        "serve_command": serve_command(ref, config, tensor_parallel_size=tp, extra_args=extra, width=width),
        "container_command": container_command(
            ref, config, vendor=hw.vendor, vllm_version=advice.vllm_version, tensor_parallel_size=tp, extra_args=extra, local_paths=local, width=width
        ),
    }


def _is_local_folder(ref: str) -> bool:
    """A drafter named by a folder on this machine (--drafter ./dir), not a Hugging Face id."""
    return Path(ref).expanduser().is_dir()


def advice_json(advice: Advice, model: ModelProfile, hw: HardwareProfile) -> dict[str, Any]:
    """Advice as JSON plus the rendered commands per candidate (what scripts paste)."""
    from specadvisor.advisor import explain, spec_config_json

    data = advice.model_dump(mode="json")
    for entry, candidate in zip(data["candidates"], advice.candidates, strict=True):
        entry["speculative_config_json"] = spec_config_json(candidate.speculative_config)
        entry.update(_commands(advice, model, hw, candidate.speculative_config))
    data["baseline"].update(_commands(advice, model, hw, None))
    data["model"] = model.id
    data["hardware"] = hw.gpu_label
    data["explain"] = explain(advice)
    return data


def _speedup(candidate: Candidate) -> str:
    if not candidate.expected_speedup:
        return "-"
    low, high = candidate.expected_speedup
    return f"{low:.2f}x" if low == high else f"{low:.2f}-{high:.2f}x"


def render(advice: Advice, model: ModelProfile, hw: HardwareProfile, *, explain_trace: bool = False) -> None:
    from rich.table import Table

    from specadvisor.advisor import explain, spec_config_json
    from specadvisor.cli.output import console
    from specadvisor.rulebase import LATEST_KNOWN
    from specadvisor.textsafe import markup as escape
    from specadvisor.vllm_command import PASTE_WIDTH, shell_word

    out = console()
    planned = " (planned)" if hw.hypothetical else ""
    tp = advice.tensor_parallel_size if advice.tensor_parallel_known else "unknown (pass --tensor-parallel-size or --params-b)"
    out.print(
        f"[bold]{escape(model.id)}[/bold] on {escape(hw.gpu_label)}{planned}, vLLM {advice.vllm_version or LATEST_KNOWN + ' (assumed: newest known)'}, tensor parallel {tp}"
    )
    style = {"speculate": "green", "careful": "yellow", "unlikely": "red"}.get(advice.verdict_level, "bold")
    out.print(f"[{style}]{escape(advice.verdict)}[/{style}]")
    table = Table(show_edge=False)
    for column in ("#", "method", "drafter", "N grid", "score", "published / measured"):
        table.add_column(column)
    for rank, c in enumerate(advice.candidates, 1):
        table.add_row(str(rank), c.id, escape(c.drafter or "-"), ",".join(map(str, c.n_grid)), f"{c.score:.2f}", _speedup(c))
    table.add_row("-", "baseline", "-", "-", "-", "always measured")
    out.print(table)
    for rank, c in enumerate(advice.candidates, 1):
        out.print(f"\n[bold]#{rank} {c.id}[/bold]  --speculative-config {escape(shell_word(spec_config_json(c.speculative_config)))}", soft_wrap=True)
        for reason in c.reasons:
            out.print(f"  why: {escape(reason)}", soft_wrap=True)
        for ref in c.evidence[:4]:
            tag = "measured here" if ref.local else ref.source
            out.print(escape(f"  evidence: {ref.summary} [{tag}{', ' + ref.date if ref.date else ''}]"), soft_wrap=True)
        for warning in c.warnings:
            out.print(f"  [yellow]note:[/yellow] {escape(warning)}", soft_wrap=True)
    baseline_title = "Recommended: serve without speculation" if advice.speculation_unlikely else "Baseline (no speculation)"
    commands = advice.tensor_parallel_known and advice.fits is not False and advice.target_check == "loads"
    if advice.target_check != "loads" and advice.fits is not False:
        out.print(
            "\n[bold]No serve command:[/bold] "
            + (
                "this vLLM release cannot load the model."
                if advice.target_check == "does-not-load"
                else "the model's architecture is unverified (see the first line)."
            )
        )
    elif advice.fits is False:
        out.print("\n[bold]No serve command:[/bold] the plan does not fit these GPUs (see the first line and the warnings).")
    elif not advice.tensor_parallel_known:
        out.print(
            "\n[bold]No serve command:[/bold] the model's size is unknown, so its tensor-parallel size would be a guess; "
            "pass --tensor-parallel-size N or --params-b B."
        )
    elif advice.speculation_unlikely:
        out.print(f"\n[bold]{baseline_title}[/bold]")
        out.print(_commands(advice, model, hw, None, width=PASTE_WIDTH)["serve_command"], soft_wrap=True, markup=False)
    if advice.candidates and commands:
        top = _commands(advice, model, hw, advice.candidates[0].speculative_config, width=PASTE_WIDTH)
        title = "Only to confirm by measurement: the top candidate" if advice.speculation_unlikely else "Serve the top candidate"
        out.print(f"\n[bold]{title}[/bold]")
        out.print(top["serve_command"], soft_wrap=True, markup=False)
        out.print(top["container_command"], soft_wrap=True, markup=False)
    if not advice.speculation_unlikely and commands:
        out.print(f"\n[bold]{baseline_title}[/bold]")
        out.print(_commands(advice, model, hw, None, width=PASTE_WIDTH)["serve_command"], soft_wrap=True, markup=False)
    for line in advice.memory:
        out.print(f"[dim]memory:[/dim] {escape(line)}", soft_wrap=True)
    for warning in advice.warnings:
        out.print(f"[yellow]warning:[/yellow] {escape(warning)}", soft_wrap=True)
    if advice.suggest_training:
        out.print("No drafter fits this model: train one with Speculators (EAGLE-3 first), then pass it with --drafter.")
    if explain_trace:
        out.print("\n[bold]Trace[/bold]")
        for line in explain(advice):
            out.print(line, soft_wrap=True, markup=False)
