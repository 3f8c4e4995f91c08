"""The method registry: every question about a speculative method, answered from rules/methods.toml.

CLI validation, sweep planning, the advisor, drafter inspection and the engine probe all ask here,
so adding a method (or a vLLM rename) is one TOML table. Names are matched case-insensitively on
the id, its aliases, its display name, and the vLLM names it is sent as (current and older).
"""

from __future__ import annotations

from typing import Any

from specadvisor.errors import InputError
from specadvisor.rulebase.contract import load_contract
from specadvisor.rulebase.loader import RuleBase, default_rulebase
from specadvisor.rulebase.schema import MethodSpec, OlderName
from specadvisor.rulebase.versions import effective_version, in_range, parse_version


def _rb(rb: RuleBase | None) -> RuleBase:
    return rb if rb is not None else default_rulebase()


def _key(name: str) -> str:
    return str(name).strip().lower()


def _spellings(spec: MethodSpec) -> list[str]:
    return [spec.id, *spec.aliases, spec.display_name]


def get(name: str, rb: RuleBase | None = None) -> MethodSpec | None:
    """The method a user or config names: an id or alias first, then a vLLM method name.

    A vLLM name shared by several methods (eagle3 is EAGLE-3 and P-EAGLE) resolves to the one
    without extra keys, as vLLM itself would serve it.
    """
    rb = _rb(rb)
    wanted = _key(name)
    if not wanted:
        return None
    for spec in rb.methods.values():
        if wanted in {_key(s) for s in _spellings(spec) if s}:
            return spec
    return by_vllm_name(wanted, parallel=False, rb=rb)


def require(name: str, vllm_version: str | None = None, rb: RuleBase | None = None) -> MethodSpec:
    """get(), or a one-line InputError listing the known methods (and the version bound when that is why)."""
    rb = _rb(rb)
    spec = get(name, rb)
    if spec is None:
        raise InputError(f"unknown method {name!r}", hint=f"known methods: {', '.join(known_methods(rb=rb))}")
    if vllm_version is not None:
        problem = unavailable_reason(spec, vllm_version)
        if problem:
            raise InputError(f"method {name!r}: {problem}", hint="pick another method or another vLLM version")
    return spec


def default_rulebase_methods(rb: RuleBase | None = None) -> list[MethodSpec]:
    """Every method table, in file order."""
    return list(_rb(rb).methods.values())


def known_methods(vllm_version: str | None = None, rb: RuleBase | None = None, *, include_aliases: bool = False) -> list[str]:
    """Method ids users may pass (offered or not), optionally only those this vLLM version serves."""
    rb = _rb(rb)
    names = []
    for spec in rb.methods.values():
        if vllm_version is not None and not available(spec, vllm_version):
            continue
        names.append(spec.id)
        if include_aliases:
            names.extend(spec.aliases)
    return names


def display_name(name: str, rb: RuleBase | None = None) -> str:
    """Short label for tables and plans ("P-EAGLE"); the name itself when unknown."""
    spec = get(name, rb)
    return spec.label if spec else str(name)


def available(spec: MethodSpec, vllm_version: str | None) -> bool:
    return in_range(vllm_version, spec.min_version, spec.removed_in)


def unavailable_reason(spec: MethodSpec, vllm_version: str | None) -> str | None:
    if available(spec, vllm_version):
        return None
    shown = effective_version(vllm_version)
    if spec.removed_in and parse_version(shown) >= parse_version(spec.removed_in):
        return f"{spec.label} was removed in vLLM {spec.removed_in} (target version {shown})"
    return f"{spec.label} needs vLLM >= {spec.min_version} (target version {shown})"


def methods_for_version(vllm_version: str | None, rb: RuleBase | None = None) -> dict[str, MethodSpec]:
    """Methods (by id) that this vLLM version serves; None means the newest version the rules know."""
    rb = _rb(rb)
    return {key: m for key, m in rb.methods.items() if available(m, vllm_version)}


# ------------------------------------------------------------------ vLLM method names by version


def _name_current(spec: MethodSpec, vllm_version: str | None) -> bool:
    return spec.name_since is None or in_range(vllm_version, spec.name_since, None)


def vllm_name(spec: MethodSpec, vllm_version: str | None, *, model_type: str | None = None, family: str | None = None) -> str | None:
    """The `method` value this vLLM version accepts for this method on this model; None if there is none.

    Before `name_since` (mtp before 0.11) the family's own older name is used, picked by the model's
    config model_type or its catalog family.
    """
    if not available(spec, vllm_version):
        return None
    if _name_current(spec, vllm_version):
        return spec.vllm_method
    older = older_name(spec, vllm_version, model_type=model_type, family=family)
    return older.name if older else None


def older_name(spec: MethodSpec, vllm_version: str | None, *, model_type: str | None = None, family: str | None = None) -> OlderName | None:
    """The per-family entry this version serves the method through on this model (before `name_since`),
    or None; its `engine` says whether the config names the method (V1) or leaves it out (V0)."""
    for older in spec.older_names:
        if ((model_type and model_type in older.model_types) or (family and family in older.families)) and in_range(vllm_version, older.min_version, None):
            return older
    return None


def sends_no_method(spec: MethodSpec, vllm_version: str | None, *, model_type: str | None = None, family: str | None = None) -> bool:
    """True when this version serves the method only on its V0 engine, from a config without `method`
    (DeepSeek MTP on 0.8.5: V0 detects deepseek_mtp from the checkpoint it fills in)."""
    if not available(spec, vllm_version) or _name_current(spec, vllm_version):
        return False
    older = older_name(spec, vllm_version, model_type=model_type, family=family)
    return older is not None and older.engine == "v0"


def _aliases_in(spec: MethodSpec, vllm_version: str | None) -> list[str]:
    """The deprecated aliases this release's method list has (each family's name arrived in its own
    release: vllm_contract.json says which)."""
    listed = load_contract().ids("method", vllm_version)
    return [alias for alias in spec.accepted_aliases if alias in listed]


def vllm_names(vllm_version: str | None, rb: RuleBase | None = None) -> list[str]:
    """Every `method` value this vLLM version accepts (current names and still-accepted older ones)."""
    names: set[str] = set()
    for spec in methods_for_version(vllm_version, rb).values():
        if _name_current(spec, vllm_version):
            names.add(spec.vllm_method)
            names.update(_aliases_in(spec, vllm_version))
        names.update(older.name for older in spec.older_names if older.engine == "v1" and in_range(vllm_version, older.min_version, None))
    return sorted(names)


def served_methods(vllm_version: str | None, platform: str | None = None, rb: RuleBase | None = None) -> dict[str, MethodSpec]:
    """Methods (by id) this vLLM version serves on the platform (cuda, rocm, cpu; None: any): what
    advise considers and what detect lists, so the two never disagree."""
    return {key: spec for key, spec in methods_for_version(vllm_version, rb).items() if runs_on(spec, platform, vllm_version)}


def served_names(vllm_version: str | None, rb: RuleBase | None = None, *, platform: str | None = None) -> list[str]:
    """The method names to tell a user this version serves (on `platform`): the current name of each
    method, or its older per-family names before the current one existed (deprecated aliases left out)."""
    names: set[str] = set()
    for spec in served_methods(vllm_version, platform, rb).values():
        if _name_current(spec, vllm_version):
            names.add(spec.vllm_method)
        else:
            names.update(older.name for older in spec.older_names if older.engine == "v1" and in_range(vllm_version, older.min_version, None))
    return sorted(names)


def canonical_vllm_name(method: str, rb: RuleBase | None = None) -> str:
    """An older per-family name (deepseek_mtp) as the canonical vLLM method (mtp); others unchanged."""
    for spec in _rb(rb).methods.values():
        if any(older.name == method for older in spec.older_names) or method in spec.accepted_aliases:
            return spec.vllm_method
    return method


def specs_for_vllm_name(method: str, rb: RuleBase | None = None) -> list[MethodSpec]:
    canonical = canonical_vllm_name(_key(method), rb)
    return [m for m in _rb(rb).methods.values() if m.vllm_method == canonical]


def by_vllm_name(method: str, parallel: bool = False, rb: RuleBase | None = None) -> MethodSpec | None:
    """The method id for a served (method, parallel_drafting) pair: eagle3 + parallel -> P-EAGLE.
    Remembered per rule base: every arm's name asks it (a 100,000-arm verdict names each compared arm
    twice), and each answer walks the rule base's methods twice."""
    rb = _rb(rb)
    key = (id(rb), method, bool(parallel))
    hit = _BY_VLLM_NAME.get(key)
    if hit is not None and hit[0] is rb:
        return hit[1]
    specs = specs_for_vllm_name(method, rb)
    exact = [m for m in specs if bool(m.extra_config.get("parallel_drafting", False)) == bool(parallel)]
    chosen = exact or specs
    if len(_BY_VLLM_NAME) >= _BY_VLLM_NAME_MAX:  # a bundle may bring any number of method names
        _BY_VLLM_NAME.clear()
    _BY_VLLM_NAME[key] = (rb, chosen[0] if chosen else None)
    return chosen[0] if chosen else None


# (id(rule base), method, parallel) -> (that rule base, the answer): the rule base is kept so that its
# id cannot be reused by another one while the entry stands.
_BY_VLLM_NAME: dict[tuple[int, str, bool], tuple[RuleBase, MethodSpec | None]] = {}
_BY_VLLM_NAME_MAX = 1024


def vllm_name_problem(method: str, vllm_version: str | None, rb: RuleBase | None = None) -> str | None:
    """Why this version rejects a `method` value; None when it accepts it."""
    rb = _rb(rb)
    specs = specs_for_vllm_name(method, rb)
    if not specs:
        return f"unknown method '{method}' (known: {', '.join(sorted({m.vllm_method for m in rb.methods.values()}))})"
    if method in vllm_names(vllm_version, rb):
        return None
    shown = effective_version(vllm_version)
    spec = specs[0]
    if not any(available(m, vllm_version) for m in specs):
        if spec.removed_in and parse_version(shown) >= parse_version(spec.removed_in):
            return f"method '{method}' was removed in vLLM {spec.removed_in} (target version {shown})"
        return f"method '{method}' needs vLLM >= {spec.min_version} (target version {shown})"
    older = ", ".join(f"'{o.name}'" for o in spec.older_names)
    return f"method '{method}' needs vLLM >= {spec.name_since} (target version {shown}); older releases take the family's own name ({older})"


# ------------------------------------------------------------------ what a method needs and allows


def needs_drafter(name: str, rb: RuleBase | None = None) -> bool:
    """True when a config for this method must name a drafter `model` (False for unknown names)."""
    spec = get(name, rb)
    return bool(spec and spec.needs_drafter and not spec.model_optional)


def resolve(name: str, extra: dict[str, Any] | None = None, rb: RuleBase | None = None) -> tuple[str, dict[str, Any]]:
    """The vLLM method and keys for a user-typed method ("p-eagle" -> eagle3 + parallel_drafting).

    Unknown names pass through lower-cased so that vLLM (or validation) reports them.
    """
    extra = dict(extra or {})
    spec = get(name, rb)
    if spec is None:
        return _key(name), extra
    if _key(name) != _key(spec.id) and _key(name) in {o.name for o in spec.older_names}:
        return _key(name), {**spec.extra_config, **extra}
    return spec.vllm_method, {**spec.extra_config, **extra}


def is_parallel(method: str, config: dict[str, Any], rb: RuleBase | None = None) -> bool:
    """Whether vLLM drafts all N tokens in one pass for this config."""
    if config.get("parallel_drafting"):
        return True
    return any(m.forces_parallel for m in specs_for_vllm_name(method, rb))


def config_label(config: dict[str, Any] | None, rb: RuleBase | None = None) -> str:
    """Display name of the method a speculative config runs ("P-EAGLE"); "baseline" for None."""
    if config is None:
        return "baseline"
    method = str(config.get("method"))
    spec = by_vllm_name(method, bool(config.get("parallel_drafting")), rb)
    return spec.label if spec else method


def n_limit(method: str, block_size: int | None, rb: RuleBase | None = None) -> int | None:
    """Largest N vLLM accepts for this method and drafter block size; None when unbounded."""
    limits = []
    for spec in specs_for_vllm_name(method, rb):
        if spec.max_n:
            limits.append(spec.max_n)
        if block_size and spec.block_n_offset is not None:
            limits.append(block_size + spec.block_n_offset)
    return min(limits) if limits else None


def n_must_divide_layers(method: str, rb: RuleBase | None = None) -> bool:
    return any(m.n_multiple_of_layers for m in specs_for_vllm_name(method, rb))


def n_optional(method: str, rb: RuleBase | None = None) -> bool:
    return any(m.n_optional for m in specs_for_vllm_name(method, rb))


def drafts_from_prompt(method: str, rb: RuleBase | None = None) -> bool:
    specs = specs_for_vllm_name(method, rb)
    return bool(specs) and all(m.drafting == "lookup" for m in specs)


def native_heads_method(rb: RuleBase | None = None) -> MethodSpec | None:
    return next((m for m in _rb(rb).methods.values() if m.uses_native_heads), None)


def in_checkpoint_method(rb: RuleBase | None = None) -> MethodSpec | None:
    """The drafter method some targets ship inside their own checkpoint (DSpark on DeepSeek-V4)."""
    return next((m for m in _rb(rb).methods.values() if m.model_optional), None)


def trainable(rb: RuleBase | None = None) -> MethodSpec:
    """The method whose drafter `specadvisor train` trains (EAGLE-3: Speculators' most mature online path)."""
    for spec in _rb(rb).methods.values():
        if spec.trained_as:
            return spec
    raise InputError("the rules define no method specadvisor can train", hint="restore rules/methods.toml")


def hidden_state_extraction(rb: RuleBase | None = None) -> MethodSpec:
    """The method a training server runs: vLLM writes each request's hidden states for the trainer."""
    for spec in _rb(rb).methods.values():
        if spec.extracts_hidden_states:
            return spec
    raise InputError("the rules define no hidden-state extraction method", hint="restore rules/methods.toml")


def model_free(platform: str | None = None, rb: RuleBase | None = None) -> MethodSpec:
    """The first offered method that drafts from the prompt alone and runs on the platform (n-gram):
    what runs anywhere, with no drafter, such as the CPU demo."""
    for spec in _rb(rb).methods.values():
        if spec.drafting == "lookup" and spec.offer and not spec.requires_packages and runs_on(spec, platform):
            return spec
    raise InputError("the rules define no model-free method", hint="restore rules/methods.toml")


def runs_on(spec: MethodSpec, platform: str | None, vllm_version: str | None = None) -> bool:
    """Whether this vLLM version (None: the newest known) serves the method on the platform (cuda,
    rocm, cpu); unknown platforms pass. The CPU build speculates only from 0.20 (`platforms_since`)."""
    if platform not in ("cuda", "rocm", "cpu"):
        return True
    return platform in spec.platforms and in_range(vllm_version, spec.platforms_since.get(platform), None)


def platform_problem(spec: MethodSpec, platform: str | None, vllm_version: str | None) -> str | None:
    """Why vLLM does not serve this method on the platform at this version; None when it does."""
    if runs_on(spec, platform, vllm_version):
        return None
    shown = effective_version(vllm_version)
    if platform in spec.platforms:
        return f"vLLM serves {spec.label} on {platform} from {spec.platforms_since[platform]} on (target version {shown})"
    return f"vLLM {shown} does not serve {spec.label} on {platform} (it runs on {', '.join(spec.platforms)})"


# ------------------------------------------------------------------ recognising drafter checkpoints


def from_speculators(model_type: str, rb: RuleBase | None = None) -> tuple[str | None, bool]:
    """(vLLM method, parallel_drafting) for a speculators_model_type; (None, False) if vLLM cannot serve it."""
    wanted = _key(model_type)
    for spec in _rb(rb).methods.values():
        if wanted in spec.speculators_types:
            return spec.vllm_method, bool(spec.extra_config.get("parallel_drafting")) or spec.forces_parallel
    return None, False


def from_architecture(architectures: list[str], model_type: str | None, rb: RuleBase | None = None) -> tuple[str | None, str, bool]:
    """(algorithm, vLLM method, parallel_drafting) of a non-speculators drafter, from its names.

    The longest matching hint wins ("eagle3" over "eagle", later tables on ties); a plain language model falls back to the
    method marked plain_model_fallback (draft_model).
    """
    rb = _rb(rb)
    text = " ".join([*(architectures or []), str(model_type or "")]).lower()
    best: tuple[int, str, MethodSpec] | None = None
    for spec in rb.methods.values():
        for hint in spec.architecture_hints:
            if hint in text and (best is None or len(hint) >= best[0]):  # ties: the later table (peagle over eagle3)
                best = (len(hint), hint, spec)
    if best is not None:
        spec = best[2]
        return best[1], spec.vllm_method, bool(spec.extra_config.get("parallel_drafting")) or spec.forces_parallel
    fallback = next((m for m in rb.methods.values() if m.plain_model_fallback), None)
    return None, (fallback.vllm_method if fallback else ""), False
