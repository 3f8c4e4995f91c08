"""`specadvisor sweep --json`: one plain dict per session, which the headless live view also prints
its closing lines from. Figures are over the measured requests only (warmups are never in a
result), with predictions and the speedup (specadvisor.figures, the same as every other view) beside
them. Keys are only ever added: scripts read this."""

from __future__ import annotations

from typing import Any

from specadvisor import request_format
from specadvisor.analysis.arms import server_key
from specadvisor.analysis.predict import mean_abs_error_pct, predict_throughput
from specadvisor.analysis.tails import ArmTail, session_tails
from specadvisor.domain import ArmResult, RunRecord, Session
from specadvisor.figures import all_speedups
from specadvisor.provenance import stop_line


def session_summary(session: Session, *, launches_used: int | None = None, launches_full_grid: int | None = None) -> dict[str, Any]:
    predictions = predict_throughput(session)
    tail_of = session_tails(session)  # each arm's tail requests (analysis.tails)
    arms = []
    speedups = all_speedups(session)  # the verdict's own figures
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
            "predicted_throughput": pred.predicted_throughput if pred and pred.confident else None,
            "prediction_error_pct": pred.error_pct if pred and pred.confident else None,
            "prediction_uncertainty_pct": pred.uncertainty_pct if pred and pred.confident else None,
            "prediction_withheld": pred.withheld if pred else None,
        }
        if result is not None:
            speedup = speedups.get(arm.id)
            row.update(
                speedup=speedup.value if speedup else None,
                speedup_ci=speedup.ci if speedup else None,
                output_throughput=result.output_throughput,
                output_throughput_ci=result.output_throughput_ci,
                output_throughput_ci_basis=result.output_throughput_ci_basis,
                request_throughput=result.request_throughput,
                achieved_load=result.achieved_load.model_dump(mode="json") if result.achieved_load else None,
                mean_acceptance_length=result.mean_acceptance_length,
                acceptance_rate=result.acceptance_rate,
                per_position_acceptance=result.per_position_acceptance,
                completed=result.completed,
                failed=result.failed,
                input_tokens=result.input_tokens,  # prompt tokens the server counted (usage): tells a chat template from raw text
                output_tokens=result.output_tokens,
                ttft_ms=result.ttft_ms.model_dump(),
                tpot_ms=result.tpot_ms.model_dump(),
                itl_ms=result.itl_ms.model_dump(),
                e2el_ms=result.e2el_ms.model_dump(),
                warnings=result.warnings,
                error=result.error,
                source=result.source,
                wave=result.wave,
                placement=result.placement,
                startup_cold_s=result.startup_cold_s,
                startup_warm_s=result.startup_warm_s,
                runs=[r.model_dump(mode="json") for r in result.runs],
                tail=_tail_json(tail_of.get(arm.id)),
            )
        arms.append(row)
    launches_full = launches_full_grid if launches_full_grid is not None else len({server_key(a) for a in session.arms})
    runs = [run for r in session.results for run in r.runs]
    rec = session.recommendation
    return {
        "session_id": session.id,
        "name": session.name,
        "model": session.model,
        "status": session.status,
        "vllm_version": session.vllm_version,
        "settings": session.settings.model_dump(mode="json"),
        "workload": {
            "kind": session.workload.value,
            "prompts": session.settings.prompt_source,
            "request_format": request_format.short(session.settings.request_format, session.settings.prompt_source),
            "request_format_text": request_format.recorded(session.settings.request_format, session.settings.prompt_source),
        },
        "arms": arms,
        "recommendation": session.recommendation.model_dump(mode="json") if session.recommendation else None,
        "prediction_mean_abs_error_pct": mean_abs_error_pct(session),
        "launches_used": launches_used,
        "launches_full_grid": launches_full,
        "drift": rec.drift.model_dump(mode="json") if rec is not None and rec.drift is not None else None,
        # why the run stopped measuring: the code and its figures, and the line every view shows
        "stopped": {**session.provenance.stopped.model_dump(mode="json"), "text": stop_line(session)} if session.provenance.stopped else None,
        "order": [f"{r.arm_id}:{run.role}{run.trial if run.role == 'trial' else ''}@w{run.wave}" for r, run in _in_time_order(session)],
        "requests_saved": sum(max(0, run.planned - run.completed) for run in runs if run.planned),
        "seconds_saved": round(sum(run.seconds_saved for run in runs), 1),
    }


def _tail_json(tail: ArmTail | None) -> dict[str, Any] | None:
    """An arm's tail requests (analysis.tails) as plain data, with the line every view shows."""
    if tail is None:
        return None
    return {
        "requests": tail.requests,
        "kind": tail.kind,
        "tail_ms": round(tail.tail_ms, 1),
        "total_ms": round(tail.total_ms, 1),
        "text": tail.text(),
        "tail_requests": [
            {
                "index": t.index,
                "position": t.position,
                "run": t.run,
                "latency_ms": t.latency_ms,
                "median_ms": t.median_ms,
                "baseline_ms": t.baseline_ms,
                "recurs": t.recurs,
            }
            for t in tail.tail
        ],
    }


def _in_time_order(session: Session) -> list[tuple[ArmResult, RunRecord]]:
    """(result, run) for every run of the sweep, in the order they started (wave, then start time)."""
    pairs = [(r, run) for r in session.results for run in r.runs]
    return sorted(pairs, key=lambda p: (p[1].wave is None, p[1].wave or 0, p[1].started_at is None, p[1].started_at or 0))
