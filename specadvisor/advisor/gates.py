"""The gate before any method: can this vLLM release load the target at all?

Read from the release's own model registry (rules/vllm_contract.json, `arch/<Architecture>`): a
target whose architecture the registry lacks does not start, whatever speculative config it gets.
An architecture nobody read (no config.json, not in the catalog) is said, not guessed: the advice is
then unverified and prints no command. Whether the target can host each method is checked per
candidate (advisor/validate.host_problems).
"""

from __future__ import annotations

from dataclasses import dataclass

from specadvisor.rulebase.contract import Contract, load_contract
from specadvisor.rulebase.versions import effective_version


@dataclass(frozen=True)
class LoadGate:
    state: str  # loads | unverified | does-not-load
    message: str  # the fact and its source (vLLM file and release), or what to do
    first: str | None = None  # the first release read that loads it


def load_gate(model_id: str, architecture: str | None, vllm_version: str | None, contract: Contract | None = None) -> LoadGate:
    contract = contract or load_contract()
    shown = effective_version(vllm_version)
    if not architecture:
        return LoadGate(
            "unverified",
            f"Unverified: the architecture of {model_id} is unknown here, so whether vLLM {shown} can load it and host each method "
            f"was not checked: run `specadvisor inspect {model_id}` with its config.json (a local folder, or online), then advise again; "
            "no serve command until then.",
        )
    loads = contract.loads(architecture, vllm_version)
    if loads is None:
        return LoadGate("loads", f"vLLM {shown} is older than every release read: its model registry was not checked")
    first = contract.first(f"arch/{architecture}")
    if loads:
        return LoadGate(
            "loads", f"vLLM {shown} loads {architecture} ({contract.where(f'arch/{architecture}', vllm_version)})", first["since"] if first else None
        )
    if first is None:
        return LoadGate(
            "does-not-load",
            f"vLLM {shown} cannot load {model_id}: no release read has {architecture} in its model registry "
            "(vllm/model_executor/models/registry.py); no serve command.",
        )
    return LoadGate(
        "does-not-load",
        f"vLLM {shown} cannot load {model_id}: {architecture} enters vLLM's model registry in {first['since']} ({first['source']}); "
        f"upgrade to vLLM {first['since']} or later (--vllm-version {first['since']}). No serve command for {shown}.",
        first["since"],
    )
