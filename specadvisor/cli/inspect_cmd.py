"""`specadvisor inspect MODEL [--drafter D]`: what the target is, and whether the drafter fits it."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from specadvisor.domain import DrafterProfile, ModelProfile


def register(parser: argparse.ArgumentParser) -> None:
    parser.description = "MODEL is a local folder, a Hugging Face id (cache first, then the Hub) or a catalog name."
    parser.add_argument("model", metavar="MODEL")
    parser.add_argument("--drafter", metavar="D", help="drafter folder or id, checked against MODEL")
    parser.add_argument("--offline", action="store_true", help="do not contact the Hugging Face Hub (HF_HUB_OFFLINE=1 does the same)")
    parser.add_argument("--json", action="store_true", help='print {"model": ..., "drafter": ...} as JSON')
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from specadvisor.app.models import inspect_drafter, inspect_model

    model = inspect_model(args.model, offline=args.offline)
    drafter = inspect_drafter(args.drafter, model, offline=args.offline) if args.drafter else None
    if args.json:
        from specadvisor.cli.output import print_json

        print_json({"model": model, "drafter": drafter})
    else:
        render(model, drafter)
    return 0


def _billions(value: float | None) -> str:
    if value is None:
        return "?"
    return f"{value * 1000:.0f}M" if value < 1 else f"{value:.1f}B"


def _size(model: ModelProfile) -> str:
    if model.params_b is None:
        return "size unknown"
    text = f"{_billions(model.params_b)} params"
    if model.is_moe:  # only what was read: a catalog entry gives the active size, not the expert counts
        experts = f"{model.num_experts} experts / {model.experts_per_token or '?'} active" if model.num_experts else ""
        active = f"{_billions(model.active_params_b)} params active" if model.active_params_b else ""
        shown = ", ".join(part for part in (experts, active) if part) or "expert counts not read"
        text += f", MoE ({shown})"
    return text


def render(model: ModelProfile, drafter: DrafterProfile | None) -> None:
    from specadvisor.cli.output import console

    out = console()
    if model.path and model.path != model.id:
        where = f"{model.source}: {model.path}"
    else:
        where = "local folder" if model.source == "local" else model.source
    out.print(f"[bold]{model.id}[/bold]  ({where})", soft_wrap=True)
    arch = model.architecture or model.family or "unknown architecture"
    out.print(f"  {arch}, {_size(model)}")
    facts = []
    if model.num_hidden_layers:
        facts.append(f"{model.num_hidden_layers} layers")
    if model.vocab_size:
        facts.append(f"vocab {model.vocab_size}")
    if model.context_length:
        facts.append(f"context {model.context_length}")
    if model.dtype:
        facts.append(model.dtype)
    if model.quantization:
        facts.append(f"quantized: {model.quantization}")
    if facts:
        out.print("  " + ", ".join(facts))
    if model.mtp.present:
        confirmed = {True: "confirmed by the weights", False: "NOT in the weights", None: "weights not checked"}[model.mtp.confirmed_by_weights]
        out.print(f"  [green]native MTP heads[/green]: {model.mtp.layers} layer(s) ({confirmed}) -> method 'mtp', no drafter needed")
    elif model.mtp.detail and (model.mtp.config_key or model.mtp.needs_assistant_checkpoint):
        out.print(f"  MTP: {model.mtp.detail}")
    if model.drafters:
        out.print("  published drafters:")
        for ref in model.drafters:
            parallel = " + parallel drafting" if ref.parallel_drafting else ""
            out.print(f"    {ref.drafter}  [dim]({ref.method}{parallel})[/dim]", soft_wrap=True)
    for warning in model.warnings:
        out.print(f"  [yellow]warning:[/yellow] {warning}", soft_wrap=True)
    if drafter is None:
        return
    out.print(f"[bold]drafter {drafter.id}[/bold]" + (f"  ({drafter.path})" if drafter.path else ""))
    method = drafter.method or "not servable"
    extras = [f"algorithm {drafter.algorithm}"] if drafter.algorithm else []
    if drafter.parallel_drafting:
        extras.append("parallel drafting")
    if drafter.default_k:
        extras.append(f"default K {drafter.default_k}")
    if drafter.block_size:
        extras.append(f"block size {drafter.block_size}")
    if drafter.verifier:
        extras.append(f"trained for {drafter.verifier}")
    out.print(f"  method {method}; " + ", ".join(extras), soft_wrap=True)
    verdict = {True: "[green]compatible with the target[/green]", False: "[red]NOT compatible with the target[/red]", None: "compatibility unknown"}[
        drafter.compatible
    ]
    out.print(f"  {verdict}")
    for warning in drafter.warnings:
        out.print(f"  [yellow]warning:[/yellow] {warning}", soft_wrap=True)
