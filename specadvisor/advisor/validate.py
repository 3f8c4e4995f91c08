"""Check a --speculative-config against what one vLLM version accepts, before any server starts.

vLLM rejects a bad config only after loading the target (minutes on big models); checking here
turns that into an immediate, specific message. Two sources agree: the method registry
(rules/methods.toml, which users may extend) and the contract read from vLLM's own wheels
(rules/vllm_contract.json), which has the last word on names, keys, the CPU runner and targets.
"""

from __future__ import annotations

from typing import Any

from specadvisor.rulebase import RuleBase, config_keys_for, default_rulebase, registry
from specadvisor.rulebase.contract import Contract, load_contract
from specadvisor.rulebase.versions import effective_version, parse_version

_REJECTED = {
    "tensor_parallel_size": "vLLM rejects it inside the speculative config: use 'draft_tensor_parallel_size'",
    "disable_by_batch_size": "removed from vLLM: use 'num_speculative_tokens_per_batch_size'",
    "acceptance_method": "removed from vLLM: use 'rejection_sample_method'",
    "speculative_token_tree": "removed from vLLM",
}
"""Keys people copy from old guides, with what to write instead."""

_TYPES = {"int": (int,), "float": (int, float), "bool": (bool,), "str": (str,), "list": (list, tuple), "dict": (dict,)}


def _type_ok(value: Any, type_name: str) -> bool:
    if type_name in ("int", "float") and isinstance(value, bool):
        return False
    return isinstance(value, _TYPES[type_name])


def _key_problems(config: dict[str, Any], method: str, version: str | None, rb: RuleBase) -> list[str]:
    accepted = config_keys_for(method, version, rb)
    problems = []
    for key, value in config.items():
        spec = accepted.get(key)
        if spec is None:
            if key in _REJECTED:
                problems.append(f"key '{key}': {_REJECTED[key]}")
            elif key in rb.config_keys:
                note = rb.config_keys[key].note
                problems.append(f"key '{key}' is not accepted with method '{method}' in vLLM {effective_version(version)}" + (f" ({note})" if note else ""))
            else:
                problems.append(f"unknown key '{key}' (vLLM rejects unknown --speculative-config keys)")
            continue
        if not _type_ok(value, spec.type):
            problems.append(f"'{key}' must be {spec.type}, got {value!r}")
            continue
        if spec.choices and value not in spec.choices:
            problems.append(f"'{key}' must be one of {', '.join(spec.choices)}, got {value!r}")
        if spec.min_value is not None and value < spec.min_value:
            problems.append(f"'{key}' must be >= {spec.min_value:g}, got {value!r}")
    return problems


def _n_problems(config: dict[str, Any], method: str, rb: RuleBase, mtp_layers: int | None, block_size: int | None) -> list[str]:
    n = config.get("num_speculative_tokens")
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        return []
    problems = []
    limit = registry.n_limit(method, block_size, rb)
    if limit is not None and n > limit:
        problems.append(f"num_speculative_tokens={n} exceeds the maximum {limit} for '{method}'")
    if registry.n_must_divide_layers(method, rb) and mtp_layers and n > mtp_layers and n % mtp_layers:
        problems.append(f"num_speculative_tokens={n} for MTP must be <= {mtp_layers} or a multiple of the {mtp_layers} MTP layers")
    return problems


def _where(contract: Contract, fact_id: str) -> str:
    spans = contract.facts.get(fact_id, [])
    return f"vLLM {spans[0]['since']}, {spans[0]['source']}" if spans else "no vLLM release read"


def speculators_problem(speculators_type: str | None, vllm_version: str | None, contract: Contract | None = None) -> str | None:
    """Why this release cannot load a Speculators-format drafter of this type (its config converter
    came with vllm#21345: eagle3 from 0.10.1.1), or None. A version older than every release read is
    not judged."""
    contract = contract or load_contract()
    release = contract.release_for(vllm_version)
    if not speculators_type or release is None or speculators_type in contract.ids("speculators", release):
        return None
    first = contract.facts.get(f"speculators/{speculators_type}")
    later = f"; it can from vLLM {first[0]['since']}" if first else ""
    return f"vLLM {effective_version(vllm_version)} cannot load a speculators-format '{speculators_type}' drafter{later}"


def host_problems(
    method: str,
    vllm_version: str | None,
    target_architecture: str | None,
    target_model_type: str | None,
    target_interface: str,
    contract: Contract,
) -> list[str]:
    """Why this target cannot host the method's drafter in this release, each with the vLLM file and
    release it was read at: the target class must implement the interface the drafter attaches
    through (SupportsEagle3; before it existed, define get_eagle3_aux_hidden_state_layers), and its
    text model_type must pass SpeculativeConfig's allow-list where the release has one (0.8.5-0.21:
    Llama only in 0.9.2, no Gemma 3 in 0.20). An unknown architecture or model_type is not judged
    here: the advisor says the advice is unverified."""
    shown = effective_version(vllm_version)
    release = contract.release_for(vllm_version)
    if release is None:
        return []
    problems = []
    if target_interface and target_architecture:
        hosts = contract.eagle3_hosts(release) if target_interface == "SupportsEagle3" else contract.ids(target_interface, release)
        if hosts and target_architecture not in hosts:
            first = contract.first(f"{target_interface}/{target_architecture}")
            later = f"; it does from vLLM {first['since']} ({first['source']})" if first else ""
            problems.append(f"vLLM {shown}'s {target_architecture} does not implement {target_interface}, so this drafter cannot attach to it{later}")
    allow = contract.aux_hidden_allow(method, release)
    if allow and target_model_type and not any(part in target_model_type for part in allow):
        span = next(iter(allow.values()))
        takes = next((r for r in contract.releases if parse_version(r) > parse_version(release) and not _blocks(contract, method, target_model_type, r)), None)
        problems.append(
            f"vLLM {shown} serves {method} only for target model types containing {', '.join(sorted(allow))} "
            f"({span['source']} in vLLM {shown}: {span.get('message', '')!r}); this target's is {target_model_type}"
            + (f"; vLLM {takes} takes it" if takes else "")
        )
    return problems


def _blocks(contract: Contract, method: str, model_type: str, release: str) -> bool:
    allow = contract.aux_hidden_allow(method, release)
    return bool(allow) and not any(part in model_type for part in allow)


def _assistant_problems(model_types: list[str], vllm_version: str | None) -> list[str]:
    """MTP through a separate assistant checkpoint (Gemma 4) needs the release to map that
    checkpoint's model_type to an MTP drafter (hf_config_override: gemma4_assistant from 0.21.0)."""
    contract = load_contract()
    if contract.release_for(vllm_version) is None or any(contract.fact(f"mtp_target/{t}", vllm_version) for t in model_types):
        return []
    firsts = [span for t in model_types if (span := contract.first(f"mtp_target/{t}"))]
    later = f"; it does from vLLM {firsts[0]['since']} ({firsts[0]['source']})" if firsts else ""
    return [f"vLLM {effective_version(vllm_version)} has no MTP path for an assistant checkpoint ({', '.join(model_types)}){later}"]


def contract_problems(
    config: dict[str, Any],
    vllm_version: str | None,
    *,
    platform: str | None = None,
    target_architecture: str | None = None,
    target_interface: str = "",
    target_model_type: str | None = None,
    speculators_type: str | None = None,
    contract: Contract | None = None,
) -> list[str]:
    """What the release's own source rejects: the method name, each key and its value, the CPU
    runner's guard, and a target class without the interface the method's drafter attaches through
    (SupportsEagle3), and a speculators-format drafter (`speculators_model_type`) the release cannot
    convert (none before 0.10.1). A version older than every release read is not judged."""
    contract = contract or load_contract()
    shown = effective_version(vllm_version)
    release = contract.release_for(vllm_version)
    if release is None:
        return []
    method = str(config.get("method"))
    problems = []
    if method not in contract.methods(release):
        refusal = contract.fact(f"refused/{method}", release)
        why = f"its arg_utils refuses it: {refusal['message']!r}" if refusal else "it is not in its method list"
        problems.append(f"vLLM {shown} does not take method '{method}' ({why})")
    for key, value in config.items():
        if contract.fact(f"key/{key}", release) is None:
            problems.append(f"vLLM {shown} has no speculative-config key '{key}' (SpeculativeConfig; first: {_where(contract, f'key/{key}')})")
            continue
        choices = contract.choices(key, release)
        if choices and isinstance(value, str) and value not in choices:
            problems.append(f"vLLM {shown} takes '{key}' as one of {', '.join(choices)}, got {value!r}")
    if platform == "cpu" and not contract.cpu_speculates(release):
        guard = contract.fact("cpu/refuses_speculation", release)
        where = f" ({guard['source']}: {guard['message']!r})" if guard else ""
        problems.append(f"vLLM {shown}'s CPU build runs no speculative decoding{where}; it does from 0.20.0")
    unloadable = speculators_problem(speculators_type, vllm_version, contract)
    if unloadable:
        problems.append(unloadable)
    problems += host_problems(method, vllm_version, target_architecture, target_model_type, target_interface, contract)
    return problems


def validate_spec_config(
    config: dict[str, Any],
    vllm_version: str | None,
    *,
    rulebase: RuleBase | None = None,
    mtp_layers: int | None = None,
    block_size: int | None = None,
    platform: str | None = None,
    target_architecture: str | None = None,
    target_model_type: str | None = None,
    speculators_type: str | None = None,
    implied_method: str | None = None,
    drafter_checkpoint: bool = False,
) -> list[str]:
    """Problems that would make this vLLM version reject the config or serve it wrongly; [] = valid.

    `platform` (cuda, rocm, cpu), `target_architecture` and `target_model_type` (config.json's, the
    text config's model_type, when known) and `speculators_type` (a Speculators-format drafter's
    speculators_model_type) add the platform, target and drafter-format checks. `implied_method` is
    the method a V0-era config leaves out on purpose (DeepSeek MTP on 0.8.5: V0 detects it)."""
    rb = rulebase or default_rulebase()
    if not isinstance(config, dict):
        return ["the speculative config must be a JSON object"]
    method = config.get("method")
    if method is None and implied_method:
        return _key_problems(config, implied_method, vllm_version, rb) + _n_problems(config, implied_method, rb, None, None)
    if not isinstance(method, str) or not method:
        return ["no 'method': name it explicitly, or vLLM guesses it from the drafter's name"]
    problem = registry.vllm_name_problem(method, vllm_version, rb)
    if problem:
        return [problem]
    problems = _key_problems(config, method, vllm_version, rb)
    spec = registry.by_vllm_name(method, bool(config.get("parallel_drafting")), rb)
    on_platform = registry.platform_problem(spec, platform, vllm_version) if spec else None
    if on_platform:
        problems.append(on_platform)
    found = contract_problems(
        config,
        vllm_version,
        platform=platform,
        target_architecture=target_architecture,
        target_interface=spec.target_interface if spec else "",
        target_model_type=target_model_type,
        speculators_type=speculators_type,
    )
    problems += [p for p in found if not (on_platform and "CPU build" in p)]
    if spec is not None and spec.uses_native_heads and drafter_checkpoint:
        problems += _assistant_problems(spec.architecture_hints, vllm_version)
    specs = registry.specs_for_vllm_name(method, rb)
    needs_model = all(m.needs_drafter and not m.model_optional for m in specs)
    if needs_model and not config.get("model"):
        problems.append(f"method '{method}' needs a drafter 'model'")
    if registry.drafts_from_prompt(method, rb) and "model" in config:
        problems.append(f"method '{method}' drafts from the prompt and takes no 'model'")
    if "num_speculative_tokens" not in config and not registry.n_optional(method, rb):
        problems.append("set 'num_speculative_tokens' (the number of draft tokens N)")
    problems += _n_problems(config, method, rb, mtp_layers, block_size)
    low, high = config.get("prompt_lookup_min"), config.get("prompt_lookup_max")
    if isinstance(low, int) and isinstance(high, int) and low > high:
        problems.append(f"prompt_lookup_min={low} must be <= prompt_lookup_max={high}")
    synthetic = [k for k in ("synthetic_acceptance_rates", "synthetic_acceptance_length") if k in config]
    if synthetic and config.get("rejection_sample_method") != "synthetic":
        problems.append(f"{', '.join(synthetic)} only work with rejection_sample_method 'synthetic'")
    schedule = config.get("num_speculative_tokens_per_batch_size")
    if isinstance(schedule, (list, tuple)):
        for row in schedule:
            if not (isinstance(row, (list, tuple)) and len(row) == 3 and all(isinstance(v, int) and not isinstance(v, bool) for v in row)):
                problems.append("num_speculative_tokens_per_batch_size rows must be [start, end, k] integers")
                break
    return problems
