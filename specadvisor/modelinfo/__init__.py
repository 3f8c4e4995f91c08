"""Inspect a target model and a drafter: what vLLM will load, and whether they belong together.

Imports httpx only when the Hub must be asked, so the rest of specadvisor stays light.
"""

from __future__ import annotations

import shlex

from specadvisor.domain import DrafterProfile, ModelProfile
from specadvisor.errors import InputError
from specadvisor.modelinfo import catalog
from specadvisor.modelinfo.drafter import check_compatibility, drafter_from_name, read_drafter
from specadvisor.modelinfo.locate import locate
from specadvisor.modelinfo.profile import build_profile

__all__ = ["inspect_drafter", "inspect_model"]


def inspect_model(ref: str, *, offline: bool | None = None) -> ModelProfile:
    """Profile of a local folder, a cached or Hub model id, else the catalog entry; InputError if none."""
    ref = ref.strip()
    if not ref:
        raise InputError("no model given", hint="pass a Hugging Face id like Qwen/Qwen3-8B or a local folder")
    located, reasons = locate(ref, offline=offline)
    if located is not None:
        return build_profile(ref, located)
    profile = catalog.profile_from_catalog(ref, reasons)
    if profile is None:
        raise InputError(
            f"model {ref!r} not found: {'; '.join(reasons)}; and not in the model catalog",
            # `hf` is the CLI huggingface_hub ships (1.x has no huggingface-cli); the config files are all inspection reads
            hint=f"download its config files (hf download {shlex.quote(ref)} --include '*.json') and run again, or check the id",
        )
    return profile


def inspect_drafter(ref: str, target: ModelProfile | None = None, *, offline: bool | None = None) -> DrafterProfile:
    """Profile of a drafter checkpoint, checked against `target` when given."""
    ref = ref.strip()
    if not ref:
        raise InputError("no drafter given", hint="pass a drafter id like RedHatAI/Qwen3-8B-speculator.eagle3 or a folder")
    located, reasons = locate(ref, offline=offline)
    if located is not None:
        drafter = read_drafter(ref, located.config, located.path)
    else:
        drafter = drafter_from_name(ref, "; ".join(reasons))
    return check_compatibility(drafter, target) if target is not None else drafter
