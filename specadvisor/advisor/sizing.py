"""Does the target fit, and on how many GPUs: weights + drafter + KV cache for the workload, per GPU.

An estimate a first `vllm serve` can start from, with its arithmetic kept for `advise --explain`:
weights from the parameter count and the weight format (quantization aware), the drafter as a share
of the target's weights (per method, rules/methods.toml), the KV cache for the workload's prompt and
output lengths at its concurrency, and a fixed activation/CUDA-graph allowance. The smallest
power-of-two tensor-parallel size that holds it is chosen. An unknown size is said, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from specadvisor.domain import HardwareProfile, ModelProfile

USABLE = 0.90  # vLLM's default --gpu-memory-utilization
OVERHEAD_GIB = 2.0  # activations at the default batched-token budget, CUDA graphs, NCCL buffers
OVERHEAD_SHARE = 0.05  # plus this share of the weights each GPU holds (bigger layers, bigger buffers)
# The overhead above keeps headroom when choosing a tensor-parallel size. Whether a server can start
# at all is judged with the leaner figures below: Llama-3.3-70B in bf16 does start on 2x H100 80GB
# (65.7 GiB of weights per GPU, a few GiB of KV cache left at --gpu-memory-utilization 0.9).
START_OVERHEAD_GIB = 1.5
START_OVERHEAD_SHARE = 0.02
WEIGHTS_MAX_SHARE = 0.85  # a chosen TP leaves at least 15% of usable memory besides weights (MoE all-to-all, long requests)
DEFAULT_DRAFTER_SHARE = 0.05  # when the drafter is not chosen yet: room for an EAGLE/DFlash head
KV_KIB_PER_ACTIVE_B = 40.0  # fallback KV size: about 40 KiB/token x active_B^0.55 (Llama-8B 128, 70B 320)


_BITS = (
    (("4-bit", "4bit", "int4", "fp4", "nvfp4", "mxfp4", "w4a16", "w4a8", "awq", "q4"), 0.5),
    (("8-bit", "8bit", "int8", "fp8", "w8a8", "w8a16", "q8"), 1.0),
)
"""Weight formats by bytes per parameter, 4-bit first (a 'gptq (4-bit)' is 4-bit; 'gptq (8-bit)' is matched by its bits)."""


def _tokens(text: str) -> list[str]:
    return [t for t in re.split(r"[^a-z0-9]+", text.lower()) if t]


def weight_format(text: str) -> float | None:
    """Bytes per parameter named by a quantization description or a checkpoint id (FP8, AWQ/GPTQ int4,
    NVFP4, MXFP4, BF16), None when it names none. Bits stated outright win over the method's usual width."""
    lowered = text.lower()
    for explicit, size in (("4-bit", 0.5), ("8-bit", 1.0)):
        if explicit in lowered:
            return size
    tokens = _tokens(text)
    for tags, size in _BITS:
        if any(tag in tokens for tag in tags):
            return size
    if "gptq" in tokens:
        return 0.5  # GPTQ checkpoints are 4-bit unless they say otherwise
    if any(tag in tokens for tag in ("bf16", "fp16", "bfloat16", "float16")):
        return 2.0
    if any(tag in tokens for tag in ("fp32", "float32")):
        return 4.0
    return None


def bytes_per_param(model: ModelProfile) -> float:
    """From the checkpoint's quantization (config.json) or dtype, else its id, else 16-bit."""
    for text in (model.quantization or "", model.dtype or "", model.id):
        size = weight_format(text) if text else None
        if size is not None:
            return size
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
    need_gib: float | None = None  # per GPU at the chosen (or largest tried) tensor-parallel size
    usable_gib: float | None = None  # per GPU, at vLLM's default memory utilisation


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
    drafter_gib: float | None = None,
    mla: bool = False,
) -> MemoryPlan:
    """Per-GPU memory for weights + drafter + KV cache + overhead, and the tensor-parallel size that holds it.

    `drafter_gib` is the drafter's real weight size (its parameter count x its bytes per parameter);
    without it the drafter is allowed `drafter_share` of the target's weights. The drafter's own KV
    cache is taken as `drafter_share` of the target's either way (a head keeps one layer's, a draft
    model its own smaller layers'), and labelled as the estimate it is."""
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
    drafter = drafter_gib if drafter_gib is not None else weights * drafter_share
    kv_kib, kv_origin = kv_kib_per_token(model, catalog_kv_kib)
    tokens = concurrency * (prompt_len + output_len)
    kv_total = (kv_kib or 0) * tokens / 2**20 * (1 + drafter_share)  # the drafter keeps its own (smaller) KV cache
    lines = [
        (
            f"memory: weights {model.params_b:g}B x {bytes_per_param(model):g} B/param = {weights:.1f} GiB; "
            f"{drafter_label} {drafter:.1f} GiB" + ("" if drafter_gib is not None else f" ({drafter_share:.0%} of the weights, an allowance)")
        ),
        f"memory: KV {kv_kib:.0f} KiB/token ({kv_origin}) x {concurrency} x ({prompt_len} prompt + {output_len} output) tokens = {kv_total:.1f} GiB"
        if kv_kib
        else "memory: KV cache per token unknown",
        f"memory: per GPU {per_gpu:.0f} GiB x {USABLE:.0%} usable = {usable:.1f} GiB; overhead {OVERHEAD_GIB:g} GiB + {OVERHEAD_SHARE:.0%} of each GPU's weights",
    ]

    def kv_ranks(tp: int) -> int:
        """How many ranks share the KV cache: all of them, except under MLA, where each holds all of it."""
        return 1 if mla else tp

    if mla:
        lines.append("memory: MLA: the compressed KV cache is replicated on every tensor-parallel rank (not divided by TP)")

    def need(tp: int) -> float:
        shard = (weights + drafter) / tp
        return shard + kv_total / kv_ranks(tp) + OVERHEAD_GIB + OVERHEAD_SHARE * weights / tp

    candidates = [tensor_parallel_size] if tensor_parallel_size else _powers_of_two(count)

    def roomy(tp: int) -> bool:
        return need(tp) <= usable and (weights + drafter) / tp <= WEIGHTS_MAX_SHARE * usable

    chosen = next((tp for tp in candidates if roomy(tp)), None)
    for tp in candidates:
        tight = "" if roomy(tp) or need(tp) > usable else f" but weights take over {WEIGHTS_MAX_SHARE:.0%} of it"
        lines.append(f"memory: TP {tp}: {need(tp):.1f} GiB per GPU {'<=' if need(tp) <= usable else '>'} {usable:.1f} GiB{tight}")
        if tp == chosen:
            break
    plan = (
        MemoryPlan(chosen, True, lines, need_gib=need(chosen), usable_gib=usable)
        if chosen is not None
        else _short_of_memory(
            lines,
            candidates[-1],
            usable,
            need,
            kv_total,
            kv_kib,
            weights,
            tensor_parallel_size,
            count,
            concurrency,
            prompt_len + output_len,
            kv_ranks(candidates[-1]),
        )
    )
    tp = plan.tensor_parallel_size or 1
    context = model.context_length
    if plan.fits and kv_kib and context:
        room = usable - (need(tp) - kv_total / kv_ranks(tp))  # KV room per GPU once weights and overhead are placed
        full = kv_kib * context / 2**20 / kv_ranks(tp)
        if full > room:
            fitting = max(1024, int(room * kv_ranks(tp) * 2**20 / kv_kib) // 1024 * 1024)
            plan.max_model_len = fitting
            plan.warnings.append(
                f"One request at the model's full context ({context} tokens, about {full:.0f} GiB of KV cache per GPU) does not fit "
                f"beside the weights at tensor parallel {tp}: vLLM refuses to start unless you pass --max-model-len {fitting} or less."
            )
    return plan


def _short_of_memory(
    lines: list[str],
    tp: int,
    usable: float,
    need: Callable[[int], float],
    kv_total: float,
    kv_kib: float | None,
    weights: float,
    given_tp: int | None,
    count: int,
    concurrency: int,
    request_tokens: int,
    kv_ranks: int,
) -> MemoryPlan:
    """No TP holds the whole workload's KV cache with headroom. When weights, drafter, the lean start-up
    overhead and one request still fit, vLLM starts and queues what its KV cache cannot hold: that
    fits, with a warning. Otherwise it cannot start."""
    static = need(tp) - kv_total / kv_ranks - (OVERHEAD_GIB - START_OVERHEAD_GIB) - (OVERHEAD_SHARE - START_OVERHEAD_SHARE) * weights / tp
    one_request = (kv_kib or 0) * request_tokens / 2**20 / kv_ranks
    how = "as you set it" if given_tp else f"all {count} GPUs"
    if static + one_request <= usable:
        room = usable - static
        held = int(room * kv_ranks * 2**20 / (kv_kib * request_tokens)) if kv_kib else concurrency
        lines.append(f"memory: TP {tp}: weights and overhead {static:.1f} GiB per GPU leave {room:.1f} GiB of KV cache: about {held} of {concurrency} requests")
        plan = MemoryPlan(tp, True, lines, need_gib=need(tp), usable_gib=usable)
        if held < concurrency:
            plan.warnings.append(
                f"The KV cache holds only about {held} of the {concurrency} concurrent requests of {request_tokens} tokens at tensor parallel {tp} ({how}): "
                "vLLM starts but queues the rest, so measure at the concurrency it really sustains, or use more GPUs, a quantized checkpoint or FP8 KV cache."
            )
        else:
            plan.warnings.append(
                f"Tight fit at tensor parallel {tp} ({how}): weights and overhead take {static:.0f} GiB of the {usable:.0f} GiB usable per GPU, "
                f"leaving {usable - static:.0f} GiB for the KV cache and activations of long requests; it should start, but more GPUs or a quantized checkpoint give headroom."
            )
        return plan
    plan = MemoryPlan(tp, False, lines, need_gib=static + one_request, usable_gib=usable)
    plan.warnings.append(
        f"Weights, drafter and KV cache do not fit: at tensor parallel {tp} ({how}) each GPU needs about {static + one_request:.0f} GiB "
        f"(weights {weights / tp:.0f}, KV cache for one {request_tokens}-token request {one_request:.1f}) "
        f"but has {usable:.0f} GiB usable: use more GPUs, a quantized checkpoint, or a smaller model."
    )
    return plan


def choose_tensor_parallel(model: ModelProfile, hardware: HardwareProfile) -> int:
    """Smallest power-of-two GPU count that holds the model with a drafter and a small chat workload (1 when unknown)."""
    return plan_memory(model, hardware).tensor_parallel_size or 1


def fits(model: ModelProfile, hardware: HardwareProfile, tensor_parallel_size: int) -> bool | None:
    return plan_memory(model, hardware, tensor_parallel_size=tensor_parallel_size).fits
