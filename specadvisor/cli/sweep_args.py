"""The sweep command's arguments as one typed, immutable object (as vLLM's SweepServeArgs is).

argparse hands back a Namespace whose attributes nothing checks; the sweep's helpers take this
instead, so a renamed or mistyped option is a type error, not an AttributeError mid-sweep. Counts
stay text here ("1k", "1,8"): they are parsed, with their one-line errors, where they are used.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, fields
from pathlib import Path


@dataclass(frozen=True)
class SweepArgs:
    model: str | None = None
    drafter: str | None = None
    method: tuple[str, ...] = ()
    n: str | None = None
    baseline: bool = True
    adaptive: bool = False
    prompts: str = "humaneval"
    num_prompts: str = "32"
    output_len: str | None = None  # None: the prompt source's own (bench.prompts.default_output_len)
    concurrency: str = "1"
    temperature: float = 0.0
    warmup: int = 2
    trials: int = 1
    bracket: bool = True
    drift_threshold: float = 5.0
    confidence: float = 95.0
    budget: float | None = None
    parallel: str = "auto"
    ci_target: float | None = None
    seed: int = 0
    request_rate: float | None = None
    spec_extra: tuple[str, ...] = ()
    slo_tpot_ms: float | None = None
    slo_ttft_ms: float | None = None
    goodput: bool = False
    engine_cmd: str | None = None
    endpoint: str | None = None
    api_key_env: str | None = None
    server_arg: tuple[str, ...] = ()
    ray: str | None = None
    cpu: bool = False
    name: str = ""
    json: bool = False
    resume: str | None = None
    rebuild: bool = False
    entry_point: str | None = None  # hidden: the demo says it started the session (provenance)
    db: Path | None = None  # the global --db option

    @classmethod
    def from_namespace(cls, ns: argparse.Namespace) -> SweepArgs:
        """Every field from the parsed arguments. A new `sweep` flag needs a field here: until it has
        one, every sweep run stops with this error (and so do the sweep CLI tests)."""
        known = {f.name for f in fields(cls)}
        missing = sorted(set(vars(ns)) - known - _NOT_SWEEP_OPTIONS)
        if missing:
            raise TypeError(f"sweep option(s) {', '.join(missing)} have no field in SweepArgs (specadvisor/cli/sweep_args.py)")
        values = {}
        for name in known:
            value = getattr(ns, name)
            values[name] = tuple(value) if isinstance(value, list) else value
        return cls(**values)


_NOT_SWEEP_OPTIONS = {"command", "func"}  # set by the top-level parser
