"""The recommendation and every view's speedups of a set of sessions, against a golden file written by
the code before the per-level index (analysis.levels) replaced each level's rescans of the session:
that change is meant to be indexing and caching only, so every figure, sentence and next step must
stay byte for byte what it was. Sessions: the real H200 bundles (plain, sequential at looks 1-3, at
another confidence, under a latency target) and synthetic multi-level sessions with repeated launches,
per-request records, failed and missing baselines, drafter and n-gram families, and the scale
benchmark's own session at a small size.

Regenerate only for an intended change of the decision: `python tests/analysis/test_recommend_golden.py --write`.
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from specadvisor.analysis.recommend import recommend
from specadvisor.domain import Arm, ArmResult, ArmStatus, LatencyStats, RequestRecord, RunRecord, Session, SweepSettings
from specadvisor.figures import all_speedups
from specadvisor.store.bundle import read_bundle

ROOT = Path(__file__).parents[2]
H200 = ROOT / "tests" / "fixtures" / "h200"
GOLDEN = ROOT / "tests" / "fixtures" / "analysis" / "recommend_golden.json"


def _bundle_scale() -> Any:
    spec = importlib.util.spec_from_file_location("bundle_scale", ROOT / "benchmarks" / "bundle_scale.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _h200(name: str, **settings: Any) -> Session:
    session = read_bundle(H200 / name)
    session.recommendation = None
    session.settings = session.settings.replace(**settings)
    return session


def synthetic(
    seed: int,
    levels: tuple[int, ...] = (1, 2, 4, 8),
    *,
    records: bool = True,
    budget: float | None = None,
    gains: tuple[float, ...] | None = None,
    spread: float = 0.05,
    request_noise: float = 0.08,
) -> Session:
    """Levels of a baseline, n-gram families (N 1-4, two lookups) and a drafter family (N 2, 4), one to
    three launches per arm over waves, per-request records on some, a failed baseline at one level and
    none planned at another, one failed arm, an impossible gain above its acceptance length. `gains`:
    one gain per level for every speculative arm there (clear answers that differ by level)."""
    rng = random.Random(seed)
    session = Session(name=f"golden-{seed}", model="org/target", status="finished", settings=SweepSettings(concurrency=list(levels), budget_s=budget))
    wave = 0
    for li, level in enumerate(levels):
        configs: list[tuple[str, dict[str, Any] | None, int | None]] = [("baseline", None, None)] if li != 2 or gains else []
        configs += [
            (f"ngram-l{lookup}-n{n}", {"method": "ngram", "num_speculative_tokens": n, "prompt_lookup_max": lookup}, n)
            for lookup in (2, 4)
            for n in (1, 2, 3, 4)
        ]
        configs += [(f"eagle-n{n}", {"method": "eagle", "model": "org/drafter-eagle", "num_speculative_tokens": n}, n) for n in (2, 4)]
        for name, spec, n in configs:
            arm = Arm(id=f"{name}-c{level}", label=f"{name} c{level}", method=spec and spec["method"], n=n, speculative_config=spec, concurrency=level)
            session.arms.append(arm)
            gain = 1.0 if spec is None else gains[li] * (1 + 0.01 * (n or 0)) if gains else rng.choice((0.7, 0.95, 1.02, 1.1, 1.35, 1.6))
            base_tps = 100.0 * level**0.7
            if spec is None and li == 1 and not gains:
                session.results.append(ArmResult(arm_id=arm.id, status=ArmStatus.failed, error="server did not start"))
                continue
            if name == "ngram-l4-n3" and li == 0 and not gains:
                session.results.append(ArmResult(arm_id=arm.id, status=ArmStatus.failed))
                continue
            runs = []
            for trial in range(1, rng.choice((1, 2, 3)) + (1 if spec is None else 0) + 1):
                wave += 1
                tps = base_tps * gain * (1 + rng.gauss(0, spread))
                reqs = (
                    [RequestRecord(index=i, latency_ms=1000.0 / gain * (1 + 0.1 * i % 3) * (1 + abs(rng.gauss(0, request_noise)))) for i in range(12)]
                    if records and trial <= 2
                    else []
                )
                runs.append(
                    RunRecord(
                        trial=trial,
                        role="bracket" if spec is None and trial > 1 else "trial",
                        wave=wave,
                        completed=12,
                        duration_s=30.0 + trial,
                        output_throughput=tps,
                        requests=reqs,
                    )
                )
            al = (1.2 if name == "ngram-l2-n1" else 1.0 + (n or 0) * 0.4) if spec else None
            session.results.append(
                ArmResult(
                    arm_id=arm.id,
                    completed=12,
                    duration_s=30.0,
                    output_throughput=sum(r.output_throughput or 0 for r in runs) / len(runs),
                    runs=runs,
                    mean_acceptance_length=al,
                    tpot_ms=LatencyStats(p99=20.0 / gain),
                    ttft_ms=LatencyStats(p99=200.0),
                )
            )
    return session


def replicate_first() -> Session:
    """Sequential, a baseline whose two launches spread 18% (above the prior) and one launch of an arm at
    1.6x: the look asks for a second launch of it before answering."""
    session = Session(name="golden-replicate", model="org/target", status="finished", settings=SweepSettings(concurrency=[1], budget_s=600.0))
    session.arms += [
        Arm(id="baseline", label="baseline"),
        Arm(id="ngram-n3", label="ngram N=3", method="ngram", n=3, speculative_config={"method": "ngram", "num_speculative_tokens": 3}),
    ]
    base_runs = [
        RunRecord(trial=1, wave=1, completed=8, duration_s=20.0, output_throughput=100.0),
        RunRecord(trial=2, role="bracket", wave=3, completed=8, duration_s=20.0, output_throughput=120.0),
    ]
    session.results += [
        ArmResult(arm_id="baseline", completed=8, output_throughput=110.0, runs=base_runs),
        ArmResult(
            arm_id="ngram-n3", completed=8, output_throughput=176.0, runs=[RunRecord(trial=1, wave=2, completed=8, duration_s=15.0, output_throughput=176.0)]
        ),
    ]
    return session


def beyond_acceptance() -> Session:
    """One arm at 1.5x whose drafts gave 1.1 tokens per step: the gain is noise, the level stays open."""
    session = Session(name="golden-beyond", model="org/target", status="finished", settings=SweepSettings(concurrency=[1]))
    session.arms += [
        Arm(id="baseline", label="baseline"),
        Arm(id="ngram-n1", label="ngram N=1", method="ngram", n=1, speculative_config={"method": "ngram", "num_speculative_tokens": 1}),
    ]
    base_runs = [RunRecord(trial=t, wave=t, completed=8, duration_s=20.0, output_throughput=v) for t, v in ((1, 100.0), (2, 101.0), (3, 99.5))]
    arm_runs = [RunRecord(trial=t, wave=3 + t, completed=8, duration_s=15.0, output_throughput=v) for t, v in ((1, 150.0), (2, 151.0))]
    session.results += [
        ArmResult(arm_id="baseline", completed=8, output_throughput=100.0, runs=base_runs),
        ArmResult(arm_id="ngram-n1", completed=8, output_throughput=150.5, runs=arm_runs, mean_acceptance_length=1.1),
    ]
    return session


def cases() -> Iterator[tuple[str, Session, dict[str, Any]]]:
    for path in sorted(H200.glob("*.bundle.json")):
        yield path.name, _h200(path.name), {}
        yield f"{path.name} confidence 0.8", _h200(path.name), {"confidence": 0.8}
        for looks in (1, 2, 3):
            yield f"{path.name} sequential look {looks}", _h200(path.name, budget_s=600.0), {"looks": looks}
        yield f"{path.name} latency target", _h200(path.name, slo_tpot_ms=8.0), {}
    for seed in (1, 2, 3):
        yield f"synthetic {seed}", synthetic(seed), {}
        yield f"synthetic {seed} sequential look 2", synthetic(seed, budget=900.0), {"looks": 2}
    yield "synthetic 4 unpaired", synthetic(4, records=False), {}
    latency = synthetic(5)
    latency.settings = latency.settings.replace(slo_tpot_ms=19.0)
    yield "synthetic 5 latency target", latency, {}
    yield "synthetic 6 one level", synthetic(6, levels=(4,)), {}
    yield "synthetic 7 depends on concurrency", synthetic(7, levels=(1, 8, 64), gains=(1.8, 1.7, 0.6), spread=0.01), {}
    yield "synthetic 9 noisy requests", synthetic(9, levels=(2, 4), gains=(1.1, 1.08), spread=0.01, request_noise=0.3), {}
    yield "synthetic 8 speculate everywhere", synthetic(8, levels=(1, 8), gains=(1.9, 1.9), spread=0.01), {}
    yield "replicate first", replicate_first(), {}
    yield "beyond acceptance", beyond_acceptance(), {}
    scale = _bundle_scale()
    yield "bundle_scale 300 every arm", scale.build(300, 1), {}
    yield "bundle_scale 700 every 3rd", scale.build(700, 3), {}


def dump(session: Session, kwargs: dict[str, Any]) -> dict[str, Any]:
    rec = recommend(session, **kwargs)
    speedups = all_speedups(session, **kwargs)
    return {
        "recommendation": rec.model_dump(mode="json"),
        "speedups": {k: None if v is None else [v.value, v.ci, v.baseline_throughput, v.reference] for k, v in speedups.items()},
    }


def _golden() -> dict[str, Any]:
    return json.loads(GOLDEN.read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", [name for name, _, _ in cases()])
def test_recommendation_is_unchanged(case: str) -> None:
    session, kwargs = next((s, k) for name, s, k in cases() if name == case)
    expected = _golden()[case]
    assert json.loads(json.dumps(dump(session, kwargs))) == expected


def test_the_cases_cover_every_kind_of_answer() -> None:
    """The golden file is only a check where it holds each kind of level answer and next step."""
    text = json.dumps(_golden())
    for needle in (
        '"decision": "speculate"',
        '"decision": "do not speculate"',
        '"decision": "undecided"',
        "depends on concurrency",
        "more launch",
        "more requests",
        "one more launch",
        "no more than",
        "latency target",
        "baseline failed",
        "no no-speculation baseline",
    ):
        assert needle in text, needle


if __name__ == "__main__" and "--write" in sys.argv:
    GOLDEN.write_text(json.dumps({name: dump(s, k) for name, s, k in cases()}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN}")
