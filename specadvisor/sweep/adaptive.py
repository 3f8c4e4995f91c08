"""`--adaptive`: measure fewer server launches for the same answer.

Order: the baseline, then every family at its largest N (whose per-position rates predict all smaller
N), then each family's predicted-best N once (a second point lets the step-cost fit drop the baseline
anchor). After that, only an unmeasured N the predictor rates within reach of the leader is launched,
best first, until none is left: then the leader is confirmed and the rest are skipped. Within an arm,
measurement stops early once the arm is clearly behind the leader.
"""

from __future__ import annotations

from specadvisor.analysis.arms import family_key
from specadvisor.analysis.predict import mean_abs_error_pct, measured, predict_throughput
from specadvisor.domain import Arm, ArmResult, Progress, Session

BASE_TOLERANCE = 0.03  # launch an N predicted within 3% (+ the observed prediction error) of the leader
EARLY_STOP_MIN_FRACTION = 0.5  # judge a running arm only after half of its requests
EARLY_STOP_MARGIN = 0.20  # running throughput + 20% (ramp-up, noise) must still be below the leader's interval


class AdaptivePolicy:
    def __init__(self, session: Session):
        self.session = session
        self.skip_reasons: dict[str, str] = {}

    def next_group(self, remaining: list[list[Arm]], launching: list[list[Arm]] | None = None) -> list[Arm] | None:
        """The next server to launch, or None when the leader is confirmed. `launching`: groups chosen
        for the same wave and not measured yet (a parallel wave explores each family once, not one
        family five times)."""
        if not remaining:
            return None
        for group in remaining:
            if group[0].is_baseline:
                return group
        busy = {family_key(g[0]) for g in launching or []}
        explore = self._unexplored_family_group([g for g in remaining if family_key(g[0]) not in busy])
        if explore is not None:
            return explore
        if any(not self._family_known(g[0]) for g in launching or [] if not g[0].is_baseline):
            # a family's first measurement is still to come: predictions would be guesses, so fill
            # the wave with the other families' largest untried N
            rest = [g for g in remaining if family_key(g[0]) not in busy] or remaining
            return max(rest, key=lambda g: g[0].n or 0)
        return self._most_promising(remaining)

    def should_stop_early(self, arm: Arm, progress: Progress) -> str | None:
        """A reason to stop measuring `arm` now, or None to go on."""
        if arm.is_baseline or not progress.total or progress.output_throughput is None:
            return None
        if not self._family_known(arm):
            return None  # the family's first arm supplies the per-position rates: always measure it fully
        if progress.completed < max(2, progress.total * EARLY_STOP_MIN_FRACTION):
            return None
        leader = self._leader(arm.concurrency)
        if leader is None or leader.output_throughput is None:  # (a measured leader has a throughput)
            return None
        low = leader.output_throughput_ci[0] if leader.output_throughput_ci else leader.output_throughput * (1 - BASE_TOLERANCE)
        if progress.output_throughput * (1 + EARLY_STOP_MARGIN) < low:
            return (
                f"stopped early after {progress.completed}/{progress.total} requests: "
                f"{progress.output_throughput:.1f} tok/s is clearly below the leader's {leader.output_throughput:.1f}"
            )
        return None

    # ------------------------------------------------------------------ internals

    def _family_known(self, arm: Arm) -> bool:
        results = measured(self.session)
        return any(family_key(a) == family_key(arm) and a.id in results and results[a.id].per_position for a in self.session.arms if not a.is_baseline)

    def _unexplored_family_group(self, remaining: list[list[Arm]]) -> list[Arm] | None:
        """The largest remaining N of a family that has no usable measurement yet."""
        for group in remaining:
            family = family_key(group[0])
            if self._family_known(group[0]):
                continue
            same = [g for g in remaining if family_key(g[0]) == family]
            return max(same, key=lambda g: g[0].n or 0)
        return None

    def _most_promising(self, remaining: list[list[Arm]]) -> list[Arm] | None:
        predictions = predict_throughput(self.session)
        error = (mean_abs_error_pct(self.session, rough=True) or 0.0) / 100.0
        tolerance = BASE_TOLERANCE + error
        scored: list[tuple[float, list[Arm]]] = []
        for group in remaining:
            ratios = []
            for arm in group:
                pred = predictions.get(arm.id)
                leader = self._leader(arm.concurrency)
                if pred is None or leader is None or not leader.output_throughput:
                    ratios.append(float("inf"))  # nothing to predict from: measure it
                    continue
                ratios.append(pred.predicted_throughput / leader.output_throughput)
            scored.append((max(ratios), group))
        scored.sort(key=lambda item: -item[0])
        confirm = self._confirmation(scored)
        if confirm is not None:
            return confirm
        for ratio, group in scored:
            if ratio >= 1 - tolerance:
                return group
        for _, group in scored:
            for arm in group:
                pred = predictions.get(arm.id)
                leader = self._leader(arm.concurrency)
                self.skip_reasons[arm.id] = (
                    f"skipped by --adaptive: predicted {pred.predicted_throughput:.1f} tok/s, "
                    f"below the leader's {leader.output_throughput:.1f} beyond the {tolerance * 100:.0f}% margin"
                    if pred and leader
                    else "skipped by --adaptive: the leader was confirmed"
                )
        return None

    def _confirmation(self, scored: list[tuple[float, list[Arm]]]) -> list[Arm] | None:
        """A family measured at one N only is predicted from the baseline anchor alone, which cannot
        see the fixed cost of turning speculation on: measure its predicted-best N once to refit."""
        results = measured(self.session)
        tolerance = BASE_TOLERANCE + (mean_abs_error_pct(self.session) or 0.0) / 100.0
        for ratio, group in scored:  # best predicted first
            if ratio < 1 - tolerance:
                return None  # a one-point prediction over-predicts (it misses the fixed cost): below the leader even so
            family = family_key(group[0])
            points = {a.n for a in self.session.arms if not a.is_baseline and a.id in results and family_key(a) == family}
            if len(points) == 1:
                return group
        return None

    def _leader(self, concurrency: int) -> ArmResult | None:
        results = measured(self.session)
        mine = [results[a.id] for a in self.session.arms if a.concurrency == concurrency and a.id in results]
        return max(mine, key=lambda r: r.output_throughput or 0.0) if mine else None  # measured: each has one
