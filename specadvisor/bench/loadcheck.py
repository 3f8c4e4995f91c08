"""Did a trial apply the load that was asked? The self-check behind every measurement.

A closed loop at concurrency C should keep C requests in flight; by Little's law the mean number
in flight is the sum of request times over the duration. A Poisson run should send at its rate.
A measurement more than SHORTFALL below what was asked is measuring something else (the bug it
was written for: an endpoint arm silently run at concurrency 1 while 4 was asked).
"""

from __future__ import annotations

from specadvisor.bench.loadgen import LoadResult
from specadvisor.domain import AchievedLoad

SHORTFALL = 0.10  # warn when the achieved load is more than 10% below the ask


def trial_load(load: LoadResult) -> tuple[str, float, float] | None:
    """(mode, asked, achieved) for one trial; None when nothing was sent.

    Poisson: the ask is the rate of the schedule actually drawn (a short run's exponential gaps
    vary by chance; what must not happen is the client or the concurrency cap falling behind it)."""
    if not load.records:
        return None
    if load.requested_rate is not None and load.requested_rate != float("inf"):
        asked = load.scheduled_rate or load.requested_rate
        return "poisson", asked, load.achieved_rate
    in_flight = load.mean_in_flight
    return ("closed", float(load.concurrency), in_flight) if in_flight is not None else None


def achieved_load(loads: list[LoadResult]) -> AchievedLoad | None:
    """The arm's achieved load over its trials (the mean of the per-trial figures)."""
    per = [t for t in (trial_load(x) for x in loads) if t is not None]
    if not per:
        return None
    mode = per[0][0]
    in_flight = [x.mean_in_flight for x in loads if x.mean_in_flight is not None]
    rate = loads[0].requested_rate
    asked = rate if mode == "poisson" and rate is not None else per[0][1]
    return AchievedLoad(
        mode=mode,
        asked=float(asked),
        achieved=sum(p[2] for p in per) / len(per),
        per_trial=[p[2] for p in per],
        mean_in_flight=sum(in_flight) / len(in_flight) if in_flight else None,
    )


def shortfall_warning(load: LoadResult, num_prompts: int) -> str | None:
    """A one-line warning when a trial's load was more than SHORTFALL below the ask, with the likely cause."""
    t = trial_load(load)
    if t is None:
        return None
    mode, asked, achieved = t
    if asked <= 0 or achieved >= asked * (1 - SHORTFALL):
        return None
    below = 1 - achieved / asked
    if mode == "closed":
        if num_prompts < asked:
            cause = f"only {num_prompts} prompts for concurrency {asked:g}: use at least {int(asked) * 4} prompts"
        elif num_prompts < 4 * asked:
            cause = f"{num_prompts} prompts are few for concurrency {asked:g}: the last ones drain alone; use at least {int(asked) * 4}"
        else:
            cause = "the client could not keep the requests in flight (a slow client machine, or requests failing fast)"
        return f"achieved load {achieved:.2f} requests in flight vs concurrency {asked:g} asked ({below:.0%} below): {cause}"
    cap = f"the concurrency cap {load.concurrency} held arrivals back" if load.concurrency < num_prompts else "the client fell behind its schedule"
    return f"achieved request rate {achieved:.2f}/s vs {asked:.2f}/s scheduled ({below:.0%} below): {cap}"
