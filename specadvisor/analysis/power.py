"""An arm's GPU power and energy as stored and shown: several runs of one arm merged onto one
timeline, and the mean board power a view prints. Pure functions over `domain.GpuTelemetry`; the
runner merges with them (sweep.runs) and the reports read with them, so both agree on one figure.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

from specadvisor.domain import ArmResult, GpuTelemetry


def merge_telemetry(previous: ArmResult, new: ArmResult) -> GpuTelemetry | None:
    """One arm measured in several runs (trials, the end-of-sweep bracket): readings on one timeline
    (seconds since the first run began, so drift between runs shows), start of the first run, end of
    the last, energies summed, mean power over the sampled seconds only (the pauses between runs
    drew no energy in the sum, so they must not dilute it), J/token over all runs' tokens."""
    a, b = previous.telemetry, new.telemetry
    if a is None or b is None:
        return b or a
    offset = (
        (new.started_at - previous.started_at).total_seconds()
        if new.started_at and previous.started_at
        else (a.samples[-1].t + a.interval_s if a.samples else 0.0)
    )
    shifted = [replace(r, t=round(r.t + offset, 3)) for r in b.samples]
    energy = (a.energy_j or 0) + (b.energy_j or 0) if a.energy_j is not None or b.energy_j is not None else None
    per_token = None
    if a.energy_per_output_token_j is not None and b.energy_per_output_token_j is not None and previous.output_tokens + new.output_tokens:
        per_token = (a.energy_per_output_token_j * previous.output_tokens + b.energy_per_output_token_j * new.output_tokens) / (
            previous.output_tokens + new.output_tokens
        )
    seconds = [_powered_seconds(x) for x in (a, b)]
    powered = sum(s for s in seconds if s is not None)
    return a.model_copy(
        update={
            "gpus": sorted(set(a.gpus) | set(b.gpus)),
            "end": b.end,
            "samples": [*a.samples, *shifted],
            "energy_j": energy,
            "mean_power_w": round(energy / powered, 2) if energy is not None and powered > 0 else a.mean_power_w,
            "energy_per_output_token_j": per_token,
            "warnings": list(dict.fromkeys([*a.warnings, *b.warnings])),
        }
    )


def _powered_seconds(t: GpuTelemetry) -> float | None:
    """Seconds the readings behind `t.energy_j` cover, without the gaps between runs: a merged
    record's samples span every pause between its runs, so its own energy / mean power (which
    undoes how that mean was formed) is the only honest figure; a single run's is its sample span."""
    if t.energy_j and t.mean_power_w:
        return t.energy_j / t.mean_power_w
    return t.samples[-1].t - t.samples[0].t if len(t.samples) > 1 else None


def shown_mean_power_w(t: GpuTelemetry) -> float | None:
    """The arm's mean board power for a view. A record merged before the fix above divided its energy
    by a span that included the pauses between runs, which gives a mean below every reading (the H200
    bundles: 34 W and 7 W beside 121-153 W readings); such a mean is re-derived from the readings:
    energy over the seconds they cover, the timeline cut where readings are more than a few sampling
    intervals apart. Any other stored mean is shown as stored."""
    stored = t.mean_power_w
    totals: dict[float, float] = {}
    for r in t.samples:
        if r.power_w is not None:
            totals[r.t] = totals.get(r.t, 0.0) + r.power_w
    if stored is None or not totals or stored >= min(totals.values()) or not t.energy_j:
        return stored
    times = sorted({r.t for r in t.samples})
    pause = max(3 * t.interval_s, 5.0)
    seconds = sum(b - a for a, b in itertools.pairwise(times) if b - a <= pause)
    return round(t.energy_j / seconds, 2) if seconds > 0 else stored
