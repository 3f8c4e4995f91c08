"""Does the target fit, and on how many GPUs: weights + drafter + KV cache for the workload, per GPU.

An estimate a first `vllm serve` can start from, with its arithmetic kept for `advise --explain`:
weights from the parameter count and the weight format (quantization aware), the drafter as a share
of the target's weights (per method, rules/methods.toml), the KV cache for the workload's prompt and
output lengths at its concurrency, and a fixed activation/CUDA-graph allowance. The smallest
power-of-two tensor-parallel size that holds it is chosen. An unknown size is said, never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from specadvisor.domain import HardwareProfile, ModelProfile

USABLE = 0.90  # vLLM's default --gpu-memory-utilization
OVERHEAD_GIB = 2.0  # activations at the default batched-token budget, CUDA graphs, NCCL buffers
OVERHEAD_SHARE = 0.05  # plus this share of the weights each GPU holds (bigger layers, bigger buffers)
DEFAULT_DRAFTER_SHARE = 0.05  # when the drafter is not chosen yet: room for an EAGLE/DFlash head
KV_KIB_PER_ACTIVE_B = 40.0  # fallback KV size: about 40 KiB/token x active_B^0.55 (Llama-8B 128, 70B 320)


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


def kv_kib_per_token(model: ModelProfile, catalog_kib: float | None = None) -> tuple[float | None, str]:
    """KV cache per token (KiB, all layers): from config.json shapes, the catalog, else an estimate."""
    if model.kv_bytes_per_token:
        return model.kv_bytes_per_token / 1024, "from config.json"
    if catalog_kib:
        return catalog_kib, "from the model catalog"
    active = model.active_params_b or model.params_b
    if not active:
        return None, "unknown"
    return KV_KIB_PER_ACTIVE_B * active**0.55, "estimated from the active parameter count"


@dataclass
class MemoryPlan:
    tensor_parallel_size: int | None  # None: the size is unknown and nobody said
    fits: bool | None
    lines: list[str] = field(default_factory=list)  # the arithmetic, for --explain
    warnings: list[str] = field(default_factory=list)
    max_model_len: int | None = None  # suggested when the model's full context would not fit


def _powers_of_two(limit: int) -> list[int]:
    out, power = [], 1
    while power <= limit:
        out.append(power)
        power *= 2
    return out


def plan_memory(
    model: ModelProfile,
    hardware: HardwareProfile,
    *,
    prompt_len: int = 1024,
    output_len: int = 256,
    concurrency: int = 1,
    drafter_share: float = DEFAULT_DRAFTER_SHARE,
    drafter_label: str = "drafter allowance",
    tensor_parallel_size: int | None = None,
    catalog_kv_kib: float | None = None,
) -> MemoryPlan:
    """Per-GPU memory for weights + drafter + KV cache + overhead, and the tensor-parallel size that holds it."""
    per_gpu = gpu_memory_gib(hardware)
    weights = weights_gib(model)
    count = len(hardware.gpus)
    if weights is None:
        if tensor_parallel_size:
            return MemoryPlan(tensor_parallel_size, None, [f"memory: model size unknown; tensor parallel {tensor_parallel_size} as you set it (not checked)"])
        return MemoryPlan(
            None,
            None,
            ["memory: model size unknown (no config.json, not in the catalog): tensor parallel not chosen"],
            [
                (
                    f"The size of {model.id} is unknown (config.json not found locally, in the Hugging Face cache or on the Hub, "
                    "and the model is not in the catalog): pass --tensor-parallel-size N or --params-b B; "
                    "no serve command is printed until then."
                )
            ],
        )
    if per_gpu is None or count == 0:
        tp = tensor_parallel_size or 1
        return MemoryPlan(tp, None, [f"memory: weights {weights:.1f} GiB; GPU memory unknown, fit not checked"])
    usable = per_gpu * USABLE
    drafter = weights * drafter_share
    kv_kib, kv_origin = kv_kib_per_token(model, catalog_kv_kib)
    tokens = concurrency * (prompt_len + output_len)
    kv_total = (kv_kib or 0) * tokens / 2**20 * (1 + drafter_share)  # the drafter keeps its own (smaller) KV cache
    lines = [
        (
            f"memory: weights {model.params_b:g}B x {bytes_per_param(model):g} B/param = {weights:.1f} GiB; "
            f"{drafter_label} {drafter:.1f} GiB ({drafter_share:.0%} of the weights)"
        ),
        f"memory: KV {kv_kib:.0f} KiB/token ({kv_origin}) x {concurrency} x ({prompt_len} prompt + {output_len} output) tokens = {kv_total:.1f} GiB"
        if kv_kib
        else "memory: KV cache per token unknown",
        f"memory: per GPU {per_gpu:.0f} GiB x {USABLE:.0%} usable = {usable:.1f} GiB; overhead {OVERHEAD_GIB:g} GiB + {OVERHEAD_SHARE:.0%} of each GPU's weights",
    ]

    def need(tp: int) -> float:
        shard = (weights + drafter) / tp
        return shard + kv_total / tp + OVERHEAD_GIB + OVERHEAD_SHARE * weights / tp

    candidates = [tensor_parallel_size] if tensor_parallel_size else _powers_of_two(count)
    chosen = next((tp for tp in candidates if need(tp) <= usable), None)
    for tp in candidates:
        lines.append(f"memory: TP {tp}: {need(tp):.1f} GiB per GPU {'<=' if need(tp) <= usable else '>'} {usable:.1f} GiB")
        if tp == chosen:
            break
    plan = MemoryPlan(chosen or candidates[-1], chosen is not None, lines)
    if chosen is None:
        tp = candidates[-1]
        how = "as you set it" if tensor_parallel_size else f"all {count} GPUs"
        plan.warnings.append(
            f"Weights, drafter and KV cache do not fit: at tensor parallel {tp} ({how}) each GPU needs about {need(tp):.0f} GiB "
            f"(weights {weights / tp:.0f}, KV cache {kv_total / tp:.0f} for {concurrency} x {prompt_len + output_len} tokens) "
            f"but has {usable:.0f} GiB usable: use more GPUs, a quantized checkpoint, or lower concurrency or context."
        )
        return plan
    context = model.context_length
    if kv_kib and context:
        room = usable - (need(chosen) - kv_total / chosen)  # KV room per GPU once weights and overhead are placed
        full = kv_kib * context / 2**20 / chosen
        if full > room:
            fitting = max(1024, int(room * chosen * 2**20 / kv_kib) // 1024 * 1024)
            plan.max_model_len = fitting
            plan.warnings.append(
                f"One request at the model's full context ({context} tokens, about {full:.0f} GiB of KV cache per GPU) does not fit "
                f"beside the weights at tensor parallel {chosen}: vLLM refuses to start unless you pass --max-model-len {fitting} or less."
            )
    return plan


def choose_tensor_parallel(model: ModelProfile, hardware: HardwareProfile) -> int:
    """Smallest power-of-two GPU count that holds the model with a drafter and a small chat workload (1 when unknown)."""
    return plan_memory(model, hardware).tensor_parallel_size or 1


def fits(model: ModelProfile, hardware: HardwareProfile, tensor_parallel_size: int) -> bool | None:
    return plan_memory(model, hardware, tensor_parallel_size=tensor_parallel_size).fits
