"""How many GPUs the target needs: weights plus headroom against one GPU's memory.

A rough rule on purpose (params x bytes/param x 1.25 for KV cache and activations): it picks the
tensor-parallel size a first `vllm serve` should try, not a capacity plan.
"""

from __future__ import annotations

from specadvisor.domain import HardwareProfile, ModelProfile

HEADROOM = 1.25  # KV cache, activations, CUDA graphs beyond the weights
USABLE = 0.90  # vLLM's default --gpu-memory-utilization


def bytes_per_param(model: ModelProfile) -> float:
    text = f"{model.quantization or ''} {model.dtype or ''}".lower()
    if any(tag in text for tag in ("int4", "awq", "gptq", "w4", "fp4", "nvfp4", "mxfp4", "q4")):
        return 0.5
    if any(tag in text for tag in ("fp8", "int8", "w8", "q8")):
        return 1.0
    if "float32" in text or "fp32" in text:
        return 4.0
    return 2.0


def weights_gib(model: ModelProfile) -> float | None:
    if not model.params_b:
        return None
    return model.params_b * 1e9 * bytes_per_param(model) / 2**30


def gpu_memory_gib(hardware: HardwareProfile) -> float | None:
    """Smallest GPU's memory (TP shards evenly), from the probe or else the GPU catalog."""
    sizes = []
    for gpu in hardware.gpus:
        if gpu.memory_total_mib:
            sizes.append(gpu.memory_total_mib / 1024)
            continue
        from specadvisor.rulebase import find_gpu

        spec = find_gpu(gpu.name)
        if spec:
            sizes.append(spec.memory_gib)
    return min(sizes) if sizes else None


def _largest_power_of_two(limit: int) -> int:
    power = 1
    while power * 2 <= limit:
        power *= 2
    return power


def choose_tensor_parallel(model: ModelProfile, hardware: HardwareProfile) -> int:
    """Smallest power-of-two GPU count whose memory holds the weights with headroom, capped at the GPUs present."""
    need, per_gpu = weights_gib(model), gpu_memory_gib(hardware)
    if not hardware.gpus or need is None or per_gpu is None:
        return 1
    cap = _largest_power_of_two(len(hardware.gpus))
    tp = 1
    while tp < cap and need * HEADROOM > per_gpu * USABLE * tp:
        tp *= 2
    return tp


def fits(model: ModelProfile, hardware: HardwareProfile, tensor_parallel_size: int) -> bool | None:
    need, per_gpu = weights_gib(model), gpu_memory_gib(hardware)
    if need is None or per_gpu is None or not hardware.gpus:
        return None
    return need * HEADROOM <= per_gpu * USABLE * tensor_parallel_size
