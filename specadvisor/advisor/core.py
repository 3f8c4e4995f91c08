"""advise(): rank speculative methods for one situation by running the rule base over it.

Pure and deterministic: the same inputs and rule files give the same Advice, with every score
change traced to the rule (and evidence) that made it. Local measurements outweigh published ones.
"""

from __future__ import annotations

from collections.abc import Sequence

from specadvisor.advisor import local as local_ev
from specadvisor.advisor.candidates import build_candidates, target_identity
from specadvisor.advisor.facts import Facts, gather
from specadvisor.advisor.gates import load_gate
from specadvisor.advisor.measured import gpu_id
from specadvisor.advisor.options import Option, facts_platform, gather_options, is_reupload
from specadvisor.advisor.render import serve_command
from specadvisor.advisor.scoring import Tally, apply_rules
from specadvisor.advisor.sizing import BASELINE, ArmLoad, MemoryPlan, plan_memory, weight_format, weights_gib
from specadvisor.advisor.verdict import set_does_not_fit, set_headline, set_verdict
from specadvisor.domain import Advice, DrafterProfile, HardwareProfile, ModelProfile, Session, Workload
from specadvisor.rulebase import ModelFamily, RuleBase, default_rulebase, drafters_for, find_model_family, registry

USER_DRAFTER_BONUS = 0.5
UNCONFIRMED_MTP_PENALTY = 2.0  # below the lookup methods: a stripped MTP layer rejects every draft


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
    available = registry.served_methods(vllm_version, platform, rb)
    options, option_warnings = gather_options(model, facts, catalog, drafter, available, rb)

    memory = _plan(model, facts, hardware, workload, options, rb, tensor_parallel_size, drafter)
    tp = memory.tensor_parallel_size or 1
    advice = Advice(
        vllm_version=vllm_version,
        tensor_parallel_size=tp,
        tensor_parallel_known=memory.tensor_parallel_size is not None,
        max_model_len=memory.max_model_len,
        fits=memory.fits,
        memory=memory.assumptions,
    )
    if memory.tensor_parallel_size is None:
        advice.missing_inputs = ["--tensor-parallel-size", "--params-b"]
    gate = load_gate(model.id, target_identity(model, facts).architecture, vllm_version)
    advice.target_check = gate.state  # type: ignore[assignment]  # LoadGate.state is one of the Literal's values
    advice.trace.append(f"gate: {gate.message}")
    if family is not None and family.trust_remote_code:
        advice.serve_flags = ["--trust-remote-code"]
    advice.trace.append(
        f"facts: {facts.vendor} x{facts.gpu_count} ({f'{facts.gpu_memory_gib:.0f}' if facts.gpu_memory_gib else '?'} GiB each), model family {family.id if family else 'unknown'}, "
        f"{facts.params_b or '?'}B params ({facts.active_params_b or '?'}B active), MTP layers {facts.mtp_layers}, "
        f"published drafters {len({d.drafter for d in catalog} | {d.drafter for d in model.drafters})}, workload {facts.workload}, concurrency {facts.concurrency}, "
        f"output {facts.output_len} tokens, temperature {facts.temperature}, vLLM {facts.vllm_version}"
    )
    advice.trace.append(f"options: {', '.join(f'{k} ({o.drafter or o.origin})' for k, o in options.items()) or 'none'}")
    advice.trace.extend(memory.lines)
    advice.warnings.extend(memory.warnings)
    advice.warnings.extend(option_warnings)
    options = _fitting(options, memory, advice, workload.concurrency)
    if model.mtp.present and model.mtp.confirmed_by_weights is False:
        advice.warnings.append("The config declares MTP heads but the weight index has none (a quantized re-upload?): native MTP is left out.")

    tallies = {key: Tally(score=o.method.base_score, grid=list(o.method.default_n_grid)) for key, o in options.items()}
    for key, option in options.items():
        if option.origin == "user":
            tallies[key].score += USER_DRAFTER_BONUS
            tallies[key].reasons.append(f"You supplied this drafter ({option.drafter}).")
    for key, option in options.items():
        if option.origin == "native" and is_reupload(model, facts):
            tallies[key].score -= UNCONFIRMED_MTP_PENALTY
            tallies[key].reasons.append(option.notes[0])
            advice.trace.append(f"= {key}: -{UNCONFIRMED_MTP_PENALTY:g}, MTP heads unconfirmed on a re-upload")
    user_methods = {key for key, o in options.items() if o.origin == "user"}
    rule_verdicts = apply_rules(rb, facts, tallies, advice, user_methods)

    measured = local_ev.local_results(local_sessions, rb)
    advice.candidates = build_candidates(rb, model, facts, options, tallies, measured, advice, workload, gpu_id(hardware, rb))
    advice.baseline = {
        "label": "no speculation",
        "speculative_config": None,
        "serve_command": serve_command(
            _serve_ref(model),
            None,
            tensor_parallel_size=tp,
            extra_args=[*(["--max-model-len", str(memory.max_model_len)] if memory.max_model_len else []), *advice.serve_flags],
        )
        if advice.tensor_parallel_known and memory.fits is not False and gate.state == "loads"
        else None,
        "why": "Every sweep keeps this arm: a speedup only means something against it.",
    }
    if memory.fits is False:
        rule_verdicts.append("careful")
        advice.trace.append("= verdict at most 'careful': the memory plan does not fit these GPUs")
    if not advice.tensor_parallel_known:
        rule_verdicts.append("careful")
        advice.trace.append("= verdict at most 'careful': the model's size is unknown")
    if gate.state != "loads":
        rule_verdicts.append("careful")
        advice.trace.append(f"= verdict at most 'careful': {gate.state}")
    if gate.state == "does-not-load":
        for candidate in advice.candidates:
            advice.trace.append(f"x {candidate.id}: vLLM {vllm_version} cannot load the target")
        advice.candidates = []
    set_verdict(advice, rule_verdicts, rb)
    if gate.state == "unverified":
        advice.warnings.insert(0, gate.message)
    if gate.state != "loads" and memory.fits is not False:
        set_headline(advice, gate.message if gate.state == "does-not-load" else f"{gate.message} {advice.verdict}")
    if memory.fits is False:
        set_does_not_fit(advice, _does_not_fit(memory, hardware))
    return advice


def _does_not_fit(memory: MemoryPlan, hardware: HardwareProfile) -> str:
    """The headline when the plan does not fit: where, how much it needs and has, and what to change."""
    tp = memory.tensor_parallel_size or 1
    need = (memory.need_gib or 0) * tp
    has = (memory.usable_gib or 0) * tp
    gpus = f"{tp}x{hardware.gpus[0].name}" if hardware.gpus else "these GPUs"
    return (
        f"Does not fit on {gpus}: needs about {need:.0f} GiB, has {has:.0f} GiB usable. "
        "Change the GPUs or their count (--gpu NAMExCOUNT / --tensor-parallel-size), or pick a smaller or quantized checkpoint; "
        "no serve command until it fits."
    )


def _serve_ref(model: ModelProfile) -> str:
    return model.path if model.source == "local" and model.path else model.id


def _drafter_gib(option: Option, rb: RuleBase, user: DrafterProfile | None, active_bf16_gib: float | None) -> tuple[float, str] | None:
    """The drafter's weights in GiB and where the figure comes from: its own config or catalog entry
    (parameters x its bytes per parameter), else the method's share of the target's ACTIVE parameters
    in bf16 (an allowance: a head or draft model scales with the target's width, not its expert count)."""
    if not option.drafter:
        return None
    if option.origin == "user" and user is not None and user.params_b:
        size = user.params_b * 1e9 * (weight_format(user.quantization or "") or 2.0) / 2**30
        return size, f"drafter {option.drafter} ({user.params_b:g}B from its config.json)"
    entry = next((d for d in rb.drafters if d.drafter.lower() == option.drafter.lower()), None)
    if entry is not None and entry.params_b:
        per_param = weight_format(entry.weights_dtype) if entry.weights_dtype else weight_format(entry.drafter)
        return entry.params_b * 1e9 * (per_param or 2.0) / 2**30, f"drafter {entry.drafter} ({entry.params_b:g}B from the drafter catalog)"
    if active_bf16_gib is None:
        return None
    share = option.method.drafter_share
    return (
        active_bf16_gib * share,
        f"drafter {option.drafter} (size not published: {share:.0%} of the target's active parameters allowed for {option.method.label})",
    )


def _native_heads(option: Option, sized: ModelProfile, facts: Facts) -> ArmLoad | None:
    """The target's own MTP layers, loaded only when speculating (vLLM skips them otherwise): their share
    of the weights is the layer count over the model's layers where config.json gives it, else the
    method's share (DeepSeek-V3's one MTP module is 11.5B of 671B parameters)."""
    weights = weights_gib(sized)
    if not option.method.uses_native_heads or weights is None or facts.mtp_layers < 1:
        return None
    layers = sized.num_hidden_layers
    share = facts.mtp_layers / layers if layers else option.method.drafter_share
    if not share:
        return None
    origin = f"{facts.mtp_layers} of {layers} layers" if layers else f"{share:.0%} of the weights, an allowance"
    return ArmLoad(option.method.id, weights * share, share, f"its {facts.mtp_layers} MTP layer(s) ({origin})")


def _plan(
    model: ModelProfile,
    facts: Facts,
    hardware: HardwareProfile,
    workload: Workload,
    options: dict[str, Option],
    rb: RuleBase,
    tp: int | None,
    user: DrafterProfile | None,
) -> MemoryPlan:
    """The memory plan for the workload, one arm kind per option: the baseline (and the lookup methods,
    which load nothing more) and each drafter, charged only its own weights and KV cache."""
    defaults = rb.workloads.get(workload.kind.value)
    sized = _sized(model, facts.family, facts.params_b, facts.active_params_b)
    active = sized.active_params_b or sized.params_b
    active_bf16_gib = active * 1e9 * 2 / 2**30 if active else None
    arms = [BASELINE]
    for key, option in options.items():
        found = _drafter_gib(option, rb, user, active_bf16_gib)
        load = ArmLoad(key, found[0], option.method.drafter_share, found[1]) if found else _native_heads(option, sized, facts)
        if load is not None:
            arms.append(load)
    return plan_memory(
        sized,
        hardware,
        prompt_len=defaults.prompt_len if defaults else 1024,
        output_len=workload.output_len,
        concurrency=workload.concurrency,
        tensor_parallel_size=tp,
        catalog_kv_kib=facts.family.kv_kib_per_token if facts.family else None,
        mla=bool(facts.family and facts.family.mla),
        kv_heads=facts.family.kv_heads if facts.family and not model.kv_heads else None,
        arms=arms,
    )


def _fitting(options: dict[str, Option], memory: MemoryPlan, advice: Advice, concurrency: int) -> dict[str, Option]:
    """The options whose arm starts beside the weights at the plan's TP. When the baseline fits and a
    drafter does not, that drafter's arm is left out, said, and nothing else is refused."""
    if memory.fits is not True:
        return options
    kept = {}
    tp = memory.tensor_parallel_size
    baseline = memory.arms.get(BASELINE.key)
    for key, option in options.items():
        fit = memory.arms.get(key)
        if fit is None:
            kept[key] = option
            continue
        if not fit.fits:
            advice.warnings.append(
                f"{option.method.label} with {fit.load.label} left out: with its {fit.load.drafter_gib:.1f} GiB drafter it needs about "
                f"{fit.need_gib:.0f} GiB per GPU at tensor parallel {tp}, over the {memory.usable_gib or 0:.0f} GiB usable; "
                "the baseline and the lookup arms fit. More GPUs or a quantized checkpoint make room for it."
            )
            advice.trace.append(f"x {key}: its drafter does not fit beside the weights at TP {tp}")
            continue
        if fit.held is not None and fit.held < concurrency and (baseline is None or baseline.held is None or fit.held < baseline.held):
            option.notes.append(
                f"With its drafter loaded the KV cache holds about {fit.held} of the {concurrency} concurrent requests at tensor parallel {tp} "
                f"(the baseline about {baseline.held if baseline and baseline.held is not None else '?'}): measure at what it sustains."
            )
        kept[key] = option
    return kept


def sized_profile(model: ModelProfile, rulebase: RuleBase | None = None) -> ModelProfile:
    """The profile every memory figure reads: size and weight format filled from the model catalog where
    inspection left them out (DeepSeek-V3's catalog entry says FP8), as the advice's own memory plan
    sizes it, so a plan's check and the advice never give one model two weights."""
    rb = rulebase or default_rulebase()
    family = find_model_family(model.id, rb) or (find_model_family(model.family, rb) if model.family else None)
    params = model.params_b or (family.params_b if family else None)
    return _sized(model, family, params, model.active_params_b or (family.active_b if family else None) or params)


def _sized(model: ModelProfile, family: ModelFamily | None, params_b: float | None, active_params_b: float | None) -> ModelProfile:
    """The profile with size and weight format filled from the catalog where inspection left them out."""
    update: dict[str, object] = {}
    if not model.params_b:
        update["params_b"] = params_b
    if not model.active_params_b and active_params_b:
        update["active_params_b"] = active_params_b
    if not model.context_length and family and family.context:
        update["context_length"] = family.context
    if not model.quantization and weight_format(model.id) is None and family and family.weights_dtype:
        update["quantization"] = family.weights_dtype  # the id's own format (-NVFP4, -BF16) wins over the family's
    return model.model_copy(update=update) if update else model
