"""Translate between domain models and table rows.

Queryable figures get columns; nested parts are stored as the model's own JSON so that a stored
session validates back into exactly the Session that was saved.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from pydantic import BaseModel, TypeAdapter
from pydantic_core import to_json

from specadvisor.domain import Arm, ArmResult, GpuReading, HardwareProfile, MetricsSample, Session

_READING = TypeAdapter(GpuReading)  # a stored reading is validated as it is read back, as a bundle's is
_RESULT_LIST = TypeAdapter(list[ArmResult])


def dump(model: BaseModel | HardwareProfile | GpuReading | None) -> str | None:
    """JSON that keeps NaN/Infinity as such (pydantic's own JSON would write null, which a required
    float then refuses on load: a session must never become unreadable because of one odd figure).
    The machine's description and the GPU readings are plain dataclasses: the same dict by `asdict`."""
    if model is None:
        return None
    return json.dumps(asdict(model) if isinstance(model, HardwareProfile | GpuReading) else model.model_dump(mode="json"))


def load(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def session_row(session: Session) -> dict[str, Any]:
    return {
        "id": session.id,
        "name": session.name,
        "created_at": session.created_at.isoformat(),
        "updated_at": session.updated_at.isoformat(),
        "status": session.status,
        "model": session.model,
        "drafter": session.drafter,
        "workload": session.workload.value,
        "temperature": session.temperature,
        "concurrency": session.concurrency,
        "hardware_fingerprint": session.hardware_fingerprint,
        "vllm_version": session.vllm_version,
        "notes": session.notes,
        "hardware_json": dump(session.hardware),
        "settings_json": dump(session.settings),
        "model_profile_json": dump(session.model_profile),
        "advice_json": dump(session.advice),
        "recommendation_json": dump(session.recommendation),
        "provenance_json": dump(session.provenance),
        "origin": session.provenance.origin,
        "bundle_sha256": session.provenance.bundle_sha256,
    }


def arm_rows(session_id: str, arms: list[Arm]) -> list[dict[str, Any]]:
    """A row per arm, in order, each arm encoded straight from its model by pydantic-core (dumping
    100,000 arms to Python objects first cost three times as much); NaN kept, as dump() keeps it."""
    return [
        {
            "session_id": session_id,
            "arm_id": arm.id,
            "position": position,
            "label": arm.label,
            "method": arm.method,
            "n": arm.n,
            "concurrency": arm.concurrency,
            "arm_json": to_json(arm, inf_nan_mode="constants").decode("utf-8"),
        }
        for position, arm in enumerate(arms)
    ]


def result_row(session_id: str, result: ArmResult) -> dict[str, Any]:
    """The result's JSON without its GPU readings: those are rows of gpu_samples (gpu_sample_rows)."""
    telemetry = result.telemetry
    if telemetry is not None and telemetry.samples:
        result = result.model_copy(update={"telemetry": telemetry.model_copy(update={"samples": []})})
    return {
        "session_id": session_id,
        "arm_id": result.arm_id,
        "status": result.status.value,
        "output_throughput": result.output_throughput,
        "mean_acceptance_length": result.mean_acceptance_length,
        "acceptance_rate": result.acceptance_rate,
        "num_drafts": result.num_drafts,
        "num_draft_tokens": result.num_draft_tokens,
        "num_accepted_tokens": result.num_accepted_tokens,
        "vllm_version": result.vllm_version,
        "finished_at": result.finished_at.isoformat() if result.finished_at else None,
        "wave": result.wave,
        "placement": result.placement,
        "runs": len(result.runs),
        "request_records": sum(len(run.requests) for run in result.runs),
        "energy_per_output_token_j": telemetry.energy_per_output_token_j if telemetry else None,
        "result_json": dump_result(result),
    }


def dump_result(result: ArmResult) -> str:
    """The result's JSON without the fields that hold their defaults (validation fills them in again,
    so it reads back as the same result): 70 bytes instead of 1,100 for a result of figures only, which
    made reading 100,000 of them parse 115 MB. NaN kept, as dump() keeps it."""
    return json.dumps(result.model_dump(mode="json", exclude_defaults=True))


def gpu_sample_rows(session_id: str, result: ArmResult) -> list[dict[str, Any]]:
    samples = result.telemetry.samples if result.telemetry else []
    return [{"session_id": session_id, "arm_id": result.arm_id, "gpu": r.gpu, "t": r.t, "sample_json": dump(r)} for r in samples if math.isfinite(r.t)]


def position_rows(session_id: str, result: ArmResult) -> list[dict[str, Any]]:
    """A queryable copy of the raw per-position counts (the result's JSON stays authoritative)."""
    return [
        {
            "session_id": session_id,
            "arm_id": result.arm_id,
            **p.model_dump(),
            "rate": p.rate if math.isfinite(p.rate) else (p.accepted / p.drafts if p.drafts else 0.0),
        }
        for p in result.per_position
    ]


def sample_row(session_id: str, sample: MetricsSample) -> dict[str, Any]:
    return {"session_id": session_id, "arm_id": sample.arm_id, "t": sample.t, "sample_json": dump(sample)}


def result_from_row(result_json: str, gpu_samples: Sequence[str] = ()) -> ArmResult:
    result = ArmResult.model_validate(json.loads(result_json))
    if result.telemetry is not None and gpu_samples:
        result.telemetry.samples = [_READING.validate_python(json.loads(text)) for text in gpu_samples]
    return result


def results_from_rows(result_rows: Sequence[tuple[str, str]], readings: dict[str, list[str]]) -> list[ArmResult]:
    """The results of (arm_id, result_json) rows, in order, each with its GPU readings. All are
    validated as one JSON array in one call (a json.loads and a model_validate per result took most
    of loading 100,000); the array must give back one result per row, each carrying its row's arm id,
    or a row could smuggle in extra results. Anything else, and any row that does not validate, goes
    through the per-row path, whose error is the one the store reports."""
    try:
        results = _RESULT_LIST.validate_json("[" + ",".join(text for _, text in result_rows) + "]")
    except (ValueError, TypeError):  # a ValidationError, or a row that is not text: the row at fault raises its own error
        results = []
    if len(results) != len(result_rows) or any(r.arm_id != arm_id for r, (arm_id, _) in zip(results, result_rows, strict=True)):
        return [result_from_row(text, readings.get(arm_id, [])) for arm_id, text in result_rows]
    for result in results:
        samples = readings.get(result.arm_id)
        if result.telemetry is not None and samples:
            result.telemetry.samples = [_READING.validate_python(json.loads(text)) for text in samples]
    return results


def session_from_rows(row: dict[str, Any], arms: list[Arm], results: list[ArmResult], samples: list[MetricsSample]) -> Session:
    return Session.model_validate(
        {
            "id": row["id"],
            "name": row["name"],
            "created_at": row["created_at"],
            "updated_at": row["updated_at"],
            "status": row["status"],
            "model": row["model"],
            "drafter": row["drafter"],
            "workload": row["workload"],
            "concurrency": row["concurrency"],
            "hardware_fingerprint": row["hardware_fingerprint"],
            "vllm_version": row["vllm_version"],
            "notes": row["notes"],
            "hardware": load(row["hardware_json"]),
            "settings": load(row["settings_json"]),
            "model_profile": load(row["model_profile_json"]),
            "advice": load(row["advice_json"]),
            "recommendation": load(row["recommendation_json"]),
            "provenance": load(row["provenance_json"]),
            "arms": arms,
            "results": results,
            "samples": samples,
        }
    )
