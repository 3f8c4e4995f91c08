"""advise(): rank speculative methods for one situation by running the rule base over it.

Pure and deterministic: the same inputs and rule files give the same Advice, with every score
change traced to the rule (and evidence) that made it. Local measurements outweigh published ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from specadvisor.advisor import local as local_ev
from specadvisor.advisor.facts import Facts, gather, matches
from specadvisor.advisor.options import Option, gather_options
from specadvisor.advisor.render import serve_command
from specadvisor.advisor.sizing import choose_tensor_parallel, fits, gpu_memory_gib, weights_gib
from specadvisor.advisor.validate import validate_spec_config
from specadvisor.domain import Advice, Candidate, DrafterProfile, EvidenceRef, HardwareProfile, ModelProfile, Session, Workload
from specadvisor.rulebase import Evidence, RuleBase, default_rulebase, drafters_for, find_model_family, methods_for_version

USER_DRAFTER_BONUS = 0.5
_PESSIMISM = {"speculate": 0, "careful": 1, "unlikely": 2}


@dataclass
class _Tally:
    """Per-method state while rules fire."""

    score: float
    grid: list[int]
    config: dict = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)


def _published_ref(ev: Evidence) -> EvidenceRef:
    parts = [
        f"target {ev.target}" if ev.target else "",
        f"dataset {ev.dataset}" if ev.dataset else "",
        f"N={ev.n}" if ev.n else "",
        ev.hardware,
        f"concurrency {ev.concurrency}" if ev.concurrency else "",
        f"vs {ev.versus}" if ev.versus != "no speculation" else "",
    ]
    return EvidenceRef(
        id=ev.id,
        summary=ev.summary,
        source=ev.source,
        date=ev.date,
        speedup_low=ev.speedup_low,
        speedup_high=ev.speedup_high,
        conditions="; ".join(p for p in parts if p),
    )


def _targets_model(ev: Evidence, model: ModelProfile, facts: Facts, rb: RuleBase) -> bool:
    if not ev.target:
        return False
    if ev.target.lower() == model.id.lower():
        return True
    family = find_model_family(ev.target, rb)
    return family is not None and facts.family is not None and family.id == facts.family.id


def _clip_grid(grid: list[int], option: Option, facts: Facts) -> list[int]:
    spec = option.method
    limits = [spec.max_n] if spec.max_n else []
    if spec.vllm_method == "dflash" and option.block_size:
        limits.append(option.block_size - 1)
    if spec.vllm_method == "dspark" and option.block_size:
        limits.append(option.block_size)
    limit = min(limits) if limits else None
    wanted = [*grid, *([option.default_k] if option.default_k else [])]
    kept = [n for n in wanted if limit is None or n <= limit]
    if spec.id == "mtp" and option.origin == "native" and facts.mtp_layers > 1:
        layers = facts.mtp_layers
        kept = [n for n in kept if n <= layers or n % layers == 0]
    if not kept:
        kept = [limit or 1]
    return sorted(set(kept))


def _apply_rules(rb: RuleBase, facts: Facts, tallies: dict[str, _Tally], advice: Advice, user_methods: set[str]) -> list[str]:
    """Fire rules in order; returns the verdict levels the fired rules asked for."""
    verdicts = []
    for rule in rb.rules:
        if not matches(rule.when, facts):
            advice.trace.append(f"- {rule.id}: does not apply")
            continue
        advice.fired_rules.append(rule.id)
        then = rule.then
        effects = []
        touched = set(then.score) | set(then.n_grid) | set(then.config) | set(then.exclude)
        for method, delta in then.score.items():
            if method in tallies and delta:
                tallies[method].score += delta
                effects.append(f"{method} {delta:+g}")
        for method, grid in then.n_grid.items():
            if method in tallies:
                tallies[method].grid = list(grid)
                effects.append(f"{method} N grid {grid}")
        for method, keys in then.config.items():
            if method in tallies:
                tallies[method].config.update(keys)
                effects.append(f"{method} config {keys}")
        for method in then.exclude:
            if method in user_methods:
                advice.warnings.append(f"{rule.why} Your {method} drafter is still measured because you asked for it.")
                effects.append(f"{method} kept (your drafter)")
            elif tallies.pop(method, None) is not None:
                effects.append(f"{method} excluded")
        general = not touched
        for method, tally in tallies.items():
            if general or method in touched:
                tally.reasons.append(rule.why)
                tally.evidence.extend(rule.evidence)
        advice.warnings.extend(w for w in then.warnings if w not in advice.warnings)
        if then.verdict:
            verdicts.append(then.verdict)
            effects.append(f"verdict at most '{then.verdict}'")
        if then.suggest_training:
            advice.suggest_training = True
        if touched and not effects:
            effects.append("no candidate affected")
        advice.trace.append(f"+ {rule.id}: {rule.why}" + (f" [{'; '.join(effects)}]" if effects else "") + (f" (evidence: {', '.join(rule.evidence)})" if rule.evidence else ""))
    return verdicts


def _label(candidate: Candidate, rb: RuleBase) -> str:
    name = rb.methods[candidate.id].name
    return f"{name} with {candidate.drafter}" if candidate.drafter else name


def _verdict(advice: Advice, rule_verdicts: list[str], rb: RuleBase) -> None:
    top = advice.candidates[0] if advice.candidates else None
    computed = "unlikely" if top is None or top.score < 1.0 else "careful" if top.score < 2.0 else "speculate"
    level = max([computed, *rule_verdicts], key=_PESSIMISM.__getitem__)
    fresh = [e for e in (top.evidence if top else []) if e.local and not e.stale and e.speedup_high is not None]
    if fresh:
        best = max(e.speedup_high for e in fresh)
        level = "speculate" if best >= 1.1 else "unlikely" if best < 1.0 else "careful"
        advice.trace.append(f"= verdict from local measurement: {best:.2f}x -> {level}")
    advice.verdict_level = level
    advice.speculation_unlikely = level == "unlikely"
    if top is None:
        advice.verdict = "Speculation is unlikely to pay here: no speculative method fits this model and vLLM version; serve without it."
        return
    label = _label(top, rb)
    if level == "speculate":
        advice.verdict = f"Speculation is likely to pay: start with {label} and sweep N over {top.n_grid} against the no-speculation baseline."
    elif level == "careful":
        advice.verdict = f"Speculation may help modestly: measure {label} against the no-speculation baseline before adopting it."
    else:
        advice.verdict = f"Speculation is unlikely to pay here: keep the no-speculation baseline; measure {label} only to confirm."


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
    catalog = drafters_for(model.id, rb) if family is not None or model.id else []
    facts = gather(hardware, model, workload, family, catalog, drafter, vllm_version)
    available = methods_for_version(vllm_version, rb)
    options, option_warnings = gather_options(model, facts, catalog, drafter, available, rb)

    tp = choose_tensor_parallel(_sized(model, facts), hardware)
    advice = Advice(vllm_version=vllm_version, tensor_parallel_size=tp)
    advice.trace.append(
        f"facts: {facts.vendor} x{facts.gpu_count} ({facts.gpu_memory_gib or '?'} GiB each), model family {family.id if family else 'unknown'}, "
        f"{facts.params_b or '?'}B params ({facts.active_params_b or '?'}B active), MTP layers {facts.mtp_layers}, "
        f"published drafters {len(catalog) + len(model.drafters)}, workload {facts.workload}, concurrency {facts.concurrency}, "
        f"output {facts.output_len} tokens, temperature {facts.temperature}, vLLM {facts.vllm_version}"
    )
    advice.trace.append(f"options: {', '.join(f'{k} ({o.drafter or o.origin})' for k, o in options.items()) or 'none'}")
    advice.warnings.extend(option_warnings)
    if model.mtp.present and model.mtp.confirmed_by_weights is False:
        advice.warnings.append("The config declares MTP heads but the weight index has none (a quantized re-upload?): native MTP is left out.")

    tallies = {key: _Tally(score=o.method.base_score, grid=list(o.method.default_n_grid)) for key, o in options.items()}
    for key, option in options.items():
        if option.origin == "user":
            tallies[key].score += USER_DRAFTER_BONUS
            tallies[key].reasons.append(f"You supplied this drafter ({option.drafter}).")
    user_methods = {key for key, o in options.items() if o.origin == "user"}
    rule_verdicts = _apply_rules(rb, facts, tallies, advice, user_methods)

    measured = local_ev.local_results(local_sessions, rb)
    advice.candidates = _build_candidates(rb, model, facts, options, tallies, measured, advice, workload)
    _fit_warning(model, facts, hardware, tp, advice)
    advice.baseline = {
        "label": "no speculation",
        "speculative_config": None,
        "serve_command": serve_command(_serve_ref(model), None, tensor_parallel_size=tp),
        "why": "Every sweep keeps this arm: a speedup only means something against it.",
    }
    _verdict(advice, rule_verdicts, rb)
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


def _build_candidates(rb, model, facts, options, tallies, measured, advice, workload) -> list[Candidate]:
    candidates = []
    for key, tally in tallies.items():
        option = options[key]
        spec = option.method
        grid = _clip_grid(tally.grid, option, facts)
        config = {"method": spec.vllm_method}
        if option.drafter:
            config["model"] = option.drafter
        config["num_speculative_tokens"] = grid[0]
        config.update(spec.extra_config)
        config.update(spec.default_config)
        config.update(tally.config)
        problems = validate_spec_config(
            config, facts.vllm_version, rulebase=rb,
            mtp_layers=facts.mtp_layers if option.origin == "native" else None, block_size=option.block_size,
        )
        if problems:
            advice.warnings.append(f"{spec.name} left out: {'; '.join(problems)}")
            advice.trace.append(f"x {key}: config invalid ({'; '.join(problems)})")
            continue
        refs: list[EvidenceRef] = []
        score = tally.score
        reasons = list(tally.reasons)
        fresh_speedups = []
        for result in (r for r in measured if r.method_id == key):
            stale = local_ev.is_stale(result, option.drafter, facts.vllm_version)
            refs.append(local_ev.evidence_ref(result, stale))
            delta = local_ev.score_delta(result, stale, workload.concurrency)
            score += delta
            reasons.insert(0, f"Measured on this machine: {result.speedup:.2f}x vs no speculation ({'stale, ' if stale else ''}session {result.session_id[:8]}).")
            advice.trace.append(f"= {key}: local result {result.speedup:.2f}x{' (stale)' if stale else ''} -> score {delta:+.2f}")
            if not stale:
                fresh_speedups.append(result.speedup)
        specific = [ev for ev in rb.evidence.values() if ev.method == key and _targets_model(ev, model, facts, rb)]
        refs += [_published_ref(ev) for ev in specific]
        refs += [_published_ref(rb.evidence[i]) for i in tally.evidence if i in rb.evidence]
        refs = list({ref.id: ref for ref in refs}.values())
        warnings = list(spec.caveats)
        warnings += [f"Needs the {pkg} package in vLLM's environment." for pkg in spec.requires_packages]
        if option.alternatives:
            warnings.append(f"Other published drafters for this method: {', '.join(option.alternatives)}.")
        candidates.append(
            Candidate(
                id=key,
                method=spec.vllm_method,
                drafter=option.drafter,
                speculative_config=config,
                n_grid=grid,
                score=round(score, 3),
                reasons=list(dict.fromkeys(reasons)),
                evidence=refs,
                expected_speedup=_expected(fresh_speedups, specific),
                warnings=warnings,
                parallel_drafting=bool(config.get("parallel_drafting")) or spec.drafting == "parallel",
            )
        )
    candidates.sort(key=lambda c: (-c.score, c.id))
    return candidates


def _expected(fresh: list[float], published: list[Evidence]) -> tuple[float, float] | None:
    if fresh:
        return (round(min(fresh), 3), round(max(fresh), 3))
    bounded = [ev for ev in published if ev.versus == "no speculation" and ev.speedup_low is not None and ev.speedup_high is not None]
    if not bounded:
        return None
    return (min(ev.speedup_low for ev in bounded), max(ev.speedup_high for ev in bounded))
