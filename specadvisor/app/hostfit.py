"""Which advised methods this host can actually measure, and whether a launch fits here at all.

A CPU-only host runs vLLM's CPU build: the methods whose registry `platforms` include cpu (model-free
lookup, a draft model on a small target) work there; the drafter-head methods need a GPU. A method
that needs a package (suffix decoding: arctic-inference) is left out when the engine's environment
does not have it. The advice still lists them (a GPU machine can run the exported plan); the plan
for *here* leaves them out and says why. Memory is checked per arm before Start: a target that
cannot be loaded on this host warns in the plan panel instead of failing minutes into a launch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from specadvisor.advisor.sizing import bytes_per_param, plan_memory, weights_gib
from specadvisor.analysis.arms import method_display_name
from specadvisor.domain import DEFAULT_OUTPUT_LEN, Advice, Candidate, HardwareProfile, ModelProfile
from specadvisor.rulebase import MethodSpec, registry

SMALL_MODEL_B = 2.0  # a draft model on a CPU only pays, and only finishes, on a small target
CPU_RUNTIME_GIB = 3.0  # the API server, engine core and torch runtime of one CPU `vllm serve`
CPU_DEFAULT_KV_GIB = 4.0  # what vLLM's CPU backend is assumed to claim when VLLM_CPU_KVCACHE_SPACE is unset
CPU_USABLE_SHARE = 0.8  # leave a fifth of the RAM to the OS, the page cache and the load generator


def _fallback() -> Candidate:
    """The registry's model-free method for a CPU (n-gram), as a candidate over a small N grid."""
    spec = registry.model_free("cpu")
    method, extra = registry.resolve(spec.id, {})
    config = {"method": method, **dict(getattr(spec, "default_config", {}) or {}), **extra, "num_speculative_tokens": 2}
    return Candidate(id=spec.id, method=method, speculative_config=config, n_grid=[2, 4], score=0.0, reasons=["model-free: runs on the CPU build of vLLM"])


def cpu_only(hardware: HardwareProfile) -> bool:
    """No GPU to measure on: none detected and the hardware is not a hypothetical --gpu plan."""
    return not hardware.gpus and not hardware.hypothetical


@dataclass
class HostFit:
    cpu_only: bool
    measurable: list[Candidate]
    left_out: list[tuple[Candidate, str]] = field(default_factory=list)  # (candidate, why not here)
    added_fallback: bool = False
    missing_packages: dict[str, list[str]] = field(default_factory=dict)  # method id -> packages the engine lacks
    packages_checked: bool = True  # False: the engine's environment could not be read from here
    unchecked_packages: dict[str, list[str]] = field(default_factory=dict)  # method id -> packages it needs that nothing here could check
    memory_warnings: list[str] = field(default_factory=list)  # arms that will not fit this host's memory
    memory_headlines: list[str] = field(default_factory=list)  # the same warnings, one short line of figures each (a narrow panel)

    def note(self) -> str:
        """One or two sentences for the plan: what cannot be measured here and what the plan does instead."""
        parts = []
        gpu_only = [c for c, why in self.left_out if c.id not in self.missing_packages]
        if self.cpu_only:
            if not gpu_only and not self.missing_packages:
                parts.append("CPU-only host: the plan measures only what the CPU build of vLLM serves; x exports a plan for a GPU machine.")
            elif gpu_only:
                names = ", ".join(dict.fromkeys(method_display_name(c.id) for c in gpu_only))
                can = ", ".join(dict.fromkeys(method_display_name(c.id) for c in self.measurable)) or "no speculative method"
                extra = " (n-gram added: model-free, it runs here)" if self.added_fallback else ""
                parts.append(
                    f"CPU-only host: {names} need a GPU and cannot be measured here. This plan measures {can}{extra}; export the full plan for a GPU machine (x)."
                )
        for method, packages in self.missing_packages.items():
            names = " ".join(packages)
            parts.append(
                f"{method_display_name(method)} left out: {names} is not installed in the engine's environment (pip install {names} there to measure it)."
            )
        note = self.package_note()
        return " ".join([*parts, note] if note else parts)

    def package_note(self) -> str:
        """What the plan keeps without knowing the engine has it (no vLLM found here, or a machine planned for)."""
        return " ".join(
            f"{method_display_name(method)} needs {' '.join(packages)} in the engine's environment, which could not be checked here: "
            f"pip install {' '.join(packages)} beside vLLM there, or remove its arms (d)."
            for method, packages in self.unchecked_packages.items()
        )


def _spec(cand: Candidate) -> MethodSpec | None:
    return registry.get(cand.id) or registry.by_vllm_name(cand.method, cand.parallel_drafting)


def fit_to_host(
    advice: Advice,
    hardware: HardwareProfile,
    model: ModelProfile | None,
    *,
    installed: frozenset[str] | None = None,
    server_args: list[str] | None = None,
    server_env: dict[str, str] | None = None,
    output_len: int = DEFAULT_OUTPUT_LEN,
    concurrency: int = 1,
) -> HostFit:
    """The candidates measurable here. `installed` is the engine environment's distributions
    (specadvisor.engine.extras; None: not known, nothing is dropped for a package)."""
    fit = HostFit(cpu_only=cpu_only(hardware), measurable=[], packages_checked=installed is not None or hardware.hypothetical)
    size = model.params_b if model else None
    for cand in advice.candidates:
        spec = _spec(cand)
        needs = list(spec.requires_packages) if spec else []
        missing = [p for p in needs if installed is not None and _normal(p) not in installed]
        if fit.cpu_only and (spec is None or not registry.runs_on(spec, "cpu", advice.vllm_version) or cand.parallel_drafting):
            fit.left_out.append((cand, "needs a GPU"))
        elif fit.cpu_only and spec is not None and spec.needs_drafter and size is not None and size > SMALL_MODEL_B:
            fit.left_out.append((cand, f"a draft model on a {size:g}B target is impractical on a CPU"))
        elif missing and not hardware.hypothetical:
            fit.missing_packages[cand.id] = missing
            fit.left_out.append((cand, f"needs {', '.join(missing)} in the engine's environment"))
        else:
            fit.measurable.append(cand)
            if needs and (installed is None or hardware.hypothetical):
                fit.unchecked_packages[cand.id] = needs
    if fit.cpu_only and not any(registry.drafts_from_prompt(c.method) for c in fit.measurable):
        fit.measurable.append(_fallback())
        fit.added_fallback = True
    if model is not None:
        shortfalls = memory_shortfalls(model, hardware, fit.measurable, server_args or [], server_env or {}, output_len, concurrency)
        fit.memory_warnings = [s.warning for s in shortfalls]
        fit.memory_headlines = [s.headline for s in shortfalls]
    return fit


def _normal(name: str) -> str:
    from specadvisor.engine.extras import normalize

    return normalize(name)


# ---------------------------------------------------------------------- memory, per arm


def _dtype_from_args(server_args: list[str]) -> str | None:
    for i, arg in enumerate(server_args):
        if arg.startswith("--dtype="):
            return arg.split("=", 1)[1]
        if arg == "--dtype" and i + 1 < len(server_args):
            return server_args[i + 1]
    return None


def _drafter_share(cand: Candidate | None) -> float:
    spec = _spec(cand) if cand is not None else None
    return float(spec.drafter_share) if spec is not None and spec.needs_drafter else 0.0


@dataclass(frozen=True)
class MemoryShortfall:
    """One arm kind that will not fit: the full sentence, and its figures in a line short enough for a
    narrow panel (the TUI's plan at 80 columns shows the figures, the sentence when Start asks)."""

    arms: str  # "baseline, n-gram"
    reason: str  # the full sentence: the arithmetic and what to do
    figures: str  # "needs about 81 GiB per GPU at TP 8, 72 GiB usable"

    @property
    def warning(self) -> str:
        return f"{self.arms}: {self.reason}"

    @property
    def headline(self) -> str:
        return f"{self.arms}: {self.figures}"


def memory_shortfalls(
    model: ModelProfile,
    hardware: HardwareProfile,
    candidates: list[Candidate],
    server_args: list[str],
    server_env: dict[str, str],
    output_len: int = DEFAULT_OUTPUT_LEN,
    concurrency: int = 1,
) -> list[MemoryShortfall]:
    """Each arm kind (the baseline and each method) that would not fit: the target's weights at the
    dtype the server loads (`--dtype` wins over the checkpoint's, else the format the advice sizes it
    at: advisor.core.sized_profile), its drafter, the KV cache and the runtime, against what the host
    can give; arm kinds that fail alike are one. [] when everything fits or the size is unknown."""
    from specadvisor.advisor.core import sized_profile

    model = sized_profile(model)
    dtype = _dtype_from_args(server_args)
    loaded = model.model_copy(update={"dtype": dtype, "quantization": None if dtype else model.quantization}) if dtype and dtype != "auto" else model
    weights = weights_gib(loaded)
    if weights is None:
        return []
    kinds: list[tuple[str, float]] = [("baseline", 0.0)]
    for cand in candidates:
        kinds.append((method_display_name(cand.id), _drafter_share(cand)))
    if cpu_only(hardware):
        return _cpu_memory(loaded, weights, hardware, kinds, server_env)
    found = []
    for name, share in kinds:
        plan = plan_memory(loaded, hardware, output_len=output_len, concurrency=concurrency, drafter_share=share or 0.0)
        if plan.fits is False:
            reason = plan.warnings[0] if plan.warnings else "does not fit the GPU memory"
            need, usable = plan.need_gib, plan.usable_gib
            figures = (
                f"does not fit: needs about {need:.0f} GiB per GPU at TP {plan.tensor_parallel_size or 1}, {usable:.0f} GiB usable"
                if need is not None and usable is not None
                else "does not fit the GPU memory"
            )
            found.append(MemoryShortfall(name, reason, figures))
    return _merge_same(found)


def _cpu_memory(
    loaded: ModelProfile, weights: float, hardware: HardwareProfile, kinds: list[tuple[str, float]], server_env: Mapping[str, str]
) -> list[MemoryShortfall]:
    cpu = hardware.cpu
    if not cpu.ram_total_gib:
        return []
    limit = cpu.ram_total_gib * CPU_USABLE_SHARE
    how = f"{CPU_USABLE_SHARE:.0%} of {cpu.ram_total_gib:.1f} GiB RAM"
    if cpu.ram_available_gib is not None and cpu.ram_available_gib < limit:
        limit, how = cpu.ram_available_gib, f"{cpu.ram_available_gib:.1f} GiB free now of {cpu.ram_total_gib:.1f} GiB RAM"
    try:
        kv = float(server_env.get("VLLM_CPU_KVCACHE_SPACE", CPU_DEFAULT_KV_GIB))
    except ValueError:
        kv = CPU_DEFAULT_KV_GIB
    fmt = loaded.dtype or f"{bytes_per_param(loaded):g} B/param"
    needs: dict[float, list[str]] = {}
    for name, share in kinds:
        need = weights * (1 + share) + kv + CPU_RUNTIME_GIB
        if need > limit:
            needs.setdefault(round(need, 1), []).append(name)
    return [
        MemoryShortfall(
            ", ".join(dict.fromkeys(names)),
            f"about {need:.1f} GiB per server (weights {weights:.1f} GiB {fmt} + KV cache {kv:g} "
            f"+ runtime {CPU_RUNTIME_GIB:g}) > {limit:.1f} GiB this host can give ({how}): likely out of memory; "
            "use a smaller or quantized model, or x for a GPU machine's plan.",
            f"likely out of memory: about {need:.1f} GiB per server, {limit:.1f} GiB this host can give",
        )
        for need, names in needs.items()
    ]


def _merge_same(found: list[MemoryShortfall]) -> list[MemoryShortfall]:
    """Arms that fail for the same reason read as one line ("baseline, n-gram: ...")."""
    by_reason: dict[str, list[MemoryShortfall]] = {}
    for shortfall in found:
        by_reason.setdefault(shortfall.reason, []).append(shortfall)
    return [MemoryShortfall(", ".join(s.arms for s in same), same[0].reason, same[0].figures) for same in by_reason.values()]
