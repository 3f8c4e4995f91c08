"""Results already measured on this machine, which outweigh published numbers.

A local result is stale when it was measured with another vLLM version or another drafter than
the one now proposed: it still informs, at half weight, and is marked so the user re-measures.
"""

from __future__ import annotations

from dataclasses import dataclass

from specadvisor.advisor.options import method_id_for
from specadvisor.domain import ArmStatus, EvidenceRef, Session
from specadvisor.rulebase import parse_version


@dataclass(frozen=True)
class LocalResult:
    method_id: str
    drafter: str | None
    speedup: float
    n: int | None
    concurrency: int
    session_id: str
    date: str
    vllm_version: str | None
    label: str


def _ok_throughput(session: Session, arm_id: str) -> float | None:
    result = session.result_for(arm_id)
    if result is None or result.status != ArmStatus.ok or not result.output_throughput:
        return None
    return result.output_throughput


def local_results(sessions, rb) -> list[LocalResult]:
    """Best speedup per (session, method) against the same session's baseline at the same concurrency."""
    found: dict[tuple[str, str], LocalResult] = {}
    for session in sessions:
        baselines = {}
        for arm in session.arms:
            throughput = _ok_throughput(session, arm.id)
            if arm.is_baseline and throughput:
                baselines[arm.concurrency] = throughput
        for arm in session.arms:
            throughput = _ok_throughput(session, arm.id)
            base = baselines.get(arm.concurrency)
            if arm.is_baseline or not throughput or not base:
                continue
            config = arm.speculative_config or {}
            method_id = method_id_for(str(config.get("method", "")), bool(config.get("parallel_drafting", False)), rb)
            if method_id is None:
                continue
            result = LocalResult(
                method_id=method_id,
                drafter=config.get("model"),
                speedup=throughput / base,
                n=arm.n or config.get("num_speculative_tokens"),
                concurrency=arm.concurrency,
                session_id=session.id,
                date=session.created_at.date().isoformat(),
                vllm_version=session.vllm_version,
                label=arm.label or arm.id,
            )
            key = (session.id, method_id)
            if key not in found or result.speedup > found[key].speedup:
                found[key] = result
    return sorted(found.values(), key=lambda r: (r.method_id, r.date, r.session_id))


def _same_version(a: str | None, b: str | None) -> bool:
    if not a or not b:
        return True
    return parse_version(a) == parse_version(b)


def is_stale(result: LocalResult, drafter: str | None, vllm_version: str | None) -> bool:
    return not _same_version(result.vllm_version, vllm_version) or (drafter is not None and result.drafter != drafter)


def evidence_ref(result: LocalResult, stale: bool) -> EvidenceRef:
    why_stale = " (stale: measured with another vLLM version or drafter; re-measure)" if stale else ""
    return EvidenceRef(
        id=f"local:{result.session_id[:8]}:{result.method_id}",
        summary=f"Measured here: {result.label} gave {result.speedup:.2f}x output throughput vs no speculation{why_stale}",
        source=f"local session {result.session_id}",
        date=result.date,
        speedup_low=round(result.speedup, 3),
        speedup_high=round(result.speedup, 3),
        conditions=f"N={result.n}, concurrency {result.concurrency}, vLLM {result.vllm_version or 'unknown'}",
        local=True,
        stale=stale,
    )


def score_delta(result: LocalResult, stale: bool, concurrency: int) -> float:
    """Up to +-2 for a fresh result at the same concurrency; half for stale, half again for other loads."""
    weight = (0.5 if stale else 1.0) * (1.0 if result.concurrency == concurrency else 0.5)
    return max(-2.0, min(2.0, 2.0 * (result.speedup - 1.0))) * weight
