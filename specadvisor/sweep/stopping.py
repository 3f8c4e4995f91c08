"""Stop measuring when the answer is known: an arm's run ends once its throughput interval is narrow
enough (a relative half-width target, 3% by default with --adaptive), or at the prompt set's end.

The interval is the same kind the result reports for one run: batch means over equal time windows
of the requests finished so far, each request's tokens spread over its streamed chunks. In-flight
requests still finish and count, so a stopped run is an ordinary, shorter measurement.
"""

from __future__ import annotations

import statistics
from typing import Any

from specadvisor import stats
from specadvisor.domain import ArmResult, Progress, RunRecord

MIN_REQUESTS = 8  # never judge an interval on fewer finished requests
MAX_WINDOWS = 10


class CiTarget:
    """`stop(done_records, elapsed_s)` for bench.measure: True once the relative half-width <= target."""

    def __init__(self, target: float, concurrency: int = 1, min_requests: int = MIN_REQUESTS):
        self.target = target
        self.min_requests = max(min_requests, 2 * concurrency)
        self.concurrency = max(1, concurrency)
        self.fired_halfwidth: float | None = None
        self._seen = -1
        self._answer = False

    def __call__(self, done: list[Any], elapsed_s: float) -> bool:
        if self._answer or len(done) == self._seen:
            return self._answer
        self._seen = len(done)
        ok = [r for r in done if r.ok and r.ttft_s is not None]
        if len(ok) < self.min_requests:
            return False
        half = relative_halfwidth(ok, windows=min(MAX_WINDOWS, max(3, len(ok) // self.concurrency)))
        if half is not None and half <= self.target:
            self.fired_halfwidth = half
            self._answer = True
        return self._answer


def relative_halfwidth(records: list[Any], windows: int) -> float | None:
    """95% half-width of the windowed throughput mean, relative to the mean; None if undefined."""
    start = min(r.start_s for r in records)
    end = max(r.end_s for r in records)
    span = end - start
    if span <= 0 or windows < 2:
        return None
    width = span / windows
    tokens = [0.0] * windows
    for r in records:
        times = [r.start_s + r.ttft_s]
        for gap in r.itl_s:
            times.append(times[-1] + gap)
        per_chunk = r.completion_tokens / len(times)
        for t in times:
            tokens[min(windows - 1, max(0, int((t - start) / width)))] += per_chunk
    rates = [x / width for x in tokens]
    ci = stats.mean_ci(rates)
    mean = statistics.fmean(rates)
    if ci is None or mean <= 0:
        return None
    return (ci[1] - ci[0]) / 2 / mean


def account_savings(record: RunRecord, result: ArmResult, prompts: Any, progress: Progress | None, rule: CiTarget | None) -> None:
    """Fill the run's planned requests and the measuring time saved by stopping before the end."""
    planned = len(getattr(prompts, "prompts", None) or []) or (progress.total if progress else 0)
    sent = result.completed + result.failed
    record.planned = planned
    if not planned or sent >= planned or not result.duration_s or sent == 0:
        return
    record.seconds_saved = (planned - sent) * result.duration_s / sent
    if rule is not None and rule.fired_halfwidth is not None:
        result.warnings.append(
            f"stopped after {sent}/{planned} requests: the throughput interval (+/-{rule.fired_halfwidth * 100:.1f}%) "
            f"met the {rule.target * 100:.0f}% target, ~{record.seconds_saved:.0f} s saved"
        )
