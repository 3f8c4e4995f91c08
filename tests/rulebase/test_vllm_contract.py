"""The hand-kept bounds in rules/methods.toml agree with rules/vllm_contract.json, the contract read
from vLLM's own wheels, at every release it covers. When a new release is extracted, a failure here
names the method or key whose bound the release moved."""

from __future__ import annotations

import pytest

from specadvisor.rulebase import load_rulebase, registry
from specadvisor.rulebase.contract import load_contract
from specadvisor.rulebase.schema import MethodSpec
from specadvisor.rulebase.versions import in_range

CONTRACT = load_contract()
RELEASES = CONTRACT.releases

DRAFTER_CLASS = {"medusa": "drafter_arch/MedusaModel", "mlp_speculator": "drafter_arch/MLPSpeculatorPreTrainedModel"}
"""Methods whose drafter class must still be in vLLM's model registry for the name to do anything."""

MTP_TARGET = {
    "deepseek_v3": "mtp_target/deepseek_v3",
    "mimo": "mtp_target_arch/MiMoForCausalLM",
    "glm4_moe": "mtp_target_arch/Glm4MoeForCausalLM",
    "qwen3_next": "mtp_target/qwen3_next",
    "ernie4_5_moe": "mtp_target/ernie4_5_moe",
}
"""How SpeculativeConfig.hf_config_override recognises each target of an older per-family MTP name."""

CPU_KERNEL = {"dflash": "cpu/kernel/copy_and_expand_dflash_inputs_kernel"}
"""Methods the CPU build serves only once it has its own version of the proposer's kernel."""

CHOICES_NARROWED = {"rejection_sample_method", "draft_sample_method"}
"""Keys methods.toml accepts from a later release than vLLM has them: their values changed
(strict -> standard, gumbel -> probabilistic), and methods.toml lists only today's."""

INTERNAL_KEYS = {"target_model_config", "target_parallel_config", "draft_model_config", "draft_parallel_config", "tensor_parallel_size"}
"""SpeculativeConfig fields the engine fills in (and tensor_parallel_size, kept only to reject it)."""


@pytest.fixture(scope="module")
def rb():
    return load_rulebase(include_user=False)


def _v0_serves(spec: MethodSpec, version: str) -> bool:
    """A V0-engine entry (DeepSeek MTP on 0.8.5): V0 still exists (the V1 oracle is there to hand the
    config over), vLLM rewrites the target to its MTP drafter and fills the drafter in without `model`."""
    return any(
        o.engine == "v0"
        and CONTRACT.ids("v1_engine", version)
        and all(CONTRACT.fact(MTP_TARGET[t], version) and CONTRACT.fact(f"fills_drafter_for/{t}", version) for t in o.model_types)
        for o in spec.older_names
    )


def _contract_serves(spec: MethodSpec, version: str) -> bool:
    methods = CONTRACT.methods(version)
    named = spec.vllm_method in methods or any(o.name in methods for o in spec.older_names) or _v0_serves(spec, version)
    keys = all(CONTRACT.fact(f"key/{key}", version) for key in spec.extra_config)
    drafter = spec.id not in DRAFTER_CLASS or CONTRACT.fact(DRAFTER_CLASS[spec.id], version) is not None
    return named and keys and drafter


def test_the_contract_covers_every_minor_the_brief_names():
    wanted = {"0.8.5", "0.9.2", "0.10.2", "0.11.0", "0.11.1", "0.14.1", "0.15.1", "0.17.1", "0.18.1", "0.20.2", "0.21.0", "0.26.0", "0.32.0", "0.33.0"}
    assert wanted <= set(RELEASES)
    assert all(span["source"].startswith("vllm/") and ":" in span["source"] for spans in CONTRACT.facts.values() for span in spans)


def test_method_bounds_match_the_releases(rb):
    wrong = [
        f"{spec.id} at {v}: methods.toml says {registry.available(spec, v)}, vLLM's source says {_contract_serves(spec, v)}"
        for spec in rb.methods.values()
        for v in RELEASES
        if registry.available(spec, v) != _contract_serves(spec, v)
    ]
    assert not wrong, "\n".join(wrong)


def test_every_name_specadvisor_sends_or_accepts_is_in_that_release(rb):
    wrong = [f"{name} at {v}" for v in RELEASES for name in registry.vllm_names(v, rb) if name not in CONTRACT.methods(v)]
    assert not wrong, wrong


def test_older_mtp_names_start_where_vllm_maps_their_targets(rb):
    mtp = registry.native_heads_method(rb)
    assert mtp is not None
    for older in (o for o in mtp.older_names if o.engine == "v1"):
        for model_type in older.model_types:
            served = [v for v in RELEASES if older.name in CONTRACT.methods(v) and CONTRACT.fact(MTP_TARGET[model_type], v)]
            assert served, (older.name, model_type)
            assert older.min_version == served[0], f"{older.name} for {model_type}: first served in {served[0]}, methods.toml says {older.min_version}"
            assert all(v in served for v in RELEASES if in_range(v, older.min_version, None)), (older.name, model_type)


def test_config_key_bounds_match_the_releases(rb):
    wrong = []
    for key in rb.config_keys.values():
        for v in RELEASES:
            ours, theirs = in_range(v, key.min_version, key.removed_in), CONTRACT.fact(f"key/{key.id}", v) is not None
            if (ours and not theirs) or (ours != theirs and key.id not in CHOICES_NARROWED):
                wrong.append(f"{key.id} at {v}: methods.toml accepts it: {ours}; vLLM has it: {theirs}")
            choices = CONTRACT.choices(key.id, v)
            if ours and key.choices and choices is not None and not set(key.choices) <= set(choices):
                wrong.append(f"{key.id} at {v}: {key.choices} not all in vLLM's {choices}")
    assert not wrong, "\n".join(wrong)


def test_the_newest_release_has_nothing_methods_toml_does_not_know(rb):
    """Adding a release: run the extractor; a new key or method name shows up here first."""
    newest = RELEASES[-1]
    assert CONTRACT.keys(newest) - INTERNAL_KEYS <= set(rb.config_keys)
    known = {n for m in rb.methods.values() for n in [m.vllm_method, *m.accepted_aliases, *(o.name for o in m.older_names)]}
    assert CONTRACT.ids("method", newest) <= known


def test_cpu_bounds_match_the_cpu_runner(rb):
    wrong = []
    for spec in rb.methods.values():
        for v in RELEASES:
            served = CONTRACT.cpu_speculates(v) and (spec.id not in CPU_KERNEL or CONTRACT.fact(CPU_KERNEL[spec.id], v) is not None)
            ours = registry.runs_on(spec, "cpu", v)
            if "cpu" in spec.platforms and ours != served:
                wrong.append(f"{spec.id} on cpu at {v}: methods.toml says {ours}, vLLM's CPU build says {served}")
    assert not wrong, "\n".join(wrong)
    assert not CONTRACT.cpu_speculates("0.19.1") and CONTRACT.cpu_speculates("0.20.0")
    assert CONTRACT.fact("cpu/refuses_speculation", "0.14.1")["message"] == "spec decode is not supported."


@pytest.mark.parametrize(
    "fact, first, gone",
    [
        ("method/suffix", "0.11.1", None),
        ("refused/draft_model", "0.10.0", "0.15.0"),
        ("key/attention_backend", "0.21.0", None),
        ("key/kv_cache_dtype", "0.26.0", None),
        ("key/acceptance_method", "0.8.5", "0.10.0"),
        ("key/disable_by_batch_size", "0.8.5", "0.17.0"),
        ("key/speculative_token_tree", "0.9.0", "0.21.0"),
        ("method/ngram_gpu", "0.18.0", None),
        ("SupportsEagle3/Qwen3MoeForCausalLM", "0.11.1", None),
        ("mtp_target_arch/Glm4MoeForCausalLM", "0.10.0", None),
        ("speculators/eagle3", "0.10.1.1", None),
        ("cpu/refuses_speculation", "0.9.2", "0.20.0"),
        ("drafter_arch/EagleMistralLarge3ForCausalLM", "0.12.0", None),
    ],
)
def test_the_facts_issue_23_names(fact, first, gone):
    """Each fact as the wheels state it (issue 23's list; where a range differs from the issue, the
    source wins: acceptance_method was gone from 0.10.0, speculators configs came in 0.10.1)."""
    spans = CONTRACT.facts[fact]
    assert spans[0]["since"] == first and spans[-1]["until"] == gone, spans
