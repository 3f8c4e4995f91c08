"""The rule base: methods, config keys, GPUs, models, drafters, evidence and decision rules as data.

Loaded from the shipped rules/ folder, then the user's rules folder, then any --rules folders;
later entries replace earlier ones with the same id.
"""

from specadvisor.rulebase import registry
from specadvisor.rulebase.loader import Origin, RuleBase, default_rulebase, load_rulebase
from specadvisor.rulebase.lookup import (
    config_keys_for,
    drafters_for,
    find_gpu,
    find_model_family,
    methods_for_version,
    workload_defaults,
)
from specadvisor.rulebase.schema import (
    ConfigKeySpec,
    DrafterEntry,
    Evidence,
    GpuSpec,
    MethodSpec,
    ModelFamily,
    Rule,
    RuleThen,
    RuleWhen,
)
from specadvisor.rulebase.versions import LATEST_KNOWN, in_range, parse_version

__all__ = [
    "LATEST_KNOWN",
    "ConfigKeySpec",
    "DrafterEntry",
    "Evidence",
    "GpuSpec",
    "MethodSpec",
    "ModelFamily",
    "Origin",
    "Rule",
    "RuleBase",
    "RuleThen",
    "RuleWhen",
    "config_keys_for",
    "default_rulebase",
    "drafters_for",
    "find_gpu",
    "find_model_family",
    "in_range",
    "load_rulebase",
    "methods_for_version",
    "parse_version",
    "registry",
    "workload_defaults",
]
