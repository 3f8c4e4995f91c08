"""Which methods can run at all for this model and vLLM version, each with the drafter it would use.

A drafter-based method is an option only when a drafter exists (yours, the published catalog's, or
the model's inspection); lookup methods always are; native MTP when the model has heads.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from specadvisor.advisor.facts import Facts
from specadvisor.advisor.validate import speculators_problem
from specadvisor.domain import DrafterProfile, DrafterRef, ModelProfile
from specadvisor.rulebase import DrafterEntry, MethodSpec, RuleBase, find_model_family, registry
from specadvisor.rulebase.contract import load_contract
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
    drafter: DrafterProfile,
    available: dict[str, MethodSpec],
    rb: RuleBase,
    version: str,
    warnings: list[str],
    platform: str | None,
    target_vocab: int | None = None,
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
    option = Option(available[method_id], drafter.path or drafter.id, drafter.block_size, drafter.default_k, "user")
    return _vocab_checked(option, drafter, target_vocab, rb, version, warnings)


HETEROGENEOUS_VOCAB = "use_heterogeneous_vocab"
"""The --speculative-config key that lets a draft model keep its own vocabulary (its methods: rules/methods.toml)."""


def _vocab_checked(option: Option, drafter: DrafterProfile, target_vocab: int | None, rb: RuleBase, version: str, warnings: list[str]) -> Option | None:
    """A draft model must share the target's vocabulary: vLLM raises "Target and draft model should have
    the same vocabulary size" (SpeculativeConfig.verify_equal_vocab_size_if_draft_model) unless the
    release has `use_heterogeneous_vocab` (0.25.0-0.33), which maps the shared tokens. The sizes come
    from the configs, else from the catalog (offline)."""
    mapped_by = rb.config_keys.get(HETEROGENEOUS_VOCAB)
    if mapped_by is None or option.method.vllm_method not in mapped_by.methods or not target_vocab:
        return option
    family = find_model_family(drafter.id, rb)
    draft_vocab = drafter.vocab_size or (family.vocab_size if family else None)
    if not draft_vocab or draft_vocab == target_vocab:
        return option
    contract = load_contract()
    key = contract.fact(f"key/{HETEROGENEOUS_VOCAB}", version)
    if key is None:
        first = contract.first(f"key/{HETEROGENEOUS_VOCAB}")
        later = f"; vLLM {first['since']} can map them with use_heterogeneous_vocab ({first['source']})" if first else ""
        warnings.append(
            f"Your draft model {drafter.id} has a {draft_vocab}-token vocabulary and the target {target_vocab}: vLLM {version} raises "
            f"'Target and draft model should have the same vocabulary size'; it is left out{later}."
        )
        return None
    option.extra_config[HETEROGENEOUS_VOCAB] = True
    option.notes.append(
        f"The draft model's vocabulary ({draft_vocab} tokens) differs from the target's ({target_vocab}): the config sets "
        f"use_heterogeneous_vocab (vLLM {version}, {key['source']}), which drafts only the tokens both share, with greedy draft sampling."
    )
    return option


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
        target_vocab = model.vocab_size or (facts.family.vocab_size if facts.family else None)
        option = _user_option(drafter, available, rb, version, warnings, facts_platform(facts), target_vocab)
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
            options[native.id] = Option(available[native.id], None, None, None, "native", notes=_mtp_unconfirmed(model, facts))
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


def _mtp_unconfirmed(model: ModelProfile, facts: Facts) -> list[str]:
    """MTP heads taken from the catalog for a checkpoint that is not the family's own (a third-party
    quantized re-upload): such uploads often drop the MTP layer (vllm#13704: DeepSeek-V3 AWQ, every
    draft rejected), and only the weight index can tell."""
    if not is_reupload(model, facts):
        return []
    return [
        f"MTP heads unconfirmed: {model.id} is not {facts.family.hf_id if facts.family else 'the original checkpoint'} but a re-upload, and quantized "
        "re-uploads often drop the MTP layer (vllm#13704: every draft rejected); run `specadvisor inspect` on it to read its weight index."
    ]


def is_reupload(model: ModelProfile, facts: Facts) -> bool:
    if model.mtp.confirmed_by_weights or facts.family is None or not facts.family.hf_id or model.source in ("local", "hf-cache", "hub"):
        return False
    return model.id.split("/")[0].lower() != facts.family.hf_id.split("/")[0].lower()
