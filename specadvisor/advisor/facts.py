"""The situation the rules read, gathered once from hardware, model, workload and version.

Rules compare against these facts; an unknown fact (None) never satisfies a condition, so a rule
about "small models" does not fire for a model whose size nobody knows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from specadvisor.advisor.sizing import gpu_memory_gib
from specadvisor.domain import DrafterProfile, HardwareProfile, ModelProfile, Workload
from specadvisor.rulebase import DrafterEntry, ModelFamily, RuleWhen, parse_version
from specadvisor.rulebase.versions import effective_version


@dataclass(frozen=True)
class Facts:
    vendor: str
    gpu_memory_gib: float | None
    gpu_count: int
    family: ModelFamily | None
    params_b: float | None
    active_params_b: float | None
    moe: bool
    mtp_layers: int
    has_published_drafter: bool
    user_drafter: bool
    workload: str
    concurrency: int
    output_len: int
    temperature: float
    vllm_version: str
    willing_to_train: bool

    @property
    def native_mtp(self) -> bool:
        return self.mtp_layers > 0


INSPECTED = ("local", "hf-cache", "hub")


def native_mtp_layers(model: ModelProfile, family: ModelFamily | None) -> int:
    """MTP layers usable with method "mtp". A read config.json is trusted over the catalog, and
    heads the weight index shows missing (a quantized re-upload) do not count."""
    if model.mtp.needs_assistant_checkpoint:
        return 0
    if model.mtp.present:
        return 0 if model.mtp.confirmed_by_weights is False else max(model.mtp.layers, 1)
    if model.source in INSPECTED or family is None or family.mtp_needs_assistant:
        return 0
    return family.native_mtp


def gather(
    hardware: HardwareProfile,
    model: ModelProfile,
    workload: Workload,
    family: ModelFamily | None,
    published: list[DrafterEntry],
    drafter: DrafterProfile | None,
    vllm_version: str | None,
) -> Facts:
    mtp_layers = native_mtp_layers(model, family)
    params = model.params_b or (family.params_b if family else None)
    active = model.active_params_b or (family.active_b if family else None) or params
    return Facts(
        vendor=hardware.vendor,
        gpu_memory_gib=gpu_memory_gib(hardware),
        gpu_count=len(hardware.gpus),
        family=family,
        params_b=params,
        active_params_b=active,
        moe=model.is_moe or bool(family and family.moe),
        mtp_layers=mtp_layers,
        has_published_drafter=bool(published or model.drafters),
        user_drafter=drafter is not None,
        workload=workload.kind.value,
        concurrency=workload.concurrency,
        output_len=workload.output_len,
        temperature=workload.temperature,
        vllm_version=effective_version(vllm_version),
        willing_to_train=workload.willing_to_train,
    )


_SUFFIXES = (("_min", ">="), ("_max", "<="), ("_below", "<"))


def _split(condition: str, expected: object) -> tuple[str, str]:
    """Condition name -> (fact name, comparison): concurrency_min -> (concurrency, >=)."""
    for suffix, op in _SUFFIXES:
        if condition.endswith(suffix):
            return condition.removesuffix(suffix), op
    return condition, "in" if isinstance(expected, list) else "=="


def fact_value(facts: Facts, name: str) -> object:
    if name == "model_family":
        return facts.family.id if facts.family else None
    if name == "model_known":
        return facts.family is not None
    return getattr(facts, name)


def _holds(value: Any, op: str, expected: Any) -> bool:  # a fact against a rule-base value: compared as the YAML holds it
    if value is None:
        return False
    if op == "in":
        return bool(value in expected)
    if op == "==":
        return bool(value == expected)
    if op == ">=":
        return bool(value >= expected)
    if op == "<=":
        return bool(value <= expected)
    return bool(value < expected)


def unmet_conditions(when: RuleWhen, facts: Facts) -> list[str]:
    """Readable conditions of a rule that these facts fail ("concurrency is 4, needs >= 32")."""
    unmet = []
    for condition, expected in when.model_dump(exclude_none=True).items():
        name, op = _split(condition, expected)
        value = fact_value(facts, name)
        if name == "vllm_version":
            ok = _holds(parse_version(facts.vllm_version), op, parse_version(str(expected)))
        else:
            ok = _holds(value, op, expected)
        if not ok:
            shown = "unknown" if value is None else value
            unmet.append(f"{name} is {shown}, needs {op} {expected}")
    return unmet


def matches(when: RuleWhen, facts: Facts) -> bool:
    """True when every condition the rule sets holds for these facts (an unknown fact never holds)."""
    return not unmet_conditions(when, facts)
