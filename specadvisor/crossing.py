"""What crosses from a bundle or an endpoint into a command run here: one allow-list, a deliberate
security decision.

A bundle is a file anyone could have written, and an endpoint's /server_info is what a server anyone
runs chose to say. `sweep --resume ID --rebuild`, `export-plan` and the report's serve-params turn a
session's arms into servers launched (or to be launched) on this machine, so they take from a bundle
exactly this and nothing else (an endpoint's speculative config passes the same filter before it is
stored, `endpoint_config`, so a session measured on an endpoint exports only what crossed):

- **the method**: a name the method registry offers (rules/methods.toml), resolved to its registry
  entry; the registry then supplies the method's own keys (P-EAGLE's parallel_drafting). The
  bundle's `parallel_drafting` only picks between two registry entries; its value never crosses.
- **N**: a whole number from 1 to `bounds.MAX_N` and within the method's own limit.
- **numeric speculative-config keys** the registry declares for that method with both `min_value`
  and `max_value` (`NUMERIC_KEY_TYPES`), as finite numbers within them.
- **measurement settings** named in `CROSSING_SETTINGS`, within the bounds declared on
  `domain.SweepSettings` (read through `specadvisor.setting_specs`; the CLI checks its flags against them too).

Never: strings (`"quantization": "$(touch x)"`, a revision, an attention backend), booleans
(`trust_remote_code`, `enforce_eager`), lists, dicts, and the drafter `model` (with a Hub id that
is the bundle author's checkpoint, and possibly code, on this machine). The drafter is re-derived
here: the user's `--drafter`, else the catalog's published drafter for the target and method; when
neither exists the arm is dropped with a note naming it. The engine command, server arguments,
prompt paths and serve commands never cross either (see specadvisor.trust and docs/security.md).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from specadvisor import bounds, setting_specs, textsafe
from specadvisor.domain import Arm, Session, SweepSettings
from specadvisor.rulebase import lookup, registry
from specadvisor.rulebase.loader import RuleBase, default_rulebase
from specadvisor.rulebase.schema import MethodSpec

# Settings a rebuilt plan takes from the bundle, each within its bound on SweepSettings; the rest of
# SweepSettings (engine command, server args, endpoint, prompt file, scheduling) comes from here.
CROSSING_SETTINGS = ("num_prompts", "output_len", "temperature", "seed", "warmup", "trials", "concurrency", "request_rate", "slo_tpot_ms", "slo_ttft_ms")
# Speculative-config keys whose bundle value never crosses but which are re-derived here.
REDERIVED_KEYS = ("method", "num_speculative_tokens", "parallel_drafting", "model")
# The only config-key types that may cross (as numbers within declared bounds).
NUMERIC_KEY_TYPES = ("int", "float")
_MAX_METHOD_CHARS = 64


@dataclass
class CrossedArm:
    """One arm as it crosses: the registry's method, N, the numeric keys that passed, its level."""

    method: MethodSpec
    n: int
    keys: dict[str, int | float]
    concurrency: int
    drafter: str | None = None

    def speculative_config(self, rb: RuleBase | None = None) -> dict[str, Any]:
        """The config launched here: the registry's method and keys, the crossed numbers, N, the drafter."""
        vllm_method, keys = registry.resolve(self.method.id, dict(self.keys), rb)
        config: dict[str, Any] = {"method": vllm_method, **keys, "num_speculative_tokens": self.n}
        if self.drafter:
            config["model"] = self.drafter
        return config


@dataclass
class Crossing:
    arms: list[CrossedArm] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # one line per dropped arm or ignored key, safe to print


@dataclass
class EndpointConfig:
    """An endpoint's speculative config as it may be stored: `config` None with `problem` set when it
    cannot cross at all (a method the registry does not offer, an N out of range)."""

    config: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)  # what was dropped, one safe line each
    problem: str | None = None


def crossing_arms(session: Session, *, target_model: str, drafter: str | None = None, rb: RuleBase | None = None) -> Crossing:
    """The speculative arms of an imported session as they may cross (baseline arms are left out:
    every plan measures its own)."""
    rb = rb or default_rulebase()
    out = Crossing()
    ignored: set[str] = set()
    ask = _Lookups(rb, target_model, drafter)
    for arm in session.arms:
        if arm.is_baseline:
            continue
        crossed = _cross_arm(arm, target_model, drafter, rb, out.notes, ignored, ask)
        if crossed is not None:
            out.arms.append(crossed)
    if ignored:
        shown = ", ".join(textsafe.line(k, 40) for k in sorted(ignored)[:8]) + (", …" if len(ignored) > 8 else "")
        out.notes.append(f"ignored speculative-config keys from the bundle (only declared numbers cross): {shown}")
    return out


def crossed_config(config: dict[str, Any], *, target_model: str, drafter: str | None = None, rb: RuleBase | None = None) -> dict[str, Any] | None:
    """One imported speculative config (a recommendation's) as it may be printed to run here; None
    when it cannot cross (an unknown method, no drafter this machine can name)."""
    rb = rb or default_rulebase()
    arm = Arm(id="recommended", label="recommended", speculative_config=config)
    crossed = _cross_arm(arm, target_model, drafter, rb, [], set())
    return crossed.speculative_config(rb) if crossed is not None else None


def endpoint_config(config: dict[str, Any] | None, rb: RuleBase | None = None) -> EndpointConfig:
    """A running server's speculative config (its /server_info) through the same allow-list before
    it is stored: the registry's method, N, declared numbers. The server's drafter `model`, strings
    (`quantization`, `revision`), booleans (`trust_remote_code`) and anything else are dropped and
    named in a note: the session is local, so `export-plan` and the report would otherwise print
    them as something to run here."""
    if config is None:
        return EndpointConfig()
    rb = rb or default_rulebase()
    ask = _Lookups(rb, "", None)
    name = config.get("method")
    spec = ask.method(name, config.get("parallel_drafting") is True)
    if spec is None:
        return EndpointConfig(problem=f"method {textsafe.line(repr(name), 40)} is not a method this machine's registry offers")
    n = config.get("num_speculative_tokens")
    limit = ask.limit(spec)
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= limit):
        return EndpointConfig(problem=f"num_speculative_tokens {textsafe.line(repr(n), 30)} is not a whole number from 1 to {limit}")
    ignored: set[str] = set()
    keys = _declared_numbers(config, ask.allowed(spec), ignored)
    vllm_method, resolved = registry.resolve(spec.id, dict(keys), rb)
    crossed: dict[str, Any] = {"method": vllm_method, **resolved}
    if n is not None:
        crossed["num_speculative_tokens"] = n
    notes = []
    if ignored:
        shown = ", ".join(textsafe.line(k, 40) for k in sorted(ignored)[:8]) + (", …" if len(ignored) > 8 else "")
        notes.append(f"not stored from the endpoint's speculative config (only the method, N and declared numbers are kept): {shown}")
    return EndpointConfig(config=crossed, notes=notes)


def crossing_settings(settings: SweepSettings) -> dict[str, Any]:
    """The bundle's measurement settings that are within the CLI's bounds (import already refuses
    the others; this is the second lock on the same door)."""
    out: dict[str, Any] = {}
    for name in CROSSING_SETTINGS:
        value = getattr(settings, name)
        if name == "concurrency":
            levels = [c for c in value if setting_specs.problem("concurrency", c) is None]
            if levels and len(set(levels)) <= bounds.MAX_CONCURRENCY_LEVELS:
                out[name] = sorted(set(levels))
        elif value is None or setting_specs.problem(name, value) is None:
            out[name] = value
    return out


_Key = TypeVar("_Key", bound=Hashable)
_Value = TypeVar("_Value")


def _memo(cache: dict[_Key, _Value], key: _Key, compute: Callable[[], _Value]) -> _Value:
    """`cache[key]`, computed once."""
    if key not in cache:
        cache[key] = compute()
    return cache[key]


class _Lookups:
    """The registry questions of one crossing, each asked once per method (a 100,000-arm bundle
    has a handful of methods): the crossing stays linear and cheap in the number of arms."""

    def __init__(self, rb: RuleBase, target: str, drafter: str | None):
        self.rb, self.target, self.given = rb, target, drafter
        self._methods: dict[tuple[str, bool], MethodSpec | None] = {}
        self._limits: dict[str, int] = {}
        self._keys: dict[str, dict[str, Any]] = {}
        self._needs: dict[str, bool] = {}
        self._drafters: dict[tuple[str, int], str | None] = {}

    def method(self, name: object, parallel: bool) -> MethodSpec | None:
        if not isinstance(name, str):
            return None
        return _memo(self._methods, (name, parallel), lambda: _method(name, parallel, self.rb))

    def limit(self, spec: MethodSpec) -> int:
        return _memo(self._limits, spec.id, lambda: min(bounds.MAX_N, registry.n_limit(spec.vllm_method, None, self.rb) or bounds.MAX_N))

    def allowed(self, spec: MethodSpec) -> dict[str, Any]:
        return _memo(self._keys, spec.id, lambda: lookup.config_keys_for(spec.vllm_method, None, self.rb))

    def drafter(self, spec: MethodSpec, n: int) -> tuple[bool, str | None]:
        """(needs one, the one to use)."""
        needs = _memo(self._needs, spec.id, lambda: registry.needs_drafter(spec.id, self.rb))
        return needs, (_memo(self._drafters, (spec.id, n), lambda: _drafter(spec, n, self.target, self.given, self.rb)) if needs else None)


def _cross_arm(arm: Arm, target: str, drafter: str | None, rb: RuleBase, notes: list[str], ignored: set[str], ask: _Lookups | None = None) -> CrossedArm | None:
    ask = ask or _Lookups(rb, target, drafter)
    config = arm.speculative_config or {}
    label = textsafe.line(arm.label or arm.id, 60)
    name = config.get("method", arm.method)
    spec = ask.method(name, config.get("parallel_drafting") is True)
    if spec is None:
        notes.append(f"dropped arm {label}: method {textsafe.line(repr(name), 40)} is not a method this machine's registry offers")
        return None
    n = arm.n if arm.n is not None else config.get("num_speculative_tokens")
    limit = ask.limit(spec)
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= limit:
        notes.append(f"dropped arm {label}: N {textsafe.line(repr(n), 30)} is not a whole number from 1 to {limit}")
        return None
    keys = _declared_numbers(config, ask.allowed(spec), ignored)
    needs, chosen = ask.drafter(spec, n)
    if needs and chosen is None:
        notes.append(f"dropped arm {label}: {spec.label} needs a drafter and the bundle's is never used; pass --drafter MODEL")
        return None
    return CrossedArm(method=spec, n=n, keys=keys, concurrency=arm.concurrency, drafter=chosen)


def _declared_numbers(config: dict[str, Any], allowed: dict[str, Any], ignored: set[str]) -> dict[str, int | float]:
    """The config's keys the registry declares for the method with both bounds, as numbers within
    them; every other key (but the re-derived ones) is added to `ignored`."""
    keys: dict[str, int | float] = {}
    for key, value in config.items():
        if key in REDERIVED_KEYS:
            if key == "model":
                ignored.add(key)  # named in the note: a bundle's or an endpoint's drafter is never used
            continue
        key_spec = allowed.get(key)
        if key_spec is None or key_spec.type not in NUMERIC_KEY_TYPES or key_spec.min_value is None or key_spec.max_value is None:
            ignored.add(str(key))
            continue
        bound = bounds.Bound(key, key_spec.min_value, key_spec.max_value, whole=key_spec.type == "int")
        if bound.problem(value) is not None:
            ignored.add(str(key))
            continue
        keys[key] = value
    return keys


def _method(name: object, parallel: bool, rb: RuleBase) -> MethodSpec | None:
    """The registry entry a bundle's method name means, or None (unknown, not offered, not a plain name)."""
    if not isinstance(name, str) or not name or len(name) > _MAX_METHOD_CHARS or textsafe.line(name) != name:
        return None
    spec = registry.by_vllm_name(name, parallel, rb) or registry.get(name, rb)
    return spec if spec is not None and spec.offer else None


def _drafter(spec: MethodSpec, n: int, target: str, given: str | None, rb: RuleBase) -> str | None:
    """The user's --drafter, else the first catalog drafter published for this target and method."""
    if given:
        return given
    for entry in lookup.drafters_for(target, rb):
        found = registry.by_vllm_name(entry.method, entry.parallel_drafting, rb)
        if found is not None and found.id == spec.id and (entry.max_n is None or n <= entry.max_n):
            return entry.drafter
    return None
