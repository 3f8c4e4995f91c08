"""Every config the advisor can emit, for every vLLM release the contract covers and each platform
(CUDA, ROCm, CPU), is one that release's own source accepts: the method is in its list and not
refused by arg_utils, every key is a SpeculativeConfig field with an allowed value, the CPU runner
speculates (and has the kernel the proposer needs), and the target class implements the interface
the drafter attaches through. The contract is read from vLLM's wheels, not from methods.toml."""

from __future__ import annotations

import pytest

from advisor_helpers import gpus, model, mtp_model
from specadvisor.advisor import advise
from specadvisor.advisor.validate import contract_problems
from specadvisor.domain import DrafterProfile, HardwareProfile, Workload, WorkloadKind
from specadvisor.rulebase import load_rulebase, registry
from specadvisor.rulebase.contract import load_contract

CONTRACT = load_contract()

HARDWARE = {"cuda": lambda: gpus("H200", 8), "rocm": lambda: gpus("MI300X", 8), "cpu": HardwareProfile}

TARGETS = [
    mtp_model("deepseek-ai/DeepSeek-V3", 1, model_type="deepseek_v3"),
    mtp_model("zai-org/GLM-4.5", 1, model_type="glm4_moe", architecture="Glm4MoeForCausalLM"),
    mtp_model("Qwen/Qwen3-Next-80B-A3B-Instruct", 1, model_type="qwen3_next"),
    model("Qwen/Qwen3-8B", architecture="Qwen3ForCausalLM"),
    model("Qwen/Qwen3-30B-A3B", architecture="Qwen3MoeForCausalLM"),
    model("meta-llama/Llama-3.1-8B-Instruct", architecture="LlamaForCausalLM"),
    model("Qwen/Qwen3-1.7B"),
    model("openai/gpt-oss-20b"),
    model("deepseek-ai/DeepSeek-V4-Pro"),
    model("google/gemma-4-26B-A4B-it"),
    model("acme/private-13b", params_b=13.0),
]
"""A target for each way a method is offered: native MTP (and the older per-family names), the
published drafters of every method, an in-checkpoint DSpark, a private model with lookup only."""

WORKLOADS = [Workload(kind=WorkloadKind.chat, concurrency=1), Workload(kind=WorkloadKind.code, concurrency=64)]

BOUNDARY_RELEASES = (
    "0.8.5",
    "0.9.2",
    "0.10.2",
    "0.11.0",
    "0.11.1",
    "0.14.1",
    "0.15.0",
    "0.17.1",
    "0.18.1",
    "0.20.0",
    "0.21.0",
    "0.24.0",
    "0.26.0",
    "0.32.0",
    "0.33.0",
)
"""Releases on either side of the bounds issue 23 found wrong (the fast run); every release the
contract read runs in the slow one (minutes: thousands of advise calls)."""


def _user_drafters() -> list[DrafterProfile]:
    """A user's own drafter for every method that takes one, as `--drafter` would describe it."""
    rb = load_rulebase(include_user=False)
    return [
        DrafterProfile(id=f"/models/my-{spec.id}", method=spec.vllm_method, parallel_drafting=bool(spec.extra_config.get("parallel_drafting")))
        for spec in rb.methods.values()
        if spec.needs_drafter and spec.offer
    ]


def _emitted(platform: str, version: str, workloads: list[Workload] = WORKLOADS[:1]):
    """(situation, candidate) for every candidate the advisor emits on this platform and version."""
    hardware = HARDWARE[platform]()
    for target in TARGETS:
        for workload in workloads:
            advice = advise(hardware, target, workload, vllm_version=version, tensor_parallel_size=8)
            yield from ((f"{target.id} {workload.kind.value}", c) for c in advice.candidates)
    for drafter in _user_drafters():
        advice = advise(hardware, model("Qwen/Qwen3-8B", architecture="Qwen3ForCausalLM"), WORKLOADS[0], drafter=drafter, vllm_version=version)
        yield from ((f"user drafter {drafter.id}", c) for c in advice.candidates)


@pytest.mark.parametrize(
    "releases, workloads",
    [
        pytest.param(BOUNDARY_RELEASES, WORKLOADS[:1], id="boundary-releases"),
        pytest.param(CONTRACT.releases, WORKLOADS, id="every-release", marks=pytest.mark.slow),
    ],
)
@pytest.mark.parametrize("platform", ["cuda", "rocm", "cpu"])
def test_every_emitted_config_is_one_the_release_accepts(platform, releases, workloads):
    assert set(releases) <= set(CONTRACT.releases)
    seen: set[str] = set()
    wrong = []
    for version in releases:
        for situation, candidate in _emitted(platform, version, workloads):
            seen.add(candidate.id)
            config = candidate.speculative_config
            spec = registry.get(candidate.id)
            target = next((t for t in TARGETS if situation.startswith(t.id)), None)
            architecture = target.architecture if target else "Qwen3ForCausalLM"
            if architecture and not CONTRACT.loads(architecture, version):
                wrong.append(f"vLLM {version} {situation}: the release cannot load {architecture}, yet {config} was emitted")
            if "method" not in config:  # the V0-era shape: V0 still there, and it fills the DeepSeek MTP drafter in itself
                assert CONTRACT.ids("v1_engine", version) and CONTRACT.fact("fills_drafter_for/deepseek_v3", version), (version, config)
                continue
            problems = contract_problems(
                config,
                version,
                platform=platform,
                target_architecture=architecture,
                target_interface=spec.target_interface if spec else "",
                target_model_type=target.model_type if target else "qwen3",
            )
            filled = CONTRACT.fills_drafter(config["method"], target.model_type if target else None, version)
            if spec is not None and spec.uses_native_heads and "model" not in config and not filled:
                problems.append("no 'model', and this release fills the MTP drafter in only for the targets it lists")
            if platform == "cpu" and config["method"] == "dflash" and not CONTRACT.fact("cpu/kernel/copy_and_expand_dflash_inputs_kernel", version):
                problems.append("the CPU build has no DFlash kernel")
            if problems:
                wrong.append(f"vLLM {version} {platform} {situation}: {config} -> {problems}")
    assert not wrong, "\n".join(wrong[:20])
    offered_anywhere = {"mtp", "eagle3", "dflash", "ngram", "suffix", "draft_model", "eagle"}
    if platform != "cpu":
        offered_anywhere |= {"peagle", "dspark", "pard", "medusa"}
    assert offered_anywhere <= seen, f"never emitted on {platform}: {sorted(offered_anywhere - seen)}"


def test_a_cpu_engine_before_0_20_is_offered_nothing():
    for version in [r for r in BOUNDARY_RELEASES if not CONTRACT.cpu_speculates(r)]:
        assert not [c for _, c in _emitted("cpu", version)], version


def test_contract_problems_name_the_source_of_each_refusal():
    ngram = {"method": "ngram", "num_speculative_tokens": 2}
    assert contract_problems(ngram, "0.32.0", platform="cpu") == []
    assert contract_problems(ngram, "0.14.1", platform="cpu") == [
        "vLLM 0.14.1's CPU build runs no speculative decoding (vllm/v1/worker/cpu_model_runner.py:23: 'spec decode is not supported.'); it does from 0.20.0"
    ]
    draft = {"method": "draft_model", "model": "d", "num_speculative_tokens": 3}
    assert "its arg_utils refuses it: 'Draft model speculative decoding is not supported yet." in contract_problems(draft, "0.14.1")[0]
    assert contract_problems({**ngram, "attention_backend": "triton_attn"}, "0.20.2") == [
        "vLLM 0.20.2 has no speculative-config key 'attention_backend' (SpeculativeConfig; first: vLLM 0.21.0, vllm/config/speculative.py:110)"
    ]
    eagle3 = {"method": "eagle3", "model": "RedHatAI/Qwen3-30B-A3B-speculator.eagle3", "num_speculative_tokens": 3}
    args = dict(target_architecture="Qwen3MoeForCausalLM", target_interface="SupportsEagle3", speculators_type="eagle3")
    assert contract_problems(eagle3, "0.11.1", **args) == []
    assert contract_problems(eagle3, "0.10.2", **args) == [
        "vLLM 0.10.2's Qwen3MoeForCausalLM does not implement SupportsEagle3, so this drafter cannot attach to it; it does from vLLM 0.11.1 (vllm/model_executor/models/qwen3_moe.py:629)"
    ]
    assert contract_problems(eagle3, "0.9.2", **{**args, "target_architecture": None}) == [
        "vLLM 0.9.2 cannot load a speculators-format 'eagle3' drafter; it can from vLLM 0.10.1.1"
    ]
    assert contract_problems(ngram, "0.7.0") == []  # older than every release read: not judged
