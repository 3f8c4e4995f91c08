"""What a bundle may hold: counts and value ranges checked after the schema, before anything is written.

The schema says a field is an int; this says it is a sensible one (N >= 1, concurrency >= 1,
acceptance in [0, 1], one arm per id, within the documented limits), so a hostile bundle cannot
crash a report, a listing or the predictor later. The limits are far above a real sweep (tens of
arms, a few thousand samples) and are documented in docs/security.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from specadvisor import bounds, setting_specs
from specadvisor.domain import ArmResult, Session
from specadvisor.errors import InputError

Fail = Callable[[str, str], None]  # (where, problem): reports one problem of a bundle

MAX_ARMS = 100_000
MAX_RESULTS = 100_000
MAX_SAMPLES = 200_000
MAX_POSITIONS = 64
MAX_N = bounds.MAX_N
MAX_CONCURRENCY = int(setting_specs.bound("concurrency").high)
MAX_CONCURRENCY_LEVELS = bounds.MAX_CONCURRENCY_LEVELS
MAX_COUNT = bounds.MAX_INT64  # SQLite's INTEGER
MAX_REQUEST_RECORDS = 200_000  # per-request records per result (over all its runs)
_HINT = "the bundle was edited or corrupted; ask for a fresh `specadvisor sessions export`"


def check_session(session: Session, name: str) -> None:
    """InputError (exit 2) naming the first value out of range."""

    def fail(where: str, problem: str) -> None:
        raise InputError(f"{name}: {where} {problem}", hint=_HINT)

    if len(session.arms) > MAX_ARMS:
        fail("session", f"has {len(session.arms)} arms, over the {MAX_ARMS} limit")
    if len(session.results) > MAX_RESULTS:
        fail("session", f"has {len(session.results)} results, over the {MAX_RESULTS} limit")
    if len(session.samples) > MAX_SAMPLES:
        fail("session", f"has {len(session.samples)} samples, over the {MAX_SAMPLES} limit")
    s = session.settings
    if not s.concurrency:
        fail("settings.concurrency", "is empty")
    levels = {arm.concurrency for arm in session.arms} | set(s.concurrency)
    if len(levels) > MAX_CONCURRENCY_LEVELS:
        fail("session", f"uses {len(levels)} concurrency levels, over the {MAX_CONCURRENCY_LEVELS} limit")
    # Every setting within its bound as declared on SweepSettings (the CLI's and the TUI's too), so a
    # file cannot carry a value the command line would refuse (num_prompts = 2^63-1 grew a rebuild to
    # 6 GB). The schema enforces the same bounds; this names the field when a session is edited in memory.
    for setting, spec in setting_specs.SPECS.items():
        value = getattr(s, setting)
        if not spec.numeric and not spec.choices:
            continue  # text, switches, commands: their type is the model's check
        if setting == "concurrency":
            for i, level in enumerate(value):
                _check_setting(fail, f"settings.concurrency[{i}]", setting, level)
        elif value is not None or not spec.optional:
            _check_setting(fail, f"settings.{setting}", setting, value)
    _check_setting(fail, "session.concurrency", "concurrency", session.concurrency)
    if not 1 <= s.looks <= MAX_COUNT:
        fail("settings.looks", f"is {s.looks}, outside 1..{MAX_COUNT}")
    arm_ids: set[str] = set()
    for i, arm in enumerate(session.arms):
        if arm.id in arm_ids:
            fail(f"arms[{i}].id", f"{arm.id[:40]!r} is used by two arms")
        arm_ids.add(arm.id)
        if arm.n is not None and not 1 <= arm.n <= MAX_N:
            fail(f"arms[{i}].n", f"is {arm.n}, outside 1..{MAX_N}")
        if not 1 <= arm.concurrency <= MAX_CONCURRENCY:
            fail(f"arms[{i}].concurrency", f"is {arm.concurrency}, outside 1..{MAX_CONCURRENCY}")
        if arm.speculative_config is not None and not isinstance(arm.speculative_config.get("method"), str):
            fail(f"arms[{i}].speculative_config", "has no method")
    result_ids: set[str] = set()
    for i, result in enumerate(session.results):
        if result.arm_id in result_ids:
            fail(f"results[{i}].arm_id", f"{result.arm_id[:40]!r} has two results")
        result_ids.add(result.arm_id)
        check_result(result, f"results[{i}]", fail)


def _check_setting(fail: Fail, where: str, name: str, value: object) -> None:
    problem = setting_specs.problem(name, value)
    if problem:
        fail(where, problem)


def check_result(r: ArmResult, where: str, fail: Fail) -> None:
    """Every figure of one result finite and within what a real server could produce (a bundle's
    and `import-bench`'s alike): 1e308 tok/s or a [-1e308, 1e308] interval would otherwise reach
    the predictor, the charts and `sessions show` as overflows and 300-digit numbers."""
    for field in ("completed", "failed", "output_tokens", "input_tokens", "num_drafts", "num_draft_tokens", "num_accepted_tokens"):
        value = getattr(r, field, None)
        if value is not None and not 0 <= value <= MAX_COUNT:
            fail(f"{where}.{field}", f"is {value}, outside 0..{MAX_COUNT}")
    for field, high in (
        ("output_throughput", bounds.MAX_TOKENS_PER_S),
        ("request_throughput", bounds.MAX_TOKENS_PER_S),
        ("achieved_request_rate", bounds.MAX_TOKENS_PER_S),
        ("goodput_rps", bounds.MAX_TOKENS_PER_S),
        ("duration_s", bounds.MAX_DURATION_S),
        ("startup_cold_s", bounds.MAX_DURATION_S),
        ("startup_warm_s", bounds.MAX_DURATION_S),
    ):
        _figure(fail, f"{where}.{field}", getattr(r, field, None), high)
    if r.acceptance_rate is not None and not 0 <= r.acceptance_rate <= 1:
        fail(f"{where}.acceptance_rate", f"is {r.acceptance_rate}, outside 0..1")
    if r.mean_acceptance_length is not None and not 1 <= r.mean_acceptance_length <= MAX_N + 1:
        fail(f"{where}.mean_acceptance_length", f"is {r.mean_acceptance_length}, outside 1..{MAX_N + 1}")
    if len(r.per_position) > MAX_POSITIONS:
        fail(f"{where}.per_position", f"has {len(r.per_position)} entries, over {MAX_POSITIONS}")
    for j, p in enumerate(r.per_position):
        if not 0 <= p.rate <= 1 or p.accepted < 0 or p.drafts < 0 or p.accepted > p.drafts:
            fail(f"{where}.per_position[{j}]", f"is {p.accepted}/{p.drafts} at rate {p.rate}, not a valid acceptance")
    if r.output_throughput_ci is not None:
        low, high = r.output_throughput_ci
        _figure(fail, f"{where}.output_throughput_ci[0]", low, bounds.MAX_TOKENS_PER_S)
        _figure(fail, f"{where}.output_throughput_ci[1]", high, bounds.MAX_TOKENS_PER_S)
        if low > high:
            fail(f"{where}.output_throughput_ci", f"is [{low:g}, {high:g}], its low end above its high end")
    for j, t in enumerate(r.trials):
        _figure(fail, f"{where}.trials[{j}]", t, bounds.MAX_TOKENS_PER_S)
    for name in ("ttft_ms", "tpot_ms", "itl_ms", "e2el_ms"):
        stats = getattr(r, name)
        for key in ("mean", "median", "p90", "p99", "std"):
            _figure(fail, f"{where}.{name}.{key}", getattr(stats, key), bounds.MAX_LATENCY_MS)
    for j, point in enumerate(r.rate_points):
        for key in ("rate", "achieved_rate", "output_throughput"):
            _figure(fail, f"{where}.rate_points[{j}].{key}", getattr(point, key), bounds.MAX_TOKENS_PER_S)
        for key in ("tpot_p50_ms", "tpot_p99_ms", "ttft_p50_ms", "ttft_p99_ms"):
            _figure(fail, f"{where}.rate_points[{j}].{key}", getattr(point, key), bounds.MAX_LATENCY_MS)

    records = [req for run in r.runs for req in run.requests]
    if len(records) > MAX_REQUEST_RECORDS:
        fail(f"{where}.runs", f"hold {len(records)} request records, over {MAX_REQUEST_RECORDS}")
    for req in records:
        if (
            not (math.isfinite(req.latency_ms) and 0 <= req.latency_ms <= bounds.MAX_LATENCY_MS)
            or req.index > MAX_COUNT
            or not 0 <= req.output_tokens <= MAX_COUNT
        ):
            fail(f"{where}.runs[].requests", f"hold an invalid request record (index {req.index}, latency {req.latency_ms} ms)")
        if req.ttft_ms is not None and not (math.isfinite(req.ttft_ms) and 0 <= req.ttft_ms <= bounds.MAX_LATENCY_MS):
            fail(f"{where}.runs[].requests", f"hold an invalid TTFT ({req.ttft_ms} ms)")


def _figure(fail: Fail, where: str, value: float | None, high: float) -> None:
    if value is not None and not (math.isfinite(value) and 0 <= value <= high):
        fail(where, f"is {value:g}, not a finite number from 0 to {high:g}")
