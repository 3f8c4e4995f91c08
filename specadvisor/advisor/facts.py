"""The situation the rules read, gathered once from hardware, model, workload and version.

Rules compare against these facts; an unknown fact (None) never satisfies a condition, so a rule
about "small models" does not fire for a model whose size nobody knows.
"""

from __future__ import annotations

from dataclasses import dataclass

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


def _at_least(value, bound) -> bool:
    return bound is None or (value is not None and value >= bound)


def _at_most(value, bound) -> bool:
    return bound is None or (value is not None and value <= bound)


def _equals(value, expected) -> bool:
    return expected is None or value == expected


def matches(when: RuleWhen, facts: Facts) -> bool:
    """True when every condition the rule sets holds for these facts."""
    version = parse_version(facts.vllm_version)
    checks = [
        when.vendor is None or facts.vendor in when.vendor,
        _at_least(facts.gpu_memory_gib, when.gpu_memory_gib_min),
        _at_most(facts.gpu_memory_gib, when.gpu_memory_gib_max),
        _at_least(facts.gpu_count, when.gpu_count_min),
        when.model_family is None or (facts.family is not None and facts.family.id in when.model_family),
        _equals(facts.family is not None, when.model_known),
        _at_least(facts.params_b, when.params_b_min),
        _at_most(facts.params_b, when.params_b_max),
        _at_least(facts.active_params_b, when.active_params_b_min),
        _at_most(facts.active_params_b, when.active_params_b_max),
        _equals(facts.moe, when.moe),
        _equals(facts.native_mtp, when.native_mtp),
        _equals(facts.has_published_drafter, when.has_published_drafter),
        _equals(facts.user_drafter, when.user_drafter),
        when.workload is None or facts.workload in when.workload,
        _at_least(facts.concurrency, when.concurrency_min),
        _at_most(facts.concurrency, when.concurrency_max),
        _at_least(facts.output_len, when.output_len_min),
        _at_most(facts.output_len, when.output_len_max),
        _at_least(facts.temperature, when.temperature_min),
        _at_most(facts.temperature, when.temperature_max),
        when.vllm_version_min is None or version >= parse_version(when.vllm_version_min),
        when.vllm_version_below is None or version < parse_version(when.vllm_version_below),
        _equals(facts.willing_to_train, when.willing_to_train),
    ]
    return all(checks)
