"""The shapes of the rule base's TOML tables. extra="forbid": a misspelt key is an error, never ignored.

Each kind has an id (`key`) by which a later file (the user's) replaces an earlier one (shipped).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from specadvisor.rulebase.versions import is_version

Vendor = Literal["nvidia", "amd", "none"]
WorkloadName = Literal["chat", "code", "math", "rag", "agentic", "edit"]
Verdict = Literal["speculate", "careful", "unlikely"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _check_version(value: str | None) -> str | None:
    if value is not None and not is_version(value):
        raise ValueError(f"{value!r} is not a version like 0.20 or 0.33.0")
    return value


Platform = Literal["cuda", "rocm", "cpu"]


class OlderName(_Strict):
    """A per-family vLLM method name used before the canonical one existed (deepseek_mtp before mtp)."""

    name: str
    model_types: list[str] = Field(default_factory=list)  # config.json model_type values it serves
    families: list[str] = Field(default_factory=list)  # [[model]] ids it serves
    min_version: str | None = None  # first vLLM version accepting it for these models
    source: str = ""
    # "v0": served only by the V0 engine, which took no `method` for it: the config leaves `method`
    # out, V1's oracle hands it to V0 and V0 detects the drafter from the checkpoint (DeepSeek MTP on 0.8.5)
    engine: Literal["v1", "v0"] = "v1"

    _v1 = field_validator("min_version")(_check_version)


class MethodSpec(_Strict):
    """A speculative method as specadvisor offers it; `vllm_method` + `extra_config` is what vLLM sees.

    The method registry (specadvisor.rulebase.registry) answers every question about methods from
    these fields; no Python module outside it names a method.
    """

    id: str
    name: str
    display_name: str = ""  # short label for plans and tables ("P-EAGLE"); defaults to `name`
    vllm_method: str
    aliases: list[str] = Field(default_factory=list)  # other spellings users type (p-eagle)
    # a method id whose measured gains on a model speak for this one too (ngram_gpu drafts exactly like
    # ngram and only keeps async scheduling on, so it is at least as fast); its slowdowns do not
    gains_from: str = ""
    name_since: str | None = None  # first vLLM version accepting `vllm_method` itself (mtp: 0.11.0)
    older_names: list[OlderName] = Field(default_factory=list)  # what to send before `name_since`
    accepted_aliases: list[str] = Field(default_factory=list)  # deprecated names vLLM still accepts and rewrites; never sent
    speculators_types: list[str] = Field(default_factory=list)  # speculators_model_type values served with it
    # `specadvisor train` trains this method's drafter with Speculators' trainer of this speculator type
    # ("" : not trained here); its Speculators-format output is served with `vllm_method`
    trained_as: str = ""
    extracts_hidden_states: bool = False  # the method online training's server runs (no speculation)
    architecture_hints: list[str] = Field(default_factory=list)  # substrings of a drafter's architectures/model_type
    plain_model_fallback: bool = False  # any other language-model checkpoint drafts with this method
    forces_parallel: bool = False  # vLLM turns parallel_drafting on by itself (dflash, dspark)
    uses_native_heads: bool = False  # serves the target's own MTP heads
    block_n_offset: int | None = None  # N <= drafter block_size + offset (DFlash -1, DSpark 0)
    n_multiple_of_layers: bool = False  # N above the head count must be a multiple of it (MTP)
    n_optional: bool = False  # vLLM picks N itself when num_speculative_tokens is absent
    platforms: list[Platform] = Field(default_factory=lambda: list[Platform](["cuda", "rocm"]))
    platforms_since: dict[Platform, str] = Field(default_factory=dict)  # first vLLM version serving it there (cpu: 0.20.0)
    target_interface: str = ""  # the interface vLLM's target model class must implement (SupportsEagle3)
    drafter_share: float = Field(0.0, ge=0)  # drafter weights as a share of the target's (memory plan)
    source: str = ""  # where the method and its versions are documented (a URL)
    extra_config: dict[str, Any] = Field(default_factory=dict)  # e.g. P-EAGLE: parallel_drafting = true
    default_config: dict[str, Any] = Field(default_factory=dict)  # sensible starting keys (ngram lookup sizes)
    needs_drafter: bool = False
    model_optional: bool = False  # some targets serve it without a drafter (DSpark on DeepSeek-V4)
    drafting: Literal["autoregressive", "parallel", "lookup", "native"] = "autoregressive"
    min_version: str | None = None
    removed_in: str | None = None
    max_n: int | None = Field(None, ge=1)
    default_n_grid: list[int] = Field(default_factory=lambda: [1, 2, 3, 4])
    base_score: float = 1.0
    offer: bool = True  # False: accepted in configs but never proposed (internal or experimental methods)
    requires_packages: list[str] = Field(default_factory=list)
    caveats: list[str] = Field(default_factory=list)
    description: str = ""

    _v1 = field_validator("min_version", "removed_in", "name_since")(_check_version)

    @field_validator("platforms_since")
    @classmethod
    def _platform_versions(cls, since: dict[Platform, str]) -> dict[Platform, str]:
        for version in since.values():
            _check_version(version)
        return since

    @property
    def label(self) -> str:
        return self.display_name or self.name

    @field_validator("default_n_grid")
    @classmethod
    def _grid_positive(cls, grid: list[int]) -> list[int]:
        if not grid or any(n < 1 for n in grid):
            raise ValueError("default_n_grid must be a non-empty list of positive integers")
        return grid


class ConfigKeySpec(_Strict):
    """One `--speculative-config` key: which methods take it, in which vLLM versions, of what type."""

    id: str
    type: Literal["int", "float", "bool", "str", "list", "dict"]
    methods: list[str] = Field(default_factory=list)  # vLLM method names; empty = every method
    choices: list[str] = Field(default_factory=list)
    min_value: float | None = None
    max_value: float | None = None  # with min_value: the bounds within which an imported value may cross (specadvisor/crossing.py)
    min_version: str | None = None
    removed_in: str | None = None
    note: str = ""
    source: str = ""

    _v1 = field_validator("min_version", "removed_in")(_check_version)


class GpuSpec(_Strict):
    id: str
    name: str
    names: list[str] = Field(default_factory=list)  # aliases matched after lower-casing and dropping punctuation
    vendor: Literal["nvidia", "amd"]
    memory_gib: float = Field(gt=0)
    arch: str  # sm_90, gfx942, ...
    compute_capability: str | None = None
    gfx_target: str | None = None
    fp8: bool = False
    notes: str = ""


class WorkloadDefaults(_Strict):
    """What a workload looks like when the user does not say: from serving practice, with its source."""

    id: WorkloadName
    temperature: float = Field(ge=0)
    output_len: int = Field(ge=1)
    prompt_len: int = Field(ge=1)  # typical input tokens: sizes the KV cache
    source: str = ""
    notes: str = ""


class ModelFamily(_Strict):
    id: str
    hf_id: str = ""
    match: list[str] = Field(min_length=1)  # case-insensitive shell patterns on the model id or path
    params_b: float = Field(gt=0)
    active_params_b: float | None = Field(None, gt=0)
    moe: bool = False
    native_mtp: int = Field(0, ge=0)  # MTP layers in the checkpoint (0: none)
    mtp_needs_assistant: bool = False  # Gemma 4: MTP through a separate assistant checkpoint
    native_dspark: bool = False  # DeepSeek-V4: DSpark stages ship in the target checkpoint (method dspark, no drafter)
    context: int | None = None
    weights_dtype: str = ""  # how the published checkpoint stores weights (fp8, mxfp4); empty = bf16
    architecture: str = ""  # config.json's architectures[0]: the target-interface check (SupportsEagle3) needs it
    model_type: str = ""  # config.json's model_type
    text_model_type: str = ""  # its text_config's model_type where it differs (gemma3_text): vLLM's EAGLE-3 allow-list reads this one
    architecture_source: str = ""  # where architecture and model_type were read (the checkpoint's config.json, or the params.json vLLM adapts)
    vocab_size: int | None = Field(None, gt=0)  # config.json's vocab_size: a draft model must match it (vLLM raises otherwise)
    mla: bool = False  # multi-head latent attention (DeepSeek-V3 style): vLLM keeps the whole KV cache on every TP rank
    trust_remote_code: bool = False  # its config/tokenizer code ships in the checkpoint: vLLM needs --trust-remote-code (Kimi)
    temperature: float | None = Field(None, ge=0)  # the model card's recommended sampling temperature
    kv_kib_per_token: float | None = Field(None, gt=0)  # KV cache per token (all layers, bf16), when known
    kv_heads: int | None = Field(None, ge=1)  # config.json's num_key_value_heads (not for MLA): vLLM replicates them when TP exceeds the count
    source: str = ""
    notes: str = ""

    @property
    def active_b(self) -> float:
        return self.active_params_b or self.params_b


class DrafterEntry(_Strict):
    """A published drafter for a target (section D of the published results)."""

    drafter: str
    target: str
    serves: list[str] = Field(default_factory=list)  # more targets it drafts for (shell patterns on the model id): PARD drafters serve a family
    method: str  # vLLM method name
    parallel_drafting: bool = False
    block_size: int | None = Field(None, ge=2)
    max_n: int | None = Field(None, ge=1)  # the drafter's own limit (a single-token throughput head: 1)
    variant: Literal["", "short-context", "long-context", "throughput"] = ""
    params_b: float | None = Field(None, gt=0)  # the drafter's own parameter count (billions), for the memory plan
    weights_dtype: str = ""  # how the drafter checkpoint stores weights (fp8, ...); empty = bf16
    # The checkpoint's format: "" for a native vLLM/EAGLE checkpoint, "speculators/<type>" for a
    # Speculators-format one (its speculators_model_type), which a vLLM release loads only once its
    # contract lists that fact (speculators/eagle3 from 0.10.1.1).
    format: str = Field("", pattern=r"^(speculators/[a-z0-9_]+)?$")
    source: str
    date: str = ""
    notes: str = ""

    @property
    def id(self) -> str:
        return self.drafter

    @property
    def speculators_type(self) -> str | None:
        return self.format.removeprefix("speculators/") or None


class Evidence(_Strict):
    id: str
    summary: str
    target: str = ""
    method: str = ""  # method id (rules/methods.toml)
    speedup_low: float | None = None
    speedup_high: float | None = None
    dataset: str = ""
    n: str = ""
    hardware: str = ""
    concurrency: str = ""
    versus: str = "no speculation"  # what the speedup is relative to; only "no speculation" sets expectations
    workload: list[WorkloadName] | None = None  # a measurement speaks for these workloads only (None: any)
    gpus: list[str] = Field(default_factory=list)  # GPU catalog ids it was measured on: a same-model, same-GPU result outranks rule priors
    best_n: int | None = Field(None, ge=1)  # the N at which the measured speedup peaked: the advice starts this method there on this model
    source: str
    date: str = ""


class RuleWhen(_Strict):
    """Every given condition must hold (AND). Absent conditions do not constrain."""

    vendor: list[Vendor] | None = None
    gpu_memory_gib_min: float | None = None
    gpu_memory_gib_max: float | None = None
    gpu_count_min: int | None = None
    model_family: list[str] | None = None
    model_known: bool | None = None
    params_b_min: float | None = None
    params_b_max: float | None = None
    active_params_b_min: float | None = None
    active_params_b_max: float | None = None
    moe: bool | None = None
    native_mtp: bool | None = None
    has_published_drafter: bool | None = None
    user_drafter: bool | None = None
    workload: list[WorkloadName] | None = None
    concurrency_min: int | None = None
    concurrency_max: int | None = None
    output_len_min: int | None = None
    output_len_max: int | None = None
    temperature_min: float | None = None
    temperature_max: float | None = None
    vllm_version_min: str | None = None
    vllm_version_below: str | None = None
    willing_to_train: bool | None = None

    _v1 = field_validator("vllm_version_min", "vllm_version_below")(_check_version)


class RuleThen(_Strict):
    about: list[str] = Field(default_factory=list)  # method ids the rule's reason concerns (default: those it changes, else all)
    score: dict[str, float] = Field(default_factory=dict)  # method id -> added to its score
    exclude: list[str] = Field(default_factory=list)
    n_grid: dict[str, list[int]] = Field(default_factory=dict)
    config: dict[str, dict[str, Any]] = Field(default_factory=dict)  # method id -> extra config keys
    warnings: list[str] = Field(default_factory=list)
    verdict: Verdict | None = None
    suggest_training: bool = False


class Rule(_Strict):
    id: str
    why: str
    evidence: list[str] = Field(default_factory=list)
    when: RuleWhen = Field(default_factory=RuleWhen)
    then: RuleThen = Field(default_factory=RuleThen)


KINDS: dict[str, type[BaseModel]] = {
    "method": MethodSpec,
    "config_key": ConfigKeySpec,
    "gpu": GpuSpec,
    "model": ModelFamily,
    "drafter": DrafterEntry,
    "evidence": Evidence,
    "rule": Rule,
    "workload": WorkloadDefaults,
}
"""TOML array-of-tables name -> model. Any rules file may hold any of these kinds."""
