"""`specadvisor advise`: ranked speculative-decoding candidates for a model, GPU and workload."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from specadvisor.cli.workloads import WORKLOADS

if TYPE_CHECKING:
    from specadvisor.domain import Advice, Candidate, HardwareProfile, ModelProfile


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


def run(args: argparse.Namespace) -> int:
    from specadvisor.app.advice import AdviceRequest, advice_json, advise_request
    from specadvisor.cli import validate

    validate.setting("temperature", args.temperature, optional=True)  # nan, inf and 1e308 are one line too
    validate.setting("params_b", args.params_b, optional=True)
    request = AdviceRequest(
        model=args.model,
        workload=args.workload,
        concurrency=args.concurrency,
        gpu=args.gpu,
        vllm_version=args.vllm_version,
        output_len=args.output_len,
        temperature=args.temperature,
        tensor_parallel_size=args.tensor_parallel_size,
        params_b=args.params_b,
        drafter=args.drafter,
        willing_to_train=args.train,
        rules=tuple(args.rules),
        offline=args.offline,
        db=args.db,
    )
    advised = advise_request(request)
    if args.json:
        from specadvisor.cli.output import print_json

        print_json(advice_json(advised.advice, advised.model, advised.hardware))
    else:
        render(advised.advice, advised.model, advised.hardware, explain_trace=args.explain)
    return 0


def _speedup(candidate: Candidate) -> str:
    if not candidate.expected_speedup:
        return "-"
    low, high = candidate.expected_speedup
    return f"{low:.2f}x" if low == high else f"{low:.2f}-{high:.2f}x"


def render(advice: Advice, model: ModelProfile, hw: HardwareProfile, *, explain_trace: bool = False) -> None:
    from rich.table import Table

    from specadvisor.app.advice import commands, explain, newest_known_vllm
    from specadvisor.cli.output import console
    from specadvisor.textsafe import markup as escape
    from specadvisor.vllm_command import PASTE_WIDTH, shell_command, shell_word, spec_config_json

    out = console()
    planned = " (planned)" if hw.hypothetical else ""
    tp = advice.tensor_parallel_size if advice.tensor_parallel_known else "unknown (pass --tensor-parallel-size or --params-b)"
    out.print(
        f"[bold]{escape(model.id)}[/bold] on {escape(hw.gpu_label)}{planned}, vLLM {advice.vllm_version or newest_known_vllm() + ' (assumed: newest known)'}, tensor parallel {tp}"
    )
    if advice.assumed:
        out.print(f"Advice {escape(advice.assumed)} (--temperature and --output-len change them)", soft_wrap=True)
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
    printable = advice.tensor_parallel_known and advice.fits is not False and advice.target_check == "loads"
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
        out.print(commands(advice, model, hw, None, width=PASTE_WIDTH)["serve_command"], soft_wrap=True, markup=False)
    if advice.candidates and printable:
        top = commands(advice, model, hw, advice.candidates[0].speculative_config, width=PASTE_WIDTH)
        title = "Only to confirm by measurement: the top candidate" if advice.speculation_unlikely else "Serve the top candidate"
        out.print(f"\n[bold]{title}[/bold]")
        out.print(top["serve_command"], soft_wrap=True, markup=False)
        out.print(top["container_command"], soft_wrap=True, markup=False)
    if not advice.speculation_unlikely and printable:
        out.print(f"\n[bold]{baseline_title}[/bold]")
        out.print(commands(advice, model, hw, None, width=PASTE_WIDTH)["serve_command"], soft_wrap=True, markup=False)
    for line in advice.memory:
        out.print(f"[dim]memory:[/dim] {escape(line)}", soft_wrap=True)
    for warning in advice.warnings:
        out.print(f"[yellow]warning:[/yellow] {escape(warning)}", soft_wrap=True)
    if advice.suggest_training:
        train = shell_command(
            ["specadvisor", "train", "--model", model.path or model.id, "--prompts", "YOUR_TRAFFIC.jsonl", "--minutes", "10"], width=PASTE_WIDTH
        )
        out.print("No drafter fits this model: train an EAGLE-3 one with Speculators and judge it in one go:", soft_wrap=True)
        out.print(train, soft_wrap=True, markup=False)
    if explain_trace:
        out.print("\n[bold]Trace[/bold]")
        for line in explain(advice):
            out.print(line, soft_wrap=True, markup=False)
