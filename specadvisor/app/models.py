"""Use case `inspect`: what a target model is (size, MoE, MTP heads, published drafters) and whether
a drafter fits it; the CLI's `inspect` and `advise` and the TUI's model field ask here."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from specadvisor.domain import DrafterProfile, ModelProfile


def inspect_model(ref: str, *, offline: bool = False) -> ModelProfile:
    """The model at `ref` (local folder, Hugging Face id from the cache then the Hub, catalog name);
    `offline`: never the Hub (HF_HUB_OFFLINE=1 does the same)."""
    from specadvisor.modelinfo import inspect_model as inspect

    return inspect(ref, offline=True if offline else None)


def inspect_drafter(ref: str, target: ModelProfile, *, offline: bool = False) -> DrafterProfile:
    """The drafter at `ref`, checked against the target it would serve."""
    from specadvisor.modelinfo import inspect_drafter as inspect

    return inspect(ref, target, offline=True if offline else None)
