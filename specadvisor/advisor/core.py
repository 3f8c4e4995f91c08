"""advise(): rank speculative methods for one situation by running the rule base over it.

Pure and deterministic: the same inputs and rule files give the same Advice, with every score
change traced to the rule (and evidence) that made it. Local measurements outweigh published ones.
"""

from __future__ import annotations

from collections.abc import Sequence

from specadvisor.advisor import local as local_ev
from specadvisor.advisor.candidates import build_candidates
from specadvisor.advisor.facts import Facts, gather
from specadvisor.advisor.options import facts_platform, gather_options
from specadvisor.advisor.render import serve_command
from specadvisor.advisor.scoring import Tally, apply_rules
from specadvisor.advisor.sizing import plan_memory
from specadvisor.advisor.verdict import set_verdict
from specadvisor.domain import Advice, DrafterProfile, HardwareProfile, ModelProfile, Session, Workload
from specadvisor.rulebase import RuleBase, default_rulebase, drafters_for, find_model_family, methods_for_version, registry

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
    tensor_parallel_size: int | None = None,
    params_b: float | None = None,
) -> Advice:
    """Ranked candidates, warnings, the mandatory baseline and a plain verdict for this situation.

    `tensor_parallel_size` and `params_b` are what the user says when the model's size cannot be read
    (a private model offline): without either, an unknown size is reported and no command is built on a guess.
    """
    rb = rulebase or default_rulebase()
    if params_b:
        model = model.model_copy(update={"params_b": params_b, "active_params_b": model.active_params_b or params_b})
    vllm_version = vllm_version or hardware.engine.version
    family = find_model_family(model.id, rb) or (find_model_family(model.family, rb) if model.family else None)
    catalog = drafters_for(model.id, rb)
    facts = gather(hardware, model, workload, family, catalog, drafter, vllm_version)
    platform = facts_platform(facts)
    available = {key: m for key, m in methods_for_version(vllm_version, rb).items() if registry.runs_on(m, platform, vllm_version)}
    options, option_warnings = gather_options(model, facts, catalog, drafter, available, rb)

    memory = _plan(model, facts, hardware, workload, options, rb, tensor_parallel_size)
    tp = memory.tensor_parallel_size or 1
    advice = Advice(
        vllm_version=vllm_version, tensor_parallel_size=tp, tensor_parallel_known=memory.tensor_parallel_size is not None, max_model_len=memory.max_model_len
    )
    if memory.tensor_parallel_size is None:
        advice.missing_inputs = ["--tensor-parallel-size", "--params-b"]
    advice.trace.append(
        f"facts: {facts.vendor} x{facts.gpu_count} ({f'{facts.gpu_memory_gib:.0f}' if facts.gpu_memory_gib else '?'} GiB each), model family {family.id if family else 'unknown'}, "
        f"{facts.params_b or '?'}B params ({facts.active_params_b or '?'}B active), MTP layers {facts.mtp_layers}, "
        f"published drafters {len({d.drafter for d in [*catalog, *model.drafters]})}, workload {facts.workload}, concurrency {facts.concurrency}, "
        f"output {facts.output_len} tokens, temperature {facts.temperature}, vLLM {facts.vllm_version}"
    )
    advice.trace.append(f"options: {', '.join(f'{k} ({o.drafter or o.origin})' for k, o in options.items()) or 'none'}")
    advice.trace.extend(memory.lines)
    advice.warnings.extend(memory.warnings)
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
    advice.baseline = {
        "label": "no speculation",
        "speculative_config": None,
        "serve_command": serve_command(
            _serve_ref(model),
            None,
            tensor_parallel_size=tp,
            extra_args=["--max-model-len", str(memory.max_model_len)] if memory.max_model_len else [],
        )
        if advice.tensor_parallel_known
        else None,
        "why": "Every sweep keeps this arm: a speedup only means something against it.",
    }
    if memory.fits is False:
        rule_verdicts.append("careful")
        advice.trace.append("= verdict at most 'careful': the memory plan does not fit these GPUs")
    if not advice.tensor_parallel_known:
        rule_verdicts.append("careful")
        advice.trace.append("= verdict at most 'careful': the model's size is unknown")
    set_verdict(advice, rule_verdicts, rb)
    return advice


def _serve_ref(model: ModelProfile) -> str:
    return model.path if model.source == "local" and model.path else model.id


def _plan(model, facts: Facts, hardware: HardwareProfile, workload: Workload, options, rb: RuleBase, tp: int | None):
    """The memory plan for the workload, with room for the largest drafter among the options."""
    defaults = rb.workloads.get(workload.kind.value)
    share, label = 0.0, "no drafter"
    for option in options.values():
        if option.drafter and option.method.drafter_share > share:
            share, label = option.method.drafter_share, f"largest drafter ({option.method.label})"
    return plan_memory(
        _sized(model, facts),
        hardware,
        prompt_len=defaults.prompt_len if defaults else 1024,
        output_len=workload.output_len,
        concurrency=workload.concurrency,
        drafter_share=share,
        drafter_label=label,
        tensor_parallel_size=tp,
        catalog_kv_kib=facts.family.kv_kib_per_token if facts.family else None,
    )


def _sized(model: ModelProfile, facts: Facts) -> ModelProfile:
    """The profile with size and weight format filled from the catalog where inspection left them out."""
    update = {}
    if not model.params_b:
        update["params_b"] = facts.params_b
    if not model.active_params_b and facts.active_params_b:
        update["active_params_b"] = facts.active_params_b
    if not model.context_length and facts.family and facts.family.context:
        update["context_length"] = facts.family.context
    if not model.quantization and facts.family and facts.family.weights_dtype:
        update["quantization"] = facts.family.weights_dtype
    return model.model_copy(update=update) if update else model
