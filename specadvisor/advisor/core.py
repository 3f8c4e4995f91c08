"""advise(): rank speculative methods for one situation by running the rule base over it.

Pure and deterministic: the same inputs and rule files give the same Advice, with every score
change traced to the rule (and evidence) that made it. Local measurements outweigh published ones.
"""

from __future__ import annotations

from collections.abc import Sequence

from specadvisor.advisor import local as local_ev
from specadvisor.advisor.candidates import build_candidates
from specadvisor.advisor.facts import Facts, gather
from specadvisor.advisor.options import gather_options
from specadvisor.advisor.render import serve_command
from specadvisor.advisor.scoring import Tally, apply_rules
from specadvisor.advisor.sizing import choose_tensor_parallel, fits, gpu_memory_gib, weights_gib
from specadvisor.advisor.verdict import set_verdict
from specadvisor.domain import Advice, DrafterProfile, HardwareProfile, ModelProfile, Session, Workload
from specadvisor.rulebase import RuleBase, default_rulebase, drafters_for, find_model_family, methods_for_version

USER_DRAFTER_BONUS = 0.5


def advise(
    hardware: HardwareProfile,
    model: ModelProfile,
    workload: Workload,
    *,
    drafter: DrafterProfile | None = None,
    vllm_version: str | None = None,
    local_sessions: Sequence[Session] = (),
    rulebase: RuleBase | None = None,
) -> Advice:
    """Ranked candidates, warnings, the mandatory baseline and a plain verdict for this situation."""
    rb = rulebase or default_rulebase()
    vllm_version = vllm_version or hardware.engine.version
    family = find_model_family(model.id, rb) or (find_model_family(model.family, rb) if model.family else None)
    catalog = drafters_for(model.id, rb)
    facts = gather(hardware, model, workload, family, catalog, drafter, vllm_version)
    available = methods_for_version(vllm_version, rb)
    options, option_warnings = gather_options(model, facts, catalog, drafter, available, rb)

    tp = choose_tensor_parallel(_sized(model, facts), hardware)
    advice = Advice(vllm_version=vllm_version, tensor_parallel_size=tp)
    advice.trace.append(
        f"facts: {facts.vendor} x{facts.gpu_count} ({f'{facts.gpu_memory_gib:.0f}' if facts.gpu_memory_gib else '?'} GiB each), model family {family.id if family else 'unknown'}, "
        f"{facts.params_b or '?'}B params ({facts.active_params_b or '?'}B active), MTP layers {facts.mtp_layers}, "
        f"published drafters {len(catalog) + len(model.drafters)}, workload {facts.workload}, concurrency {facts.concurrency}, "
        f"output {facts.output_len} tokens, temperature {facts.temperature}, vLLM {facts.vllm_version}"
    )
    advice.trace.append(f"options: {', '.join(f'{k} ({o.drafter or o.origin})' for k, o in options.items()) or 'none'}")
    advice.warnings.extend(option_warnings)
    if model.mtp.present and model.mtp.confirmed_by_weights is False:
        advice.warnings.append("The config declares MTP heads but the weight index has none (a quantized re-upload?): native MTP is left out.")

    tallies = {key: Tally(score=o.method.base_score, grid=list(o.method.default_n_grid)) for key, o in options.items()}
    for key, option in options.items():
        if option.origin == "user":
            tallies[key].score += USER_DRAFTER_BONUS
            tallies[key].reasons.append(f"You supplied this drafter ({option.drafter}).")
    user_methods = {key for key, o in options.items() if o.origin == "user"}
    rule_verdicts = apply_rules(rb, facts, tallies, advice, user_methods)

    measured = local_ev.local_results(local_sessions, rb)
    advice.candidates = build_candidates(rb, model, facts, options, tallies, measured, advice, workload)
    _fit_warning(model, facts, hardware, tp, advice)
    advice.baseline = {
        "label": "no speculation",
        "speculative_config": None,
        "serve_command": serve_command(_serve_ref(model), None, tensor_parallel_size=tp),
        "why": "Every sweep keeps this arm: a speedup only means something against it.",
    }
    set_verdict(advice, rule_verdicts, rb)
    return advice


def _serve_ref(model: ModelProfile) -> str:
    return model.path if model.source == "local" and model.path else model.id


def _sized(model: ModelProfile, facts: Facts) -> ModelProfile:
    """The profile with size and weight format filled from the catalog where inspection left them out."""
    update = {}
    if not model.params_b:
        update["params_b"] = facts.params_b
    if not model.quantization and facts.family and facts.family.weights_dtype:
        update["quantization"] = facts.family.weights_dtype
    return model.model_copy(update=update) if update else model


def _fit_warning(model: ModelProfile, facts: Facts, hardware: HardwareProfile, tp: int, advice: Advice) -> None:
    sized = _sized(model, facts)
    if fits(sized, hardware, tp) is False:
        advice.warnings.append(
            f"The weights (~{weights_gib(sized):.0f} GiB) plus headroom do not fit {tp} x {gpu_memory_gib(hardware):.0f} GiB: "
            "use more GPUs or a quantized checkpoint."
        )
