"""Storing what a sweep measured, as it goes: each arm's result committed before the next step (a
killed sweep resumes from the store), a failure with its diagnosed cause, an arm skipped with its
reason, the session's status and why it stopped. The one place the runner writes to the store.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from specadvisor.domain import Arm, ArmFailed, ArmResult, ArmStatus, MeasurementWarning, MetricsSample, Session, SessionStatus, SweepEvent, SweepStop, utcnow
from specadvisor.errors import SpecAdvisorError
from specadvisor.provenance import serve_argv
from specadvisor.store import Store
from specadvisor.sweep.runs import RunWhere, fold_startup, merge, run_record
from specadvisor.sweep.servers import ServerHandle, log_path_of

Emit = Callable[[SweepEvent], None]


class Recorder:
    """A session's results, status and stop reason, kept in step with its store."""

    def __init__(self, session: Session, store: Store) -> None:
        self.session = session
        self.store = store

    def record(self, result: ArmResult, samples: list[MetricsSample]) -> None:
        """Commit one arm's result (and its live samples) before anything else happens."""
        session = self.session
        fold_startup(result)
        session.results = [r for r in session.results if r.arm_id != result.arm_id] + [result]
        if result.vllm_version and not session.vllm_version:
            session.vllm_version = result.vllm_version
            self.store.save_session(session)
        self.store.save_arm_result(session.id, result)
        if samples:
            session.samples.extend(samples)
            self.store.add_samples(session.id, samples)

    def fail(self, arm: Arm, cause: str, server: ServerHandle | None, emit: Emit, *, during_start: bool = False, where: RunWhere | None = None) -> None:
        """A run that produced no measurement, stored with its cause (a repeated run's failure warns)."""
        result = ArmResult(arm_id=arm.id, status=ArmStatus.failed, started_at=utcnow(), finished_at=utcnow(), error=cause)
        result.serve_argv = serve_argv(server)
        self.explain_failure(result, server, during_start=during_start)
        merged = merge(self.session.result_for(arm.id), result, run_record(result, **(where or {})))
        self.record(merged, [])
        emit(
            ArmFailed(result=merged)
            if merged.status == ArmStatus.failed
            else MeasurementWarning(arm_id=arm.id, message=f"{where.get('role', 'run') if where else 'run'} failed: {cause}")
        )

    def explain_failure(self, result: ArmResult, server: ServerHandle | None, *, during_start: bool = False) -> None:
        """The server's own diagnosis (or that it exited mid-arm), its log's tail and its path."""
        if server is None:
            return
        diagnosis = server.diagnosis
        if diagnosis is not None and diagnosis.cause and diagnosis.cause not in (result.error or ""):
            result.error = f"{diagnosis.cause} ({diagnosis.hint})" if diagnosis.hint else diagnosis.cause
        elif not server.running and not during_start and "exited" not in (result.error or ""):
            result.error = f"the vLLM server exited mid-arm: {result.error}"
        tail = server.tail(20)
        if tail and not result.error_excerpt:
            result.error_excerpt = "\n".join(tail)
        result.log_path = result.log_path or log_path_of(server)

    def skip(self, arm: Arm, reason: str, emit: Emit) -> None:
        """An arm the sweep will not measure, stored as skipped with the one-line reason the user sees."""
        self.record(ArmResult(arm_id=arm.id, status=ArmStatus.skipped, warnings=[reason]), [])
        emit(MeasurementWarning(arm_id=arm.id, message=reason))

    def mark(self, status: SessionStatus) -> None:
        self.session.status = status
        with contextlib.suppress(SpecAdvisorError):
            self.store.set_status(self.session.id, status)

    def keep_unsaved_plan(self) -> None:
        """Quit during the checks before the first launch: the plan is stored as interrupted (nothing
        measured, resumable from Sessions) instead of being lost with the window."""
        if self.store.has_session(self.session.id):  # saved before the first launch, or resumed
            return
        with contextlib.suppress(SpecAdvisorError):
            self.store.save_session(self.session)

    def record_stop(self, stop: SweepStop) -> None:
        """A cancelled run stores why it stopped (its verdict, if any, is not recomputed)."""
        self.session.provenance.stopped = stop
        with contextlib.suppress(Exception):  # the store may be the reason it stopped; the cancel goes on
            self.store.set_provenance(self.session.id, self.session.provenance)
