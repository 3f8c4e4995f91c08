"""Results already measured on this machine, which outweigh published numbers.

A local result is stale when it was measured with another vLLM version or another drafter than
the one now proposed: it still informs, at half weight, and is marked so the user re-measures.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from specadvisor.advisor.options import method_id_for
from specadvisor.domain import ArmStatus, EvidenceRef, Session
from specadvisor.figures import all_speedups
from specadvisor.rulebase import RuleBase, parse_version


@dataclass(frozen=True)
class LocalResult:
    method_id: str
    drafter: str | None
    speedup: float
    speedup_ci: tuple[float, float] | None
    n: int | None
    concurrency: int
    session_id: str
    date: str
    vllm_version: str | None
    label: str


def local_results(sessions: Iterable[Session], rb: RuleBase) -> list[LocalResult]:
    """Best speedup per (session, method) against the same session's baseline at the same concurrency.

    Only arms that finished count: an arm stopped early by --adaptive is a partial measurement.
    """
    found: dict[tuple[str, str], LocalResult] = {}
    for session in sessions:
        speedups = all_speedups(session)
        for arm in session.arms:
            result = session.result_for(arm.id)
            if arm.is_baseline or result is None or result.status != ArmStatus.ok:
                continue
            figure = speedups.get(arm.id)
            if figure is None:
                continue
            config = arm.speculative_config or {}
            method_id = method_id_for(str(config.get("method", "")), bool(config.get("parallel_drafting", False)), rb)
            if method_id is None:
                continue
            local = LocalResult(
                method_id=method_id,
                drafter=config.get("model"),
                speedup=figure.value,
                speedup_ci=figure.ci,
                n=arm.n or config.get("num_speculative_tokens"),
                concurrency=arm.concurrency,
                session_id=session.id,
                date=session.created_at.date().isoformat(),
                vllm_version=session.vllm_version,
                label=arm.label or arm.id,
            )
            key = (session.id, method_id)
            if key not in found or local.speedup > found[key].speedup:
                found[key] = local
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
        # the measured 95% interval where both arms had one, else the point (one measurement)
        speedup_low=round(result.speedup_ci[0] if result.speedup_ci else result.speedup, 3),
        speedup_high=round(result.speedup_ci[1] if result.speedup_ci else result.speedup, 3),
        conditions=f"N={result.n}, concurrency {result.concurrency}, vLLM {result.vllm_version or 'unknown'}",
        local=True,
        stale=stale,
    )


def score_delta(result: LocalResult, stale: bool, concurrency: int) -> float:
    """Up to +-2 for a fresh result at the same concurrency; half for stale, half again for other loads."""
    weight = (0.5 if stale else 1.0) * (1.0 if result.concurrency == concurrency else 0.5)
    return max(-2.0, min(2.0, 2.0 * (result.speedup - 1.0))) * weight
