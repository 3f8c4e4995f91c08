"""Which advised methods this host can actually measure.

A CPU-only host runs vLLM's CPU build: the methods whose registry `platforms` include cpu (model-free
lookup, a draft model on a small target) work there; the drafter-head methods need a GPU. The advice still lists
them (a GPU machine can run the exported plan); the plan for *here* leaves them out and says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from specadvisor.domain import Advice, Candidate, HardwareProfile, ModelProfile
from specadvisor.rulebase import registry
from specadvisor.sweep.arms import method_display_name

SMALL_MODEL_B = 2.0  # a draft model on a CPU only pays, and only finishes, on a small target


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

    def note(self) -> str:
        """One or two sentences for the plan: what cannot be measured here and what the plan does instead."""
        if not self.cpu_only:
            return ""
        if not self.left_out:
            return "CPU-only host: the plan measures only what the CPU build of vLLM serves; x exports a plan for a GPU machine."
        names = ", ".join(dict.fromkeys(method_display_name(c.id) for c, _ in self.left_out))
        can = ", ".join(dict.fromkeys(method_display_name(c.id) for c in self.measurable)) or "no speculative method"
        extra = " (n-gram added: model-free, it runs here)" if self.added_fallback else ""
        return f"CPU-only host: {names} need a GPU and cannot be measured here. This plan measures {can}{extra}; export the full plan for a GPU machine (x)."


def fit_to_host(advice: Advice, hardware: HardwareProfile, model: ModelProfile | None) -> HostFit:
    if not cpu_only(hardware):
        return HostFit(cpu_only=False, measurable=list(advice.candidates))
    fit = HostFit(cpu_only=True, measurable=[])
    size = model.params_b if model else None
    for cand in advice.candidates:
        spec = registry.get(cand.id) or registry.by_vllm_name(cand.method, cand.parallel_drafting)
        if spec is None or not registry.runs_on(spec, "cpu", advice.vllm_version) or cand.parallel_drafting:
            fit.left_out.append((cand, "needs a GPU"))
        elif spec.needs_drafter and size is not None and size > SMALL_MODEL_B:
            fit.left_out.append((cand, f"a draft model on a {size:g}B target is impractical on a CPU"))
        else:
            fit.measurable.append(cand)
    if not any(registry.drafts_from_prompt(c.method) for c in fit.measurable):
        fit.measurable.append(_fallback())
        fit.added_fallback = True
    return fit
