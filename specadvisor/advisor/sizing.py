"""Does the target fit, and on how many GPUs: weights + drafter + KV cache per GPU, as vLLM lays them out.

An estimate a first `vllm serve` can start from, with its arithmetic kept for `advise --explain` and
its assumptions printed with the advice: weights from the parameter count and the weight format
(quantization aware); the KV cache for the workload's prompt and output lengths at its concurrency,
in 16 bits (vLLM's `--kv-cache-dtype auto`), kept per tensor-parallel rank the way vLLM keeps it
(`ModelConfig.get_num_kv_heads`, vllm/config/model.py in 0.32.0: one latent "head" under MLA, so
every rank holds the whole compressed cache; else `max(1, kv_heads // TP)` heads, so KV heads are
replicated once TP exceeds their count); and a fixed activation/CUDA-graph allowance.

Each kind of arm is planned on its own (`ArmLoad`): the baseline and the lookup arms load the target
only, and a drafter's weights and KV cache are charged only to the arms that load that drafter. The
smallest power-of-two tensor-parallel size that holds the baseline with headroom and every arm's
whole workload is chosen, else the smallest that holds the baseline; an arm whose drafter does not
fit there is reported, not the whole plan. An unknown size is said, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from specadvisor.domain import DEFAULT_OUTPUT_LEN, HardwareProfile, ModelProfile

USABLE = 0.90  # vLLM's default --gpu-memory-utilization
OVERHEAD_GIB = 2.0  # activations at the default batched-token budget, CUDA graphs, NCCL buffers
OVERHEAD_SHARE = 0.05  # plus this share of the weights each GPU holds (bigger layers, bigger buffers)
# The overhead above keeps headroom when choosing a tensor-parallel size. Whether a server can start
# at all, and how many requests its KV cache then holds, is judged with the leaner figures below:
# Llama-3.3-70B in bf16 does start on 2x H100 80GB (65.7 GiB of weights per GPU, a few GiB of KV
# cache left at --gpu-memory-utilization 0.9).
START_OVERHEAD_GIB = 1.5
START_OVERHEAD_SHARE = 0.02
WEIGHTS_MAX_SHARE = 0.85  # a chosen TP leaves at least 15% of usable memory besides weights (MoE all-to-all, long requests)
DEFAULT_DRAFTER_SHARE = 0.05  # when the drafter is not chosen yet: room for an EAGLE/DFlash head
KV_KIB_PER_ACTIVE_B = 40.0  # fallback KV size: about 40 KiB/token x active_B^0.55 (Llama-8B 128, 70B 320)
KV_BITS = 16  # vLLM's --kv-cache-dtype auto keeps K and V in the model's 16-bit activation dtype
KV_HEADS_SOURCE = "vLLM's ModelConfig.get_num_kv_heads, vllm/config/model.py in 0.32.0"


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


def weight_format_source(model: ModelProfile) -> tuple[float, str]:
    """Bytes per parameter and what says so: the checkpoint's quantization (config.json or catalog), its
    dtype, its id, else 16 bits assumed."""
    for text, what in ((model.quantization, "quantization"), (model.dtype, "dtype"), (model.id, "id")):
        size = weight_format(text) if text else None
        if size is not None:
            return size, f"its {what} '{text}'"
    return 2.0, "16-bit assumed (no quantization in its config or id)"


def bytes_per_param(model: ModelProfile) -> float:
    """From the checkpoint's quantization (config.json) or dtype, else its id, else 16-bit."""
    return weight_format_source(model)[0]


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


@dataclass(frozen=True)
class KvLayout:
    """The target's KV cache and how vLLM spreads it over tensor-parallel ranks."""

    kib_per_token: float | None  # all layers, 16 bits
    origin: str
    mla: bool = False  # one compressed latent per token and layer, kept whole on every rank
    kv_heads: int | None = None  # total KV heads (None: unknown, taken as divided by TP)

    def rank_share(self, tp: int) -> float:
        """The share of the whole KV cache each rank keeps: 1 under MLA; `max(1, heads // TP) / heads`
        otherwise, so heads are replicated once TP exceeds their count."""
        if self.mla:
            return 1.0
        if self.kv_heads:
            return max(1, self.kv_heads // tp) / self.kv_heads
        return 1.0 / tp

    def per_rank(self, tp: int) -> str:
        """How each rank holds the cache at this TP, in words."""
        if self.mla:
            return f"MLA: each of the {tp} ranks keeps the whole compressed KV cache (one latent head per token; {KV_HEADS_SOURCE})"
        if self.kv_heads and self.kv_heads < tp:
            return (
                f"{self.kv_heads} KV heads over TP {tp}: each rank keeps one whole head, so the cache is replicated "
                f"{tp // self.kv_heads}x and each rank holds 1/{self.kv_heads} of it, not 1/{tp} ({KV_HEADS_SOURCE})"
            )
        if self.kv_heads:
            return f"{self.kv_heads} KV heads split over TP {tp}: {self.kv_heads // tp} per rank ({KV_HEADS_SOURCE})"
        return f"KV heads unknown: taken as split evenly over TP {tp}"


@dataclass(frozen=True)
class ArmLoad:
    """What one kind of arm loads besides the target: its drafter's weights (GiB, sharded like the
    target's) and the drafter's own KV cache as a share of the target's per token."""

    key: str
    drafter_gib: float = 0.0
    kv_share: float = 0.0
    label: str = "no drafter"


BASELINE = ArmLoad("baseline")


@dataclass
class ArmFit:
    """One arm kind at the plan's tensor-parallel size."""

    load: ArmLoad
    fits: bool  # the server starts
    roomy: bool  # with headroom for the whole workload's KV cache
    need_gib: float  # per GPU: the whole workload with headroom, or (not fitting) the least it needs to start
    held: int | None  # requests of the workload's length its KV cache holds (None: KV size unknown)


@dataclass
class MemoryPlan:
    tensor_parallel_size: int | None  # None: the size is unknown and nobody said
    fits: bool | None  # the baseline (the first arm planned) starts
    lines: list[str] = field(default_factory=list)  # the arithmetic, for --explain
    warnings: list[str] = field(default_factory=list)
    max_model_len: int | None = None  # suggested when the model's full context would not fit
    need_gib: float | None = None  # per GPU at the chosen (or largest tried) tensor-parallel size
    usable_gib: float | None = None  # per GPU, at vLLM's default memory utilisation
    arms: dict[str, ArmFit] = field(default_factory=dict)  # each arm kind planned, by key
    assumptions: list[str] = field(default_factory=list)  # what the plan took for granted, printed with the advice


def _powers_of_two(limit: int) -> list[int]:
    out, power = [], 1
    while power <= limit:
        out.append(power)
        power *= 2
    return out


@dataclass(frozen=True)
class _Budget:
    """Per-GPU memory for one arm at one tensor-parallel size: one formula for every figure."""

    weights: float
    usable: float
    kv: KvLayout
    request_tokens: int
    concurrency: int

    def per_request(self, tp: int, arm: ArmLoad) -> float:
        """GiB per GPU of KV cache for one request, the drafter's own cache included."""
        return (self.kv.kib_per_token or 0) * self.request_tokens / 2**20 * self.kv.rank_share(tp) * (1 + arm.kv_share)

    def static(self, tp: int, arm: ArmLoad, *, lean: bool = False) -> float:
        """Weights, drafter and runtime per GPU: the headroom figures, or the lean ones a server starts with."""
        fixed, share = (START_OVERHEAD_GIB, START_OVERHEAD_SHARE) if lean else (OVERHEAD_GIB, OVERHEAD_SHARE)
        return (self.weights + arm.drafter_gib) / tp + fixed + share * self.weights / tp

    def need(self, tp: int, arm: ArmLoad) -> float:
        return self.static(tp, arm) + self.per_request(tp, arm) * self.concurrency

    def roomy(self, tp: int, arm: ArmLoad) -> bool:
        return self.need(tp, arm) <= self.usable and (self.weights + arm.drafter_gib) / tp <= WEIGHTS_MAX_SHARE * self.usable

    def serves(self, tp: int, arm: ArmLoad) -> bool:
        """Roomy, or at least it starts with the whole workload's requests in its KV cache."""
        fit = self.fit(tp, arm)
        return fit.roomy or (fit.fits and (fit.held is None or fit.held >= self.concurrency))

    def fit(self, tp: int, arm: ArmLoad) -> ArmFit:
        """Roomy, or else whether it starts (lean runtime, one request) and how many requests it then holds."""
        lean = self.static(tp, arm, lean=True)
        one = self.per_request(tp, arm)
        roomy = self.roomy(tp, arm)
        starts = roomy or lean + one <= self.usable
        held = int((self.usable - lean) / one) if one and self.kv.kib_per_token else None
        need = self.need(tp, arm) if roomy or starts else lean + one
        return ArmFit(arm, starts, roomy, need, max(held, 1) if starts and held is not None else held)


def plan_memory(
    model: ModelProfile,
    hardware: HardwareProfile,
    *,
    prompt_len: int = 1024,
    output_len: int = DEFAULT_OUTPUT_LEN,
    concurrency: int = 1,
    drafter_share: float = DEFAULT_DRAFTER_SHARE,
    drafter_label: str = "drafter allowance",
    tensor_parallel_size: int | None = None,
    catalog_kv_kib: float | None = None,
    drafter_gib: float | None = None,
    mla: bool = False,
    kv_heads: int | None = None,
    arms: Sequence[ArmLoad] | None = None,
) -> MemoryPlan:
    """Per-GPU memory for weights + drafter + KV cache + overhead, and the tensor-parallel size that holds it.

    `arms` are the arm kinds to plan, the baseline first (its fit is the plan's). Without them the plan
    is for one arm loading one drafter: `drafter_gib` (its real weight size) or else `drafter_share`
    of the target's weights, its own KV cache taken as `drafter_share` of the target's."""
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
    if arms is None:
        size = drafter_gib if drafter_gib is not None else weights * drafter_share
        origin = "" if drafter_gib is not None else f" ({drafter_share:.0%} of the weights, an allowance)"
        arms = [ArmLoad("plan", size, drafter_share, f"{drafter_label}{origin}")]
    kib, kv_origin = kv_kib_per_token(model, catalog_kv_kib)
    kv = KvLayout(kib, kv_origin, mla or model.mla, kv_heads or model.kv_heads)
    if per_gpu is None or count == 0:
        tp = tensor_parallel_size or 1
        return MemoryPlan(tp, None, [f"memory: weights {weights:.1f} GiB; GPU memory unknown, fit not checked"])
    budget = _Budget(weights, per_gpu * USABLE, kv, prompt_len + output_len, concurrency)
    base = arms[0]
    candidates = [tensor_parallel_size] if tensor_parallel_size else _powers_of_two(count)
    every = next((tp for tp in candidates if budget.roomy(tp, base) and all(budget.serves(tp, arm) for arm in arms)), None)
    chosen = every or next((tp for tp in candidates if budget.roomy(tp, base)), None) or candidates[-1]
    lines = _arithmetic(model, budget, arms, per_gpu)
    for tp in candidates:
        need = budget.need(tp, base)
        tight = "" if budget.roomy(tp, base) or need > budget.usable else f" but weights take over {WEIGHTS_MAX_SHARE:.0%} of it"
        lines.append(f"memory: TP {tp}, {_name(base)}: {need:.1f} GiB per GPU {'<=' if need <= budget.usable else '>'} {budget.usable:.1f} GiB{tight}")
        if tp == chosen:
            break
    fits = {arm.key: budget.fit(chosen, arm) for arm in arms}
    plan = MemoryPlan(chosen, fits[base.key].fits, lines, need_gib=fits[base.key].need_gib, usable_gib=budget.usable, arms=fits)
    for fit in fits.values():
        lines.append(_arm_line(chosen, fit, budget, concurrency))
    plan.warnings.extend(_warnings(fits[base.key], budget, chosen, given=bool(tensor_parallel_size), count=count, concurrency=concurrency))
    _limit_context(plan, budget, model.context_length)
    plan.assumptions = _assumptions(model, budget, arms, chosen, per_gpu)
    return plan


def _name(arm: ArmLoad) -> str:
    return "no-drafter arms" if arm.key == "baseline" else arm.key


def _arithmetic(model: ModelProfile, budget: _Budget, arms: Sequence[ArmLoad], per_gpu: float) -> list[str]:
    size, _ = weight_format_source(model)
    kv = budget.kv
    kv_total = (kv.kib_per_token or 0) * budget.request_tokens * budget.concurrency / 2**20
    lines = [f"memory: weights {model.params_b:g}B x {size:g} B/param = {budget.weights:.1f} GiB"]
    lines += [f"memory: {arm.key} loads {arm.label} {arm.drafter_gib:.1f} GiB" for arm in arms if arm.drafter_gib]
    lines.append(
        f"memory: KV {kv.kib_per_token:.0f} KiB/token ({kv.origin}) x {budget.concurrency} x {budget.request_tokens} tokens = {kv_total:.1f} GiB in all"
        if kv.kib_per_token
        else "memory: KV cache per token unknown"
    )
    lines.append(
        f"memory: per GPU {per_gpu:.0f} GiB x {USABLE:.0%} usable = {budget.usable:.1f} GiB; overhead {OVERHEAD_GIB:g} GiB + {OVERHEAD_SHARE:.0%} of each GPU's weights"
    )
    if kv.mla:
        lines.append("memory: MLA: the compressed KV cache is replicated on every tensor-parallel rank (not divided by TP)")
    return lines


def _arm_line(tp: int, fit: ArmFit, budget: _Budget, concurrency: int) -> str:
    arm = fit.load
    what = f"TP {tp}, {_name(arm)}" + (f" (+{arm.drafter_gib:.1f} GiB drafter, +{arm.kv_share:.0%} KV)" if arm.drafter_gib else "")
    if fit.roomy:
        state = f"{fit.need_gib:.1f} GiB per GPU <= {budget.usable:.1f} GiB"
    elif fit.fits:
        state = f"starts, weights and runtime {budget.static(tp, arm, lean=True):.1f} GiB per GPU leave {budget.usable - budget.static(tp, arm, lean=True):.1f} GiB of KV cache"
    else:
        state = f"does not start: needs {fit.need_gib:.1f} GiB per GPU > {budget.usable:.1f} GiB"
    held = f": about {fit.held} of {concurrency} requests" if fit.held is not None and fit.fits else ""
    return f"memory: {what}: {state}{held}"


def _warnings(fit: ArmFit, budget: _Budget, tp: int, *, given: bool, count: int, concurrency: int) -> list[str]:
    """What the user must know about the baseline's plan: it queues, it is tight, or it does not start."""
    how = "as you set it" if given else "one GPU" if count == 1 else f"all {count} GPUs" if tp == count else f"of {count} GPUs"
    request_tokens = budget.request_tokens
    if fit.roomy:
        return []
    lean = budget.static(tp, fit.load, lean=True)
    if not fit.fits:
        one = budget.per_request(tp, fit.load)
        return [
            f"Weights, drafter and KV cache do not fit: at tensor parallel {tp} ({how}) each GPU needs about {lean + one:.0f} GiB "
            f"(weights {budget.weights / tp:.0f}, KV cache for one {request_tokens}-token request {one:.1f}) "
            f"but has {budget.usable:.0f} GiB usable: use more GPUs, a quantized checkpoint, or a smaller model."
        ]
    if fit.held is not None and fit.held < concurrency:
        return [
            f"The KV cache holds only about {fit.held} of the {concurrency} concurrent requests of {request_tokens} tokens at tensor parallel {tp} ({how}): "
            "vLLM starts but queues the rest, so measure at the concurrency it really sustains, or use more GPUs, a quantized checkpoint or FP8 KV cache."
        ]
    return [
        f"Tight fit at tensor parallel {tp} ({how}): weights and overhead take {lean:.0f} GiB of the {budget.usable:.0f} GiB usable per GPU, "
        f"leaving {budget.usable - lean:.0f} GiB for the KV cache and activations of long requests; it should start, but more GPUs or a quantized checkpoint give headroom."
    ]


def _limit_context(plan: MemoryPlan, budget: _Budget, context: int | None) -> None:
    """A --max-model-len every arm that starts can serve, when one request at the full context would not fit."""
    kib = budget.kv.kib_per_token
    tp = plan.tensor_parallel_size or 1
    if not (plan.fits and kib and context):
        return
    tightest: tuple[int, float] | None = None
    for fit in plan.arms.values():
        if not fit.fits:
            continue
        room = budget.usable - budget.static(tp, fit.load, lean=True)  # KV room per GPU once the server has started
        per_token = kib / 2**20 * budget.kv.rank_share(tp) * (1 + fit.load.kv_share)
        if per_token * context > room:
            fitting = max(1024, int(room / per_token) // 1024 * 1024)
            if tightest is None or fitting < tightest[0]:
                tightest = (fitting, per_token * context)
    if tightest is not None:
        plan.max_model_len = tightest[0]
        plan.warnings.append(
            f"One request at the model's full context ({context} tokens, about {tightest[1]:.0f} GiB of KV cache per GPU) does not fit "
            f"beside the weights at tensor parallel {tp}: vLLM refuses to start unless you pass --max-model-len {tightest[0]} or less."
        )


def _assumptions(model: ModelProfile, budget: _Budget, arms: Sequence[ArmLoad], tp: int, per_gpu: float) -> list[str]:
    """The plan's premises in a few lines, printed with the advice so a reader can check each one."""
    size, source = weight_format_source(model)
    kv = budget.kv
    out = [f"weights: {model.params_b:g}B parameters x {size:g} bytes ({source}) = {budget.weights:.1f} GiB, {budget.weights / tp:.1f} GiB per GPU at TP {tp}"]
    if kv.kib_per_token:
        out.append(
            f"KV cache: {kv.kib_per_token:.0f} KiB per token ({kv.origin}) in {KV_BITS} bits (vLLM's --kv-cache-dtype auto; fp8 halves it); {kv.per_rank(tp)}"
        )
    else:
        out.append("KV cache: size per token unknown, not counted")
    out.append(
        f"per GPU: {per_gpu:.0f} GiB x {USABLE:.0%} (--gpu-memory-utilization) = {budget.usable:.1f} GiB; runtime {START_OVERHEAD_GIB:g} GiB + "
        f"{START_OVERHEAD_SHARE:.0%} of the weights to start, {OVERHEAD_GIB:g} GiB + {OVERHEAD_SHARE:.0%} kept as headroom"
    )
    charged = [f"{arm.key} +{arm.drafter_gib:.1f} GiB ({arm.label}) and +{arm.kv_share:.0%} KV" for arm in arms if arm.drafter_gib]
    out.append("charged per arm: the baseline and lookup arms load the target only" + (f"; {'; '.join(charged)}" if charged else ""))
    return out


def choose_tensor_parallel(model: ModelProfile, hardware: HardwareProfile) -> int:
    """Smallest power-of-two GPU count that holds the model with a drafter and a small chat workload (1 when unknown)."""
    return plan_memory(model, hardware).tensor_parallel_size or 1


def fits(model: ModelProfile, hardware: HardwareProfile, tensor_parallel_size: int) -> bool | None:
    return plan_memory(model, hardware, tensor_parallel_size=tensor_parallel_size).fits
