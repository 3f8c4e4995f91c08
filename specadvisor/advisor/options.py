"""Which methods can run at all for this model and vLLM version, each with the drafter it would use.

A drafter-based method is an option only when a drafter exists (yours, the published catalog's, or
the model's inspection); lookup methods always are; native MTP when the model has heads.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from specadvisor.advisor.facts import Facts
from specadvisor.advisor.validate import speculators_problem
from specadvisor.domain import DrafterProfile, DrafterRef, ModelProfile
from specadvisor.rulebase import DrafterEntry, MethodSpec, RuleBase, registry
from specadvisor.rulebase.versions import effective_version


@dataclass
class Option:
    method: MethodSpec
    drafter: str | None = None
    block_size: int | None = None
    default_k: int | None = None
    origin: str = "lookup"  # user | published | native | lookup
    alternatives: list[str] = field(default_factory=list)
    max_n: int | None = None  # the drafter's own limit (a single-token throughput head)
    variant: str = ""
    reviewed: bool = True  # False: a drafter discovered on the Hub that nobody has checked
    speculators_type: str | None = None  # a Speculators-format checkpoint's speculators_model_type
    extra_config: dict[str, object] = field(default_factory=dict)  # keys this drafter needs on this release (use_heterogeneous_vocab)
    notes: list[str] = field(default_factory=list)  # what the user should know about this drafter here


def method_id_for(vllm_method: str, parallel: bool, rb: RuleBase) -> str | None:
    """specadvisor's method id for a served (method, parallel_drafting) pair: eagle3 + parallel -> peagle."""
    spec = registry.by_vllm_name(vllm_method, parallel, rb)
    return spec.id if spec else None


def _unavailable(spec: MethodSpec, version: str, what: str, platform: str | None = None) -> str:
    platform_problem = registry.platform_problem(spec, platform, version)
    if registry.available(spec, version) and platform_problem:
        return f"{what} uses {spec.name}: {platform_problem}; it is left out."
    if spec.removed_in and not registry.available(spec, version):
        return f"{what} uses {spec.name}, removed in vLLM {spec.removed_in}: it is left out for vLLM {version}."
    return f"{what} uses {spec.name}, which needs vLLM >= {spec.min_version}: it is left out for vLLM {version}; upgrade to try it."


PLATFORMS = {"nvidia": "cuda", "amd": "rocm", "none": "cpu"}
"""GPU vendor (as the probe reports it) -> the platform a method's `platforms` name."""


def facts_platform(facts: Facts) -> str | None:
    return PLATFORMS.get(facts.vendor)


def _user_option(
    drafter: DrafterProfile, available: dict[str, MethodSpec], rb: RuleBase, version: str, warnings: list[str], platform: str | None
) -> Option | None:
    if drafter.compatible is False or not drafter.servable:
        warnings.append(f"Your drafter {drafter.id} cannot serve this target as it is ({'; '.join(drafter.warnings) or 'incompatible'}): it is left out.")
        return None
    vllm_method, parallel = drafter.method, drafter.parallel_drafting
    if vllm_method is None:
        vllm_method, parallel = registry.from_speculators(drafter.algorithm or "", rb)
        if vllm_method is None:
            vllm_method = registry.from_architecture([], None, rb)[1]
    parallel = parallel or registry.from_speculators(drafter.algorithm or "", rb)[1]
    method_id = method_id_for(vllm_method, parallel, rb)
    if method_id is None:
        warnings.append(f"Your drafter {drafter.id} is served with unknown method '{vllm_method}': it is left out.")
        return None
    if method_id not in available:
        warnings.append(_unavailable(rb.methods[method_id], version, f"Your drafter {drafter.id}", platform))
        return None
    return Option(available[method_id], drafter.path or drafter.id, drafter.block_size, drafter.default_k, "user")


def _variant_rank(entry: DrafterRef | DrafterEntry, facts: Facts) -> int:
    """Which published variant suits the workload: long-context heads for long RAG/agent prompts,
    single-token throughput heads only at high concurrency, the general head otherwise."""
    variant = getattr(entry, "variant", "")
    if facts.workload in ("rag", "agentic"):
        order = ["long-context", "", "short-context", "throughput"]
    elif facts.concurrency >= 32:
        order = ["throughput", "", "short-context", "long-context"]
    else:
        order = ["", "short-context", "long-context", "throughput"]
    return order.index(variant) if variant in order else len(order)


def _published(model: ModelProfile, catalog: list[DrafterEntry], facts: Facts) -> list[DrafterRef | DrafterEntry]:
    seen = {entry.drafter for entry in catalog}
    entries: list[DrafterRef | DrafterEntry] = [*catalog, *(ref for ref in model.drafters if ref.drafter not in seen)]
    return sorted(entries, key=lambda entry: _variant_rank(entry, facts))  # stable: catalog order otherwise


def gather_options(
    model: ModelProfile,
    facts: Facts,
    catalog: list[DrafterEntry],
    drafter: DrafterProfile | None,
    available: dict[str, MethodSpec],
    rb: RuleBase,
) -> tuple[dict[str, Option], list[str]]:
    version = effective_version(facts.vllm_version)
    options: dict[str, Option] = {}
    warnings: list[str] = []
    if drafter is not None:
        option = _user_option(drafter, available, rb, version, warnings, facts_platform(facts))
        if option:
            options[option.method.id] = option
    left_out: set[str] = set()
    for entry in _published(model, catalog, facts):
        method_id = method_id_for(entry.method, entry.parallel_drafting, rb)
        if method_id is None:
            continue
        if method_id not in available:
            if method_id not in left_out:
                left_out.add(method_id)
                warnings.append(_unavailable(rb.methods[method_id], version, f"The published drafter {entry.drafter}", facts_platform(facts)))
            continue
        speculators_type = getattr(entry, "speculators_type", None)
        unloadable = speculators_problem(speculators_type, version)
        if unloadable:  # another published drafter for the method may load: keep looking
            warnings.append(f"The published drafter {entry.drafter} is left out: {unloadable}.")
            continue
        if method_id in options:
            if entry.drafter not in (options[method_id].drafter, *options[method_id].alternatives):
                options[method_id].alternatives.append(entry.drafter)
            continue
        options[method_id] = Option(
            available[method_id],
            entry.drafter,
            getattr(entry, "block_size", None),
            None,
            "published",
            max_n=getattr(entry, "max_n", None),
            variant=getattr(entry, "variant", ""),
            reviewed=getattr(entry, "reviewed", True),
            speculators_type=speculators_type,
        )
    native = registry.native_heads_method(rb)
    if native is not None and facts.native_mtp and native.id not in options:
        if native.id in available:
            options[native.id] = Option(available[native.id], None, None, None, "native")
        else:
            warnings.append(f"The model's MTP heads need method '{native.vllm_method}', which vLLM {version} does not offer.")
    in_checkpoint = registry.in_checkpoint_method(rb)
    if in_checkpoint is not None and facts.family is not None and facts.family.native_dspark and in_checkpoint.id not in options:
        if in_checkpoint.id in available:
            options[in_checkpoint.id] = Option(available[in_checkpoint.id], None, None, None, "native")
        else:
            warnings.append(_unavailable(in_checkpoint, version, f"{facts.family.id}'s own checkpoint"))
    needs_assistant = model.mtp.needs_assistant_checkpoint or bool(facts.family and facts.family.mtp_needs_assistant)
    if needs_assistant and (native is None or native.id not in options):
        warnings.append("This model's MTP runs through a separate assistant checkpoint: pass it with --drafter to try native MTP.")
    for spec in available.values():
        if spec.drafting == "lookup" and spec.offer and spec.id not in options:
            options[spec.id] = Option(spec)
    return {key: option for key, option in options.items() if option.method.offer or option.origin == "user"}, warnings
