"""One plain dict per session for `--json`, the report and the TUI's table: measured figures over the
measured requests only (warmups are never in a result), predictions beside them."""

from __future__ import annotations

from typing import Any

from specadvisor.domain import Session
from specadvisor.sweep.arms import server_key
from specadvisor.sweep.predict import mean_abs_error_pct, predict_throughput


def session_summary(session: Session, *, launches_used: int | None = None) -> dict[str, Any]:
    predictions = predict_throughput(session)
    arms = []
    for arm in session.arms:
        result = session.result_for(arm.id)
        pred = predictions.get(arm.id)
        row: dict[str, Any] = {
            "arm_id": arm.id,
            "label": arm.label,
            "method": arm.method,
            "n": arm.n,
            "concurrency": arm.concurrency,
            "speculative_config": arm.speculative_config,
            "status": result.status.value if result else "pending",
            "predicted_throughput": pred.predicted_throughput if pred else None,
            "prediction_error_pct": pred.error_pct if pred else None,
        }
        if result is not None:
            row.update(
                output_throughput=result.output_throughput,
                output_throughput_ci=result.output_throughput_ci,
                request_throughput=result.request_throughput,
                achieved_load=result.achieved_load.model_dump(mode="json") if result.achieved_load else None,
                mean_acceptance_length=result.mean_acceptance_length,
                acceptance_rate=result.acceptance_rate,
                per_position_acceptance=result.per_position_acceptance,
                completed=result.completed,
                failed=result.failed,
                ttft_ms=result.ttft_ms.model_dump(),
                tpot_ms=result.tpot_ms.model_dump(),
                itl_ms=result.itl_ms.model_dump(),
                e2el_ms=result.e2el_ms.model_dump(),
                warnings=result.warnings,
                error=result.error,
                source=result.source,
            )
        arms.append(row)
    launches_full = len({server_key(a) for a in session.arms})
    return {
        "session_id": session.id,
        "name": session.name,
        "model": session.model,
        "status": session.status,
        "vllm_version": session.vllm_version,
        "settings": session.settings.model_dump(mode="json"),
        "arms": arms,
        "recommendation": session.recommendation.model_dump(mode="json") if session.recommendation else None,
        "prediction_mean_abs_error_pct": mean_abs_error_pct(session),
        "launches_used": launches_used,
        "launches_full_grid": launches_full,
    }
