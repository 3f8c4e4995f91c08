"""Cross-references between rule-base entries, checked after all files are merged.

A rule citing evidence that does not exist, or a drafter served with a method vLLM does not know,
would silently weaken every recommendation that depends on it; so each is a load error.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from specadvisor.errors import InputError
from specadvisor.rulebase import locate

if TYPE_CHECKING:
    from specadvisor.rulebase.loader import RuleBase


def _fail(rb: RuleBase, kind: str, key: str, value: str, field: str, problem: str, hint: str) -> None:
    origin = rb.origins[(kind, key)]
    line = locate.value_line(origin.text(), kind, origin.index, value, field)
    raise InputError(f"{origin.file}:{line}: {kind} {key!r}: {problem}", hint=hint)


def _known(names: Iterable[str], label: str) -> str:
    return f"known {label}: {', '.join(sorted(names))}"


def check_references(rb: RuleBase) -> None:
    method_ids = set(rb.methods)
    vllm_methods = rb.vllm_methods
    model_ids = {m.id for m in rb.models}
    key_ids = set(rb.config_keys)

    for key, spec in rb.config_keys.items():
        for method in spec.methods:
            if method not in vllm_methods:
                _fail(rb, "config_key", key, method, "methods", f"unknown vLLM method '{method}'", _known(vllm_methods, "vLLM methods"))

    for key, method_spec in rb.methods.items():
        if method_spec.gains_from and method_spec.gains_from not in rb.methods:
            _fail(rb, "method", key, method_spec.gains_from, "gains_from", f"unknown method '{method_spec.gains_from}'", "use an id from a [[method]] entry")
        for config_key in [*method_spec.extra_config, *method_spec.default_config]:
            if config_key not in key_ids:
                _fail(rb, "method", key, config_key, "extra_config", f"unknown config key '{config_key}'", "declare it as a [[config_key]] or fix the spelling")

    speculators_types = {t for spec in rb.methods.values() for t in spec.speculators_types}
    for drafter in rb.drafters:
        if drafter.method not in vllm_methods:
            _fail(rb, "drafter", drafter.id, drafter.method, "method", f"unknown method '{drafter.method}'", _known(vllm_methods, "vLLM methods"))
        if drafter.speculators_type and drafter.speculators_type not in speculators_types:
            _fail(
                rb,
                "drafter",
                drafter.id,
                drafter.format,
                "format",
                f"unknown speculators type '{drafter.speculators_type}'",
                _known(speculators_types, "speculators types"),
            )

    gpu_ids = {gpu.id for gpu in rb.gpus}
    for key, evidence in rb.evidence.items():
        if evidence.method and evidence.method not in method_ids:
            _fail(rb, "evidence", key, evidence.method, "method", f"unknown method '{evidence.method}'", _known(method_ids, "method ids"))
        for gpu in evidence.gpus:
            if gpu not in gpu_ids:
                _fail(rb, "evidence", key, gpu, "gpus", f"unknown GPU '{gpu}'", _known(gpu_ids, "GPU ids"))

    for rule in rb.rules:
        for evidence_id in rule.evidence:
            if evidence_id not in rb.evidence:
                _fail(
                    rb,
                    "rule",
                    rule.id,
                    evidence_id,
                    "evidence",
                    f"cites missing evidence '{evidence_id}'",
                    "add an [[evidence]] entry with that id or fix the id",
                )
        for family in rule.when.model_family or []:
            if family not in model_ids:
                _fail(rb, "rule", rule.id, family, "model_family", f"unknown model family '{family}'", "use an id from a [[model]] entry")
        then = rule.then
        for method in [*then.about, *then.score, *then.exclude, *then.n_grid, *then.config]:
            if method not in method_ids:
                _fail(rb, "rule", rule.id, method, "then", f"unknown method '{method}'", _known(method_ids, "method ids"))
        for keys in then.config.values():
            for config_key in keys:
                if config_key not in key_ids:
                    _fail(rb, "rule", rule.id, config_key, "config", f"unknown config key '{config_key}'", "use a key vLLM's --speculative-config accepts")
        for method, grid in then.n_grid.items():
            if not grid or any(n < 1 for n in grid):
                _fail(rb, "rule", rule.id, method, "n_grid", f"N grid for '{method}' must be positive integers", "write e.g. [1, 2, 3]")
