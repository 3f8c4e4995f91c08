"""Turn scored options into Candidates: N grid within the method's limits, a valid config starting
at the N the evidence expects best (advisor.start_n), local and published evidence, and the expected
speedup where evidence bounds it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from specadvisor.advisor import local as local_ev
from specadvisor.advisor import measured as measured_ev
from specadvisor.advisor import start_n
from specadvisor.advisor.facts import Facts
from specadvisor.advisor.options import Option, facts_platform
from specadvisor.advisor.scoring import Tally
from specadvisor.advisor.validate import validate_spec_config
from specadvisor.domain import Advice, Candidate, EvidenceRef, ModelProfile, Workload
from specadvisor.rulebase import Evidence, RuleBase, registry
from specadvisor.rulebase.contract import load_contract


@dataclass(frozen=True)
class Target:
    """What the gates read of the target: config.json's architecture and model_type, and its text
    config's model_type (the EAGLE-3 allow-list's), from inspection or else the catalog."""

    architecture: str | None
    model_type: str | None
    text_model_type: str | None


def target_identity(model: ModelProfile, facts: Facts) -> Target:
    family = facts.family
    architecture = model.architecture or (family.architecture if family else "") or None
    model_type = model.model_type or (family.model_type if family else "") or None
    inspected_text = model.text_model_type if model.architecture else None
    text = inspected_text or (family.text_model_type if family and not model.architecture else "") or model_type
    return Target(architecture, model_type, text)


def _serve_ref(model: ModelProfile) -> str:
    return model.path if model.source == "local" and model.path else model.id


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


def _clip_grid(grid: list[int], option: Option, facts: Facts, rb: RuleBase) -> list[int]:
    """The grid within vLLM's limits: the drafter's block size (DFlash N <= block - 1), MTP layer multiples.
    When the block cuts the grid, its largest N is added so the deepest usable block is measured."""
    spec = option.method
    limit = start_n.n_limit(option, rb)
    wanted = [*grid, *([option.default_k] if option.default_k else [])]
    kept = [n for n in wanted if limit is None or n <= limit]
    if limit is not None and (option.block_size or option.max_n) and len(kept) < len(wanted) and limit not in kept:
        kept.append(limit)
    if spec.n_multiple_of_layers and option.origin == "native" and facts.mtp_layers > 1:
        layers = facts.mtp_layers
        kept = [n for n in kept if n <= layers or n % layers == 0]
    if not kept:
        kept = [limit or 1]
    return sorted(set(kept))


def build_candidates(
    rb: RuleBase,
    model: ModelProfile,
    facts: Facts,
    options: dict[str, Option],
    tallies: dict[str, Tally],
    measured: list[local_ev.LocalResult],
    advice: Advice,
    workload: Workload,
    gpu: str | None = None,
) -> list[Candidate]:
    """One candidate per surviving option, ranked by what was measured on this model first
    (advisor.measured: here, then this GPU; slower than no speculation last) and by rule score within."""
    candidates = []
    standings: dict[str, measured_ev.Standing] = {}
    for key, tally in tallies.items():
        option = options[key]
        spec = option.method
        grid = _clip_grid(tally.grid, option, facts, rb)
        family_id = facts.family.id if facts.family else None
        target = target_identity(model, facts)
        vllm_method = registry.vllm_name(spec, facts.vllm_version, model_type=target.model_type, family=family_id)
        if vllm_method is None:
            problem = f"{spec.label} has no method name vLLM {facts.vllm_version} accepts for this model (it needs vLLM >= {spec.name_since})"
            advice.warnings.append(f"{spec.label} left out: {problem}")
            advice.trace.append(f"x {key}: {problem}")
            continue
        v0_shape = registry.sends_no_method(spec, facts.vllm_version, model_type=target.model_type, family=family_id)
        # published measurements are of published drafters: they do not rank or set N for the user's own
        on_model = [] if option.origin == "user" else measured_ev.on_this_model(rb, model, facts, key)
        peak = measured_ev.best_n(on_model, gpu)
        start = start_n.choose(option, tally, grid, rb, drafter_k=option.default_k, measured=peak)
        grid = start.grid
        config: dict[str, Any] = {} if v0_shape else {"method": vllm_method}
        if option.drafter:
            config["model"] = option.drafter
        elif spec.uses_native_heads and not load_contract().fills_drafter(vllm_method, target.text_model_type, facts.vllm_version):
            config["model"] = _serve_ref(model)  # before 0.11 vLLM fills the drafter in only for the targets it lists
        config["num_speculative_tokens"] = start.n
        config.update(spec.extra_config)
        config.update(spec.default_config)
        config.update({k: v for k, v in tally.config.items() if k != "num_speculative_tokens"})
        config.update(option.extra_config)
        advice.trace.append(f"= {key}: {start.why}")
        problems = validate_spec_config(
            config,
            facts.vllm_version,
            rulebase=rb,
            mtp_layers=facts.mtp_layers if option.origin == "native" else None,
            block_size=option.block_size,
            platform=facts_platform(facts),
            target_architecture=target.architecture,
            target_model_type=target.text_model_type,
            speculators_type=option.speculators_type,
            implied_method=vllm_method if v0_shape else None,
            drafter_checkpoint=bool(option.drafter),
        )
        if problems:
            advice.warnings.append(f"{spec.label} left out: {'; '.join(problems)}")
            advice.trace.append(f"x {key}: config invalid ({'; '.join(problems)})")
            continue
        refs: list[EvidenceRef] = []
        score = tally.score
        # a rule that only set N or the grid gives way to a measured peak: its sentence would contradict the N shown
        overridden = tally.n_only if peak is not None else {}
        reasons = [r for r in tally.reasons if r not in overridden] + [
            f"Rule {rid}'s start N gives way to the measured peak below." for rid in dict.fromkeys(overridden.values())
        ]
        reasons.append(start.why)
        fresh_speedups = []
        for result in (r for r in measured if r.method_id == key):
            stale = local_ev.is_stale(result, option.drafter, facts.vllm_version)
            refs.append(local_ev.evidence_ref(result, stale))
            delta = local_ev.score_delta(result, stale, workload.concurrency)
            score += delta
            reasons.insert(
                0, f"Measured on this machine: {result.speedup:.2f}x vs no speculation ({'stale, ' if stale else ''}session {result.session_id[:8]})."
            )
            advice.trace.append(f"= {key}: local result {result.speedup:.2f}x{' (stale)' if stale else ''} -> score {delta:+.2f}")
            if not stale:
                fresh_speedups.append(result.speedup)
        specific = [ev for ev in rb.evidence.values() if ev.method == key and measured_ev.targets_model(ev, model, facts, rb)]
        standing = measured_ev.standing(on_model, gpu, max(fresh_speedups) if fresh_speedups else None, facts.workload)
        standings[key] = standing
        if standing.reason:
            reasons.insert(len(fresh_speedups) and 1, standing.reason)  # after "Measured on this machine" where there is one
            advice.trace.append(f"= {key}: rank tier {standing.tier} ({standing.reason})")
        refs += [_published_ref(ev) for ev in specific]
        refs += [_published_ref(rb.evidence[i]) for i in [*tally.evidence, *start.evidence, *standing.evidence] if i in rb.evidence]
        refs = list({ref.id: ref for ref in refs}.values())
        warnings = list(spec.caveats) + list(option.notes)
        if v0_shape:
            warnings.insert(
                0,
                f"vLLM {facts.vllm_version} serves {spec.label} only on its V0 engine: the config names no method (V0 detects {vllm_method} "
                "from the checkpoint) and V0 exposes none of the V1 acceptance counters, so a sweep compares throughput only.",
            )
        if "model" in config and not option.drafter:
            warnings.insert(
                0, f"vLLM {facts.vllm_version} fills the MTP drafter in only for the targets it lists: the config names the target itself as 'model'."
            )
        warnings += [f"Needs the {pkg} package in vLLM's environment." for pkg in spec.requires_packages]
        if not option.reviewed:
            warnings.append(f"{option.drafter} was discovered on the Hugging Face Hub and is unreviewed: check its model card and measure it.")
        if option.alternatives:
            warnings.append(f"Other published drafters for this method: {', '.join(option.alternatives)}.")
        candidates.append(
            Candidate(
                id=key,
                method=vllm_method,
                drafter=option.drafter,
                speculative_config=config,
                n_grid=grid,
                score=round(score, 3),
                reasons=list(dict.fromkeys(reasons)),
                evidence=refs,
                expected_speedup=_expected(fresh_speedups, specific),
                warnings=warnings,
                parallel_drafting=registry.is_parallel(vllm_method, config, rb) or spec.drafting == "parallel",
            )
        )
    return measured_ev.rank(candidates, standings, advice.trace)


def _expected(fresh: list[float], published: list[Evidence]) -> tuple[float, float] | None:
    if fresh:
        return (round(min(fresh), 3), round(max(fresh), 3))
    bounded = [
        (low, high) for ev in published if ev.versus == "no speculation" and (low := ev.speedup_low) is not None and (high := ev.speedup_high) is not None
    ]
    if not bounded:
        return None
    return (min(low for low, _ in bounded), max(high for _, high in bounded))
