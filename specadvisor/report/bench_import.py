"""Import `vllm bench serve --save-result` JSON files measured elsewhere as arms of a session.

Field names follow vLLM's benchmark (contract section 5); acceptance rate there is a percent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from specadvisor import physics
from specadvisor.analysis.arms import slug
from specadvisor.domain import Arm, ArmResult, LatencyStats
from specadvisor.errors import InputError
from specadvisor.figures import position_stats
from specadvisor.store.bundle_limits import check_result
from specadvisor.store.safe_json import parse_untrusted_json, read_regular_file
from specadvisor.textsafe import line

SOURCE = "imported:vllm-bench"
_HINT = "pass the JSON written by vllm bench serve --save-result"
REQUIRED = ("completed", "output_throughput")


def import_bench_results(paths: list[Path | str]) -> list[ArmResult]:
    """One ArmResult per file, arm_id "bench-<file stem>". A malformed file raises InputError naming it."""
    return [bench_result(Path(p)) for p in paths]


def bench_result(path: Path) -> ArmResult:
    data = _read(path)
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise InputError(f"{path}: not a `vllm bench serve --save-result` file (missing {', '.join(missing)})", hint="pass the JSON written by --save-result")
    try:
        result = _result(f"bench-{slug(path.stem)}", data)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputError(f"{path}: unexpected value in a bench result: {line(str(exc), 200)}", hint="pass the JSON written by --save-result") from None

    def fail(where: str, problem: str) -> None:
        raise InputError(f"{line(str(path), 200)}: {where.removeprefix('result.')} {problem}", hint=_HINT)

    check_result(result, "result", fail)  # the figures a bundle may hold, and no others
    physics.enforce(result, None)  # impossible figures become a failed arm naming them, never ok
    return result


def bench_arm(result: ArmResult, spec_config: dict[str, Any] | None, concurrency: int = 1) -> Arm:
    """The arm an imported result stands for; spec_config None means no speculation was on."""
    n = len(result.per_position) or None
    if result.num_drafts is not None and spec_config is None:
        spec_config = {"method": "unknown", "num_speculative_tokens": n or 1}
    if spec_config is None:
        return Arm(id=result.arm_id, label=f"{result.arm_id} (imported, no speculation)", concurrency=concurrency)
    n = spec_config.get("num_speculative_tokens", n)
    return Arm(
        id=result.arm_id,
        label=f"{result.arm_id} (imported, {spec_config.get('method')} N={n})",
        method=spec_config.get("method"),
        n=n,
        speculative_config=spec_config,
        concurrency=concurrency,
    )


def _read(path: Path) -> dict[str, Any]:
    """The file read and parsed with the bundle's limits (a regular file of at most 20 MB: no
    /dev/zero, FIFO or symlink; depth, size and finiteness checked), so a hostile file is one line."""
    try:
        data = parse_untrusted_json(read_regular_file(path), str(path))
    except InputError as exc:
        raise InputError(exc.message, hint=_HINT if exc.hint and "bundle" in exc.hint else exc.hint) from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a JSON object", hint="pass the JSON written by vllm bench serve --save-result")
    return data


def _latency(data: dict[str, Any], metric: str) -> LatencyStats:
    def get(prefix: str) -> float | None:
        value = data.get(f"{prefix}_{metric}")
        return float(value) if value is not None else None

    return LatencyStats(mean=get("mean"), median=get("median"), p90=get("p90"), p99=get("p99"), std=get("std"))


def _result(arm_id: str, data: dict[str, Any]) -> ArmResult:
    result = ArmResult(
        arm_id=arm_id,
        source=SOURCE,
        completed=int(data["completed"]),
        failed=int(data.get("failed") or 0),
        duration_s=_float(data.get("duration")),
        input_tokens=int(data.get("total_input_tokens") or 0),
        output_tokens=int(data.get("total_output_tokens") or 0),
        output_throughput=_float(data["output_throughput"]),
        request_throughput=_float(data.get("request_throughput")),
        ttft_ms=_latency(data, "ttft_ms"),
        tpot_ms=_latency(data, "tpot_ms"),
        itl_ms=_latency(data, "itl_ms"),
        e2el_ms=_latency(data, "e2el_ms"),
    )
    if data.get("spec_decode_num_drafts") is not None:
        drafts = _count(data, "spec_decode_num_drafts")
        result.num_drafts = drafts
        result.num_draft_tokens = _count(data, "spec_decode_draft_tokens")
        result.num_accepted_tokens = _count(data, "spec_decode_accepted_tokens")
        rate = data.get("spec_decode_acceptance_rate")
        result.acceptance_rate = float(rate) / 100.0 if rate is not None else None
        length = data.get("spec_decode_acceptance_length")
        result.mean_acceptance_length = float(length) if length is not None else None
        # The file reports vLLM's own figures (same formulas as specadvisor.figures), rounded; they are
        # kept as the source states them. Per-position counts are not in it: recovered from the rates.
        rates = data.get("spec_decode_per_position_acceptance_rates") or []
        result.per_position = [position_stats(i, float(r) * drafts, drafts, rate=float(r)) for i, r in enumerate(rates)]
    return result


def _float(value: Any) -> float | None:
    return float(value) if value is not None else None


def _count(data: dict[str, Any], key: str) -> int:
    """A counter of the file as a whole count (12.7 drafts is no count: int() would make it 12)."""
    value = data.get(key)
    try:
        return physics.count(0 if value is None else value, key)
    except physics.ImplausibleFigures:
        raise ValueError(f"{key} is {line(repr(value), 40)}, not a whole count") from None
