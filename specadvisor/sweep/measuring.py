"""Measuring one arm on a server that is up: its measurement stream (warmup, passes, /metrics
samples) folded into one result and stored as a run of that arm, stopped early by --adaptive, cut
by the time limit (stored as a stopped run that no figure counts), or failed with its cause.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncGenerator, Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from specadvisor.domain import (
    Arm,
    ArmFailed,
    ArmFinished,
    ArmResult,
    ArmStatus,
    MeasurementWarning,
    MetricsSample,
    MetricsSampled,
    Progress,
    Session,
    SweepEvent,
    utcnow,
)
from specadvisor.errors import InputError, SpecAdvisorError
from specadvisor.figures import acceptance
from specadvisor.provenance import serve_argv
from specadvisor.redact import remember_secret
from specadvisor.sweep.runs import RunWhere, merge, run_name, run_record
from specadvisor.sweep.servers import RemoteServerHandle, ServerHandle
from specadvisor.sweep.stopping import CiTarget
from specadvisor.sweep.stopping import account_savings as _account_savings
from specadvisor.sweep.time_limit import STOPPED_RUN, TimeLimit, stopped_reason

if TYPE_CHECKING:
    from specadvisor.bench.prompts import PromptSet
    from specadvisor.sweep.adaptive import AdaptivePolicy
    from specadvisor.sweep.monitor import Monitor
    from specadvisor.sweep.recorder import Recorder
    from specadvisor.telemetry.sampler import ArmSampler

MeasureFn = Callable[..., AsyncGenerator[SweepEvent, None]]  # bench.measure.measure_arm's keywords (base_url, arm, settings, prompts, ...)
Emit = Callable[[SweepEvent], None]


class ArmMeasurer:
    """Measures arms of one session on servers that are up, and stores each run."""

    def __init__(
        self, session: Session, recorder: Recorder, monitor: Monitor, limit: TimeLimit, measure: MeasureFn, *,
        model_name: str | None, sample_interval_s: float, api_key_env: str | None,
    ) -> None:  # fmt: skip
        self.session = session
        self.recorder = recorder
        self.monitor = monitor
        self.limit = limit
        self._measure = measure
        self.model_name = model_name or session.model  # the name the server serves it under (attach mode), else the model
        self._interval = sample_interval_s
        self._api_key_env = api_key_env

    def api_key(self) -> str | None:
        """The endpoint's key, read when asked (never stored), and remembered to be redacted wherever it reappears."""
        if not self._api_key_env:
            return None
        key = os.environ.get(self._api_key_env)
        if not key:
            raise InputError(f"environment variable {self._api_key_env} is not set", hint="export it or drop --api-key-env")
        remember_secret(key)  # an endpoint may echo it in an error body
        return key

    async def measure(self, arm: Arm, server: ServerHandle, prompts: PromptSet | None, emit: Emit, policy: AdaptivePolicy | None, where: RunWhere) -> None:
        """One run of `arm` on `server`: its events passed on, its result stored and announced."""
        started = utcnow()
        sampler = self.monitor.watch(arm, server)
        samples: list[MetricsSample] = []
        result: ArmResult | None = None
        last_progress: Progress | None = None
        extra: dict[str, Any] = {}
        stop_rule = None
        if self.session.settings.ci_target:
            stop_rule = CiTarget(self.session.settings.ci_target, arm.concurrency)
            extra["stop"] = stop_rule
        stream = (server.measure if isinstance(server, RemoteServerHandle) else self._measure)(
            base_url=server.base_url, model_name=self.model_name, arm=arm, settings=self.session.settings.replace(trials=1),
            prompts=prompts, api_key=self.api_key(), sample_interval_s=self._interval, **extra,
        )  # fmt: skip
        try:
            async with contextlib.aclosing(stream):
                async for event in stream:
                    if isinstance(event, ArmFinished):
                        result = event.result
                        break
                    if isinstance(event, MetricsSampled):
                        samples.append(event.sample)
                    emit(event)
                    if isinstance(event, Progress):
                        last_progress = event
                        reason = policy.should_stop_early(arm, event) if policy and where.get("role") == "trial" else None
                        if reason:
                            result = partial_result(arm, last_progress, samples, reason)
                            break
        except asyncio.CancelledError:
            if self.limit.fired:
                self._record_cut(arm, server, prompts, last_progress, started, where, emit)
            raise
        except Exception as err:  # noqa: BLE001 - a crash mid-arm (transport errors, engine errors) costs one arm
            result = ArmResult(arm_id=arm.id, status=ArmStatus.failed, error=describe(err))
        if result is None:
            result = ArmResult(arm_id=arm.id, status=ArmStatus.failed, error="the measurement ended without a result")
        self._store(arm, server, result, sampler, samples, started, where, last_progress, stop_rule, prompts, emit)

    def _store(
        self, arm: Arm, server: ServerHandle, result: ArmResult, sampler: ArmSampler | None, samples: list[MetricsSample], started: datetime,
        where: RunWhere, progress: Progress | None, stop_rule: CiTarget | None, prompts: PromptSet | None, emit: Emit,
    ) -> None:  # fmt: skip
        """The run as measured: its telemetry, times and failure cause filled in, merged into the arm's result and stored."""
        result.arm_id = arm.id
        result.serve_argv = serve_argv(server)
        self.monitor.finish(sampler, result, emit)
        result.started_at = result.started_at or started
        result.finished_at = result.finished_at or utcnow()
        if result.status == ArmStatus.stopped_early and result.duration_s is None:
            result.duration_s = (result.finished_at - result.started_at).total_seconds()
        if result.status == ArmStatus.failed:
            self.recorder.explain_failure(result, server)
        record = run_record(result, **where)
        _account_savings(record, result, prompts, progress, stop_rule)
        merged = merge(self.session.result_for(arm.id), result, record)
        self.recorder.record(merged, samples)
        emit(ArmFailed(result=merged) if merged.status == ArmStatus.failed else ArmFinished(result=merged))

    def _record_cut(
        self, arm: Arm, server: ServerHandle, prompts: PromptSet | None, progress: Progress | None, started: datetime, where: RunWhere, emit: Emit
    ) -> None:
        """A run the time limit cut mid-pass (a planned launch's, or one more pass on a running server):
        stored as a stopped run with the requests it completed and the time it took (spent, so the
        budget counts it), the reason in the arm's warnings. Its throughput is left out (None), so no
        figure counts a partial pass as a full one: it served only the prompts it reached, and the
        measurement hands over per-request records only at a pass's end (time_limit.stopped_reason)."""
        assert self.limit.seconds is not None
        done, total = (progress.completed, progress.total) if progress is not None else (0, 0)
        planned = len(getattr(prompts, "prompts", None) or []) or total
        finished = utcnow()
        reason = stopped_reason(self.limit.seconds, done, planned)
        result = ArmResult(arm_id=arm.id, status=ArmStatus.failed, started_at=started, finished_at=finished, error=reason)
        result.serve_argv = serve_argv(server)
        record = run_record(result, **where)
        record.status, record.completed, record.planned = STOPPED_RUN, done, planned
        record.duration_s = (finished - started).total_seconds()
        merged = merge(self.session.result_for(arm.id), result, record)
        self.recorder.record(merged, [])
        if merged.status == ArmStatus.failed:
            self.limit.arms_stopped += 1
            emit(ArmFailed(result=merged))
        else:
            self.limit.passes_cut += 1
            emit(MeasurementWarning(arm_id=arm.id, message=f"{run_name(record)}: {reason}"))


def partial_result(arm: Arm, progress: Progress, samples: list[MetricsSample], reason: str) -> ArmResult:
    """What an arm stopped early showed so far: its running throughput and acceptance from /metrics."""
    result = ArmResult(
        arm_id=arm.id,
        status=ArmStatus.stopped_early,
        completed=progress.completed,
        output_throughput=progress.output_throughput,
        warnings=[reason],
    )
    last = samples[-1] if samples else None
    if last is not None and last.num_drafts > 0:
        acceptance(last.num_drafts, last.num_draft_tokens, last.num_accepted_tokens, last.accepted_per_position).apply_to(result)
    return result


def describe(err: BaseException) -> str:
    """One line in our words: an exception's own text may carry what a hostile endpoint sent."""
    if isinstance(err, SpecAdvisorError):
        return err.one_line()
    import httpx

    if isinstance(err, (httpx.HTTPError, OSError)):
        return f"the connection to the server failed mid-arm ({type(err).__name__})"
    return f"the measurement stopped on an unexpected {type(err).__name__} (a specadvisor bug: please report it with the server log)"
