"""Sample an arm's GPUs on a background thread (1 Hz by default) and summarise what they did.

One daemon thread per running arm; each tick costs a handful of NVML calls per GPU (well under a
millisecond each), so sampling never competes with the measurement. Energy is the trapezoid
integral of board power over the samples; the driver's own energy counter, where it exists, is
kept beside it as a cross-check.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise
from statistics import median
from typing import Any

from specadvisor.machine import GpuReading, GpuState

CLOCK_FALL = 0.10  # a busy SM clock 10% below the arm's busy peak is a measurement hazard
BUSY_PCT = 50.0  # readings at or above this utilization count as "working"


@dataclass
class ArmTelemetry:
    """What one arm's GPUs did. Plain data; specadvisor.sweep.monitor converts it to GpuTelemetry."""

    source: str
    gpus: list[int]
    interval_s: float
    start: list[GpuState] = field(default_factory=list)
    end: list[GpuState] = field(default_factory=list)
    samples: list[GpuReading] = field(default_factory=list)
    energy_j: float | None = None  # power integral over the samples, summed over GPUs
    energy_counter_j: float | None = None  # the driver's counter delta, when every GPU has one
    span_s: float | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def mean_power_w(self) -> float | None:
        if self.energy_j is None or not self.span_s:
            return None
        return self.energy_j / self.span_s

    def energy_per_token_j(self, output_tokens: int, duration_s: float | None) -> float | None:
        """Mean power over the arm x the measured duration / output tokens: joules per output token.
        (Warmup requests fall outside `duration_s`, so they do not inflate the figure.)"""
        power = self.mean_power_w
        if power is None or not output_tokens:
            return None
        seconds = duration_s if duration_s else self.span_s
        return power * seconds / output_tokens if seconds else None


class ArmSampler:
    """start() before the arm's first request, stop() after its last; stop() returns ArmTelemetry."""

    def __init__(self, reader: Any, gpus: list[int], *, interval_s: float = 1.0, clock: Callable[[], float] = time.monotonic):
        self.reader = reader
        self.gpus = list(gpus)
        self.interval_s = interval_s
        self.clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = 0.0
        self._energy0: dict[int, float | None] = {}
        self.record = ArmTelemetry(source=getattr(reader, "source", ""), gpus=self.gpus, interval_s=interval_s)

    def start(self) -> ArmSampler:
        self.record.start = [self.reader.state(g) for g in self.gpus]
        self._energy0 = {g: self.reader.energy_j(g) for g in self.gpus}
        self._t0 = self.clock()
        self._tick()
        self._thread = threading.Thread(target=self._run, name="gpu-telemetry", daemon=True)
        self._thread.start()
        return self

    def _tick(self) -> None:
        t = round(self.clock() - self._t0, 3)
        for gpu in self.gpus:
            try:
                self.record.samples.append(self.reader.reading(gpu, t))
            except Exception:  # noqa: BLE001 - a GPU that stops answering mid-arm loses readings, not the arm
                continue

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._tick()

    def stop(self) -> ArmTelemetry:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=max(2.0, self.interval_s * 2))
        self._tick()
        self.record.end = [self.reader.state(g) for g in self.gpus]
        self.record.span_s = round(self.clock() - self._t0, 3)
        self.record.energy_j = power_integral(self.record.samples)
        ends = {g: self.reader.energy_j(g) for g in self.gpus}
        if all(self._energy0.get(g) is not None and ends[g] is not None for g in self.gpus):
            self.record.energy_counter_j = round(sum(ends[g] - self._energy0[g] for g in self.gpus), 3)
        self.record.warnings = hazards(self.record)
        return self.record


def power_integral(samples: list[GpuReading]) -> float | None:
    """Joules: trapezoid rule per GPU over its readings with a power figure, summed over GPUs."""
    per_gpu: dict[int, list[tuple[float, float]]] = {}
    for r in samples:
        if r.power_w is not None:
            per_gpu.setdefault(r.gpu, []).append((r.t, r.power_w))
    if not per_gpu:
        return None
    total = 0.0
    for points in per_gpu.values():
        points.sort()
        total += sum((t1 - t0) * (p0 + p1) / 2 for (t0, p0), (t1, p1) in pairwise(points))
    return round(total, 3)


def hazards(record: ArmTelemetry) -> list[str]:
    """Plain sentences when the GPU held itself back: busy clocks that fell, or throttle reasons."""
    notes = []
    for gpu in record.gpus:
        readings = [r for r in record.samples if r.gpu == gpu]
        busy = [r.sm_clock_mhz for r in readings if r.sm_clock_mhz and (r.utilization_pct or 0) >= BUSY_PCT]
        if len(busy) >= 3:
            peak, tail = max(busy), median(busy[-max(1, len(busy) // 3) :])
            if tail < peak * (1 - CLOCK_FALL):
                notes.append(f"GPU {gpu}: SM clock fell from {peak:.0f} to {tail:.0f} MHz while busy (throughput is not comparable across arms)")
        reasons: dict[str, int] = {}
        for r in readings:
            for name in r.throttle:
                reasons[name] = reasons.get(name, 0) + 1
        for state in record.end:
            if state.gpu == gpu:
                for name in state.throttle:
                    reasons.setdefault(name, 0)
        if reasons:
            shown = ", ".join(f"{k} ({v} of {len(readings)} readings)" if v else f"{k} (at the end)" for k, v in sorted(reasons.items()))
            notes.append(f"GPU {gpu}: clocks held back by {shown}")
    start = {s.gpu: s for s in record.start}
    for end in record.end:
        before = start.get(end.gpu)
        if before and before.power_limit_w and end.power_limit_w and end.power_limit_w < before.power_limit_w * 0.98:
            notes.append(f"GPU {end.gpu}: power cap lowered from {before.power_limit_w:.0f} to {end.power_limit_w:.0f} W during the arm")
    return notes
