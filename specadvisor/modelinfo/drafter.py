"""Inspect a drafter checkpoint and check it against the target before any GPU time is spent.

Speculators-format checkpoints say everything in config.json (algorithm, verifier, default K);
EAGLE/DFlash/DSpark releases are recognised by their architectures; anything else with a language
model config is a plain draft model (method draft_model). A verifier or vocabulary mismatch makes
vLLM fail at start-up or accept nothing, so it is reported as a warning with compatible=False.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from specadvisor.domain import DrafterProfile, ModelProfile
from specadvisor.modelinfo.catalog import published_drafter
from specadvisor.modelinfo.params import estimate_params, num
from specadvisor.modelinfo.profile import language_config, quantization
from specadvisor.rulebase import registry


def _architecture_method(config: dict[str, Any]) -> tuple[str | None, str, bool]:
    """(algorithm, vLLM method, parallel_drafting) from architectures / model_type of a non-speculators drafter."""
    return registry.from_architecture(list(config.get("architectures") or []), config.get("model_type"))


def _block_size(config: dict[str, Any]) -> int | None:
    for scope in (config, config.get("dflash_config") or {}, config.get("transformer_layer_config") or {}):
        value = num(scope, "block_size")
        if value:
            return value
    return None


def _default_k(method: str, block: int | None) -> int | None:
    """DFlash drafts block - 1 tokens (the anchor is a bonus token); DSpark the whole block."""
    return registry.n_limit(method, block) if block else None


def _params_b(shapes: dict[str, Any]) -> float | None:
    """The drafter's parameter count (billions) from its layer shapes: what it costs in GPU memory.
    An EAGLE-3 head's output layer covers its reduced draft vocabulary, not the target's."""
    estimate = estimate_params(shapes)
    if estimate is None:
        return None
    total = estimate[0]
    hidden, vocab, draft_vocab = num(shapes, "hidden_size"), num(shapes, "vocab_size"), num(shapes, "draft_vocab_size")
    if hidden and vocab and draft_vocab and draft_vocab < vocab and not shapes.get("tie_word_embeddings"):
        total -= (vocab - draft_vocab) * hidden
    return float(f"{total / 1e9:.3g}")


def _tail(name: str | None) -> str:
    return (name or "").strip().rstrip("/").rsplit("/", 1)[-1].lower()


def read_drafter(drafter_id: str, config: dict[str, Any], path: str | None) -> DrafterProfile:
    warnings: list[str] = []
    algorithm = config.get("speculators_model_type")
    if isinstance(algorithm, str):
        spec = config.get("speculators_config") or {}
        methods = spec.get("proposal_methods") or [{}]
        method, parallel = registry.from_speculators(algorithm)
        layer_cfg = config.get("transformer_layer_config") or {}
        servable = method is not None
        shapes = {**layer_cfg, **{k: config[k] for k in ("draft_vocab_size",) if k in config}}
        if not servable:
            warnings.append(f"speculators '{algorithm}' checkpoints cannot be served by vLLM directly")
        return DrafterProfile(
            id=drafter_id,
            path=path,
            algorithm=algorithm,
            method=method,
            parallel_drafting=parallel,
            verifier=(spec.get("verifier") or {}).get("name_or_path"),
            default_k=num(methods[0] if isinstance(methods[0], dict) else {}, "speculative_tokens"),
            block_size=_block_size(config),
            vocab_size=num(layer_cfg, "vocab_size") or num(config, "vocab_size"),
            params_b=_params_b(shapes),
            quantization=quantization(config),
            servable=servable,
            warnings=warnings,
        )
    algorithm, method, parallel = _architecture_method(config)
    lm = language_config(config)
    block = _block_size(config)
    return DrafterProfile(
        id=drafter_id,
        path=path,
        algorithm=algorithm or method,
        method=method,
        parallel_drafting=parallel,
        verifier=config.get("target_model") or config.get("base_model_name_or_path") or None,
        default_k=_default_k(method, block),
        block_size=block,
        vocab_size=num(lm, "vocab_size"),
        params_b=_params_b(lm),
        quantization=quantization(config),
        servable=True,
        warnings=warnings,
    )


def check_compatibility(drafter: DrafterProfile, target: ModelProfile) -> DrafterProfile:
    """compatible: False on a verifier or vocabulary mismatch, True when both checks pass, None if unknown."""
    warnings = list(drafter.warnings)
    verdicts: list[bool] = []
    if drafter.verifier:
        verifier = _tail(drafter.verifier)
        names = {_tail(target.id), _tail(target.path)} - {""}
        if verifier not in names:
            variant = any(n.startswith(verifier) or verifier.startswith(n) for n in names)
            if variant:  # e.g. an FP8 or renamed copy of the verifier: usually fine, but say so
                warnings.append(f"drafter was trained for {drafter.verifier}; {target.id} looks like a variant of it, check acceptance")
            else:
                verdicts.append(False)
                warnings.append(
                    f"drafter was trained for {drafter.verifier}, not {target.id}: expect near-zero acceptance "
                    "(use the drafter published for your target, or train one)"
                )
        else:
            verdicts.append(True)
    if drafter.vocab_size and target.vocab_size:
        same_vocab = drafter.vocab_size == target.vocab_size
        verdicts.append(same_vocab)
        if not same_vocab:
            warnings.append(
                f"vocabulary mismatch: drafter {drafter.vocab_size} tokens, target {target.vocab_size}: vLLM needs the drafter to share the target's tokenizer"
            )
    native = registry.native_heads_method()
    assistant = bool(native and drafter.method == native.vllm_method and drafter.algorithm in native.architecture_hints)
    if assistant and not target.mtp.needs_assistant_checkpoint:
        warnings.append("a Gemma 4 assistant checkpoint only drafts for Gemma 4 targets")
        verdicts.append(False)
    compatible = None if not verdicts else all(verdicts)
    return drafter.model_copy(update={"compatible": compatible, "warnings": warnings})


def drafter_from_name(drafter_id: str, reason: str) -> DrafterProfile:
    """Best guess when the drafter's config cannot be read: the catalog row, else the name."""
    row = published_drafter(drafter_id)
    warning = f"drafter config.json not read ({reason})"
    if row is not None:
        return DrafterProfile(
            id=drafter_id,
            method=row.method,
            algorithm=row.method,
            parallel_drafting=row.parallel_drafting,
            verifier=row.target,
            block_size=row.block_size,
            warnings=[f"{warning}: using its catalog entry"],
        )
    algorithm, method, parallel = _architecture_method({"architectures": [Path(drafter_id).name]})
    return DrafterProfile(
        id=drafter_id,
        algorithm=algorithm,
        method=method,
        parallel_drafting=parallel,
        warnings=[f"{warning}: method {method!r} guessed from the name"],
    )
