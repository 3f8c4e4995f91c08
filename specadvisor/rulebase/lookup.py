"""Forgiving look-ups into the catalogs: GPU names as probes and people write them, model ids as paths."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from typing import Any

from specadvisor.domain import DEFAULT_OUTPUT_LEN
from specadvisor.rulebase import registry
from specadvisor.rulebase.loader import RuleBase, default_rulebase
from specadvisor.rulebase.schema import DrafterEntry, GpuSpec, MethodSpec, ModelFamily
from specadvisor.rulebase.versions import in_range

_VENDOR_WORDS = ("nvidia", "amd", "instinct", "geforce", "radeon", "tesla", "quadro")


def _norm(text: str) -> str:
    text = text.lower()
    for word in _VENDOR_WORDS:
        text = text.replace(word, "")
    return re.sub(r"[^a-z0-9]", "", text)


def find_gpu(name: str, rb: RuleBase | None = None) -> GpuSpec | None:
    """Catalog entry for a GPU name: "h100", "H100-80GB", "NVIDIA H100 80GB HBM3", "rtx 4090", "MI300X"."""
    rb = rb or default_rulebase()
    query = _norm(name)
    if not query:
        return None
    for gpu in rb.gpus:
        if query in {_norm(a) for a in [gpu.id, gpu.name, *gpu.names]}:
            return gpu
    memory = re.search(r"(\d+)\s*g(?:i)?b", name.lower())
    best: tuple[int, int, GpuSpec] | None = None
    for order, gpu in enumerate(rb.gpus):
        for alias in {_norm(a) for a in [gpu.id, gpu.name, *gpu.names]}:
            if alias and query.startswith(alias):
                memory_match = int(memory is not None and abs(gpu.memory_gib - int(memory.group(1))) < 2)
                rank = (memory_match * 1000 + len(alias), -order)
                if best is None or rank > best[:2]:
                    best = (*rank, gpu)
    return best[2] if best else None


def _model_keys(model_id: str) -> list[str]:
    text = model_id.strip().rstrip("/").lower()
    return [text, text.rsplit("/", 1)[-1]]


def find_model_family(model_id: str, rb: RuleBase | None = None) -> ModelFamily | None:
    """The most specific catalog entry whose patterns match the model id or its last path part."""
    rb = rb or default_rulebase()
    keys = _model_keys(model_id)
    best: tuple[int, ModelFamily] | None = None
    for family in rb.models:
        for pattern in [*family.match, family.hf_id, family.id]:
            if pattern and any(fnmatch.fnmatchcase(key, pattern.lower()) for key in keys):
                specificity = len(pattern.replace("*", ""))
                if best is None or specificity > best[0]:
                    best = (specificity, family)
    return best[1] if best else None


def drafters_for(model_id: str, rb: RuleBase | None = None) -> list[DrafterEntry]:
    """Published drafters whose target is this model (same id, or the same catalog family)."""
    rb = rb or default_rulebase()
    keys = set(_model_keys(model_id))
    family = find_model_family(model_id, rb)
    found = []
    for entry in rb.drafters:
        if keys & set(_model_keys(entry.target)):
            found.append(entry)
            continue
        if any(fnmatch.fnmatchcase(key, pattern.lower()) for pattern in entry.serves for key in keys):
            found.append(entry)
            continue
        target_family = find_model_family(entry.target, rb)
        if family is not None and target_family is not None and target_family.id == family.id:
            found.append(entry)
    return found


def methods_for_version(vllm_version: str | None, rb: RuleBase | None = None) -> dict[str, MethodSpec]:
    """Methods (by id) that this vLLM version serves; None means the newest version the rules know."""
    return registry.methods_for_version(vllm_version, rb)


def config_keys_for(vllm_method: str, vllm_version: str | None, rb: RuleBase | None = None) -> dict[str, Any]:
    """`--speculative-config` keys this version accepts together with this vLLM method
    (an older per-family name such as deepseek_mtp takes the keys of its canonical method)."""
    rb = rb or default_rulebase()
    vllm_method = registry.canonical_vllm_name(vllm_method, rb)
    return {
        key: spec
        for key, spec in rb.config_keys.items()
        if (not spec.methods or vllm_method in spec.methods) and in_range(vllm_version, spec.min_version, spec.removed_in)
    }


@dataclass(frozen=True)
class Defaults:
    temperature: float
    output_len: int
    prompt_len: int
    output_why: str  # where the output length comes from
    temperature_why: str  # where the temperature comes from (a model card's recommendation wins)

    @property
    def why(self) -> str:
        return self.output_why if self.output_why == self.temperature_why else f"{self.output_why}; {self.temperature_why}"

    def describe(self, output_len: int | None, temperature: float | None) -> str | None:
        """The trace line naming each value that came from here and each the user passed (None when the
        user passed both): a temperature the user chose is never called the workload's usual setting."""
        if output_len is not None and temperature is not None:
            return None
        output = f"output {self.output_len} tokens ({self.output_why})" if output_len is None else f"output {output_len} tokens (as you passed it)"
        chosen = f"temperature {self.temperature:g} ({self.temperature_why})" if temperature is None else f"temperature {temperature:g} (as you passed it)"
        return f"workload defaults: {output}, {chosen}"


def workload_defaults(kind: str, model_id: str | None = None, rb: RuleBase | None = None) -> Defaults:
    """Temperature, output and prompt lengths for a workload the user did not describe: the workload's
    practice (rules/workloads.toml), with the model card's recommended temperature winning."""
    rb = rb or default_rulebase()
    entry = rb.workloads.get(kind)
    temperature, output_len, prompt_len = (entry.temperature, entry.output_len, entry.prompt_len) if entry else (0.0, DEFAULT_OUTPUT_LEN, 1024)
    usual = f"the {kind} workload's usual settings" if entry else "no workload defaults in the rules"
    temperature_why = usual
    family = find_model_family(model_id, rb) if model_id else None
    if family is not None and family.temperature is not None:
        temperature = family.temperature
        temperature_why = f"recommended by the {family.id} model card"
    return Defaults(temperature, output_len, prompt_len, usual, temperature_why)
