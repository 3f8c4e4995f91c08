"""How much faster is a parallel sweep on an 8-GPU host? The real runner and scheduler, a stand-in engine.

The sweep machinery is the real one (SweepRunner, Scheduler, AdaptivePolicy, the early-stop rule,
the recommendation, a real SQLite store); only the process boundary is replaced: a fake server that
is "ready" after a GPU start-up time, and a fake load generator that completes requests at a GPU
throughput, on a virtual clock (the event loop jumps to the next timer whenever every task waits), so the
whole comparison runs in seconds and its wall times contain no Python overhead.

Figures the stand-in uses, measured on an H200 with vLLM 0.26.0 and SmolLM2-135M bf16 (64 HumanEval
prompts, 128 output tokens, T=0, 2026-12-01):
  - server ready in 52-57 s (--max-model-len 2048 --gpu-memory-utilization 0.3 --max-num-seqs 32);
  - output tok/s at concurrency 8: baseline 3082.2; ngram N=2 1517.1 (mean acceptance length 2.226);
    ngram N=4 1795.3 (2.980); per-position acceptance .638 .523 .439 .379.
Other N follow the step-cost line through those two points (tok/s = k * AL(N) / (1 + c*N), AL from
the per-position rates); other families scale acceptance (prompt_lookup_min 3: x0.9, 4: x0.8;
suffix: x1.05). Scenario "measured": every speculative arm loses, as it did on the H200. Scenario
"spec-wins" (hypothetical: a target large enough that a verification step costs what a decode step
does) multiplies speculative throughput by 2.5, so the answer is a speculative arm.
Run-to-run noise 2% per launch, 5% per request.

Compared, 20 arms (baseline + 19 speculative) on 8 GPUs: serial (one server at a time, no
bracketing: what `vllm bench sweep serve` does), parallel (8 slots, baseline in every wave, a
confirmation wave), parallel + --adaptive + early stopping (3% interval target).

Usage: .venv/bin/python benchmarks/sim_parallel_gpu.py [--seeds 3] [--verbose]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
from pathlib import Path
from typing import ClassVar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from specadvisor.bench.loadgen import LoadResult, RequestRecord  # noqa: E402
from specadvisor.bench.measure import summarize  # noqa: E402
from specadvisor.domain import ArmFinished, PositionStats, Progress, SweepSettings  # noqa: E402
from specadvisor.store import Store  # noqa: E402
from specadvisor.sweep.plan import plan_from_methods  # noqa: E402
from specadvisor.sweep.runner import SweepRunner  # noqa: E402
from specadvisor.sweep.slots import plan_slots  # noqa: E402

READY_S = (52.0, 57.0)
BASELINE_TPS = 3082.2
RATES = [0.638, 0.523, 0.439, 0.379, 0.33, 0.29, 0.26]
FAMILIES = {2: 1.0, 3: 0.9, 4: 0.8}  # ngram prompt_lookup_min -> acceptance scale
SUFFIX_SCALE = 1.05
PROMPTS, OUTPUT_LEN, CONCURRENCY, WARMUP = 64, 128, 8, 2


def _al(n: int, scale: float) -> float:
    return 1 + sum(min(0.95, r * scale) for r in RATES[:n])


def _step_line() -> tuple[float, float]:
    """k, c of tok/s = k * AL / (1 + c N) through the measured N=2 and N=4 points."""
    al2, al4, t2, t4 = _al(2, 1.0), _al(4, 1.0), 1517.1, 1795.3
    ratio = (t4 / t2) / (al4 / al2)  # = (1 + 2c) / (1 + 4c)
    c = (1 - ratio) / (4 * ratio - 2)
    return t2 * (1 + 2 * c) / al2, c


class Engine:
    """True throughput and acceptance of every arm in one scenario."""

    def __init__(self, spec_factor: float, seed: int):
        self.k, self.c = _step_line()
        self.spec_factor = spec_factor
        self.rng = random.Random(seed)

    def scale_of(self, arm) -> float:
        cfg = arm.speculative_config or {}
        if cfg.get("method") == "suffix":
            return SUFFIX_SCALE
        return FAMILIES.get(cfg.get("prompt_lookup_min", 2), 1.0)

    def tps(self, arm) -> float:
        if arm.is_baseline:
            return BASELINE_TPS
        return self.spec_factor * self.k * _al(arm.n, self.scale_of(arm)) / (1 + self.c * arm.n)


class FakeServer:
    def __init__(self, arm, clock):
        self.arm, self.clock = arm, clock
        self.base_url, self.command, self.running = "http://127.0.0.1:9", ["vllm", "serve", arm.id], False
        self.port = self.diagnosis = self.log_path = None  # what the runner's ServerHandle protocol reads

    def subscribe(self, cb):
        pass

    def tail(self, n=40):
        return []

    async def start(self):
        self.running = True

    async def wait_ready(self):
        ready = self.clock.rng.uniform(*READY_S)
        await self.clock.sleep(ready)
        return ready

    async def stop(self):
        self.running = False


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An event loop on a fake clock: whenever every task waits on a timer, time jumps to the next
    timer instead of passing. The runner, scheduler and store run unchanged and at full speed; the
    simulated wall time is exactly the model's (no Python overhead is scaled into it)."""

    def __init__(self):
        super().__init__()
        self.virtual = 0.0
        select = self._selector.select

        def jumping_select(timeout=None):
            events = select(0)
            if not events and timeout:
                self.virtual += timeout
            return events

        self._selector.select = jumping_select

    def time(self) -> float:
        return self.virtual


class Clock:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def now(self) -> float:
        return asyncio.get_running_loop().time()

    async def sleep(self, sim_s: float) -> None:
        await asyncio.sleep(sim_s)


def make_measure(engine: Engine, clock: Clock):
    async def measure(*, arm, settings, prompts, stop=None, **_):
        true = engine.tps(arm) * clock.rng.gauss(1.0, 0.02)
        per_request = OUTPUT_LEN * CONCURRENCY / true  # closed loop at concurrency 8
        await clock.sleep(WARMUP * per_request / CONCURRENCY)
        records: list[RequestRecord] = []
        queue = list(range(PROMPTS))
        start = clock.now()

        async def worker():
            while queue:
                if stop is not None and stop(records, clock.now() - start):
                    return
                queue.pop()
                t0 = clock.now()
                took = per_request * clock.rng.lognormvariate(0, 0.05)
                await clock.sleep(took)
                gap = took / OUTPUT_LEN
                records.append(
                    RequestRecord(
                        ok=True,
                        completion_tokens=OUTPUT_LEN,
                        expected_tokens=OUTPUT_LEN,
                        ttft_s=gap,
                        itl_s=[gap] * (OUTPUT_LEN - 1),
                        start_s=t0,
                        end_s=t0 + took,
                        latency_s=took,
                    )
                )

        workers = [asyncio.create_task(worker()) for _ in range(CONCURRENCY)]
        done_before = 0
        while not all(w.done() for w in workers):
            await asyncio.sleep(0.002)
            if len(records) != done_before:
                done_before = len(records)
                elapsed = max(1e-9, clock.now() - start)
                yield Progress(arm_id=arm.id, completed=len(records), total=PROMPTS, output_throughput=sum(r.completion_tokens for r in records) / elapsed)
        end = clock.now()
        load = LoadResult(records=records, duration_s=end - start, achieved_rate=0.0, start_s=start, end_s=end)
        result = summarize(arm.id, [load], [], OUTPUT_LEN)
        if not arm.is_baseline:
            al = _al(arm.n, engine.scale_of(arm))
            drafts = 10000
            rates = [min(0.95, r * engine.scale_of(arm)) for r in RATES[: arm.n]]
            result.num_drafts, result.num_draft_tokens = drafts, drafts * arm.n
            result.num_accepted_tokens = int((al - 1) * drafts)
            result.mean_acceptance_length = al
            result.per_position = [PositionStats(position=i, accepted=int(r * drafts), drafts=drafts, rate=r) for i, r in enumerate(rates)]
        yield ArmFinished(result=result)

    return measure


class Prompts:
    prompts: ClassVar[list[int]] = list(range(PROMPTS))


def plan():
    methods = [("ngram", {"prompt_lookup_min": m}) for m in (2, 3, 4)]
    p = plan_from_methods("smollm2", methods, [1, 2, 3, 4, 5], SweepSettings(num_prompts=PROMPTS, output_len=OUTPUT_LEN, concurrency=[CONCURRENCY]))
    for n in (1, 2, 3, 4):
        p.add_arm("suffix", n)
    assert len(p.arms) == 20, len(p.arms)
    return p


async def run(mode: str, spec_factor: float, seed: int, db: Path) -> dict:
    p = plan()
    s = p.session.settings
    slots = plan_slots(1, gpus=[])
    adaptive = False
    if mode == "serial":
        s.bracket = False
    else:
        slots = plan_slots("auto", gpus=list(range(8)), tp=1)
    if mode == "parallel+adaptive":
        adaptive, s.ci_target = True, 0.03
    clock = Clock(seed)
    engine = Engine(spec_factor, seed)
    with Store.open(db) as store:
        runner = SweepRunner(
            p,
            store,
            server_factory=lambda arm, session, placement=None: FakeServer(arm, clock),
            measure=make_measure(engine, clock),
            prompt_loader=lambda session: Prompts(),
            adaptive=adaptive,
            slots=slots,
        )
        async for _ in runner.events():
            pass
        session = runner.session
    rec = session.recommendation
    runs = [run for r in session.results for run in r.runs]
    return {
        "mode": mode,
        "sim_s": clock.now(),
        "launches": runner.launches_used,
        "answer": rec.arm_id or ("withheld" if rec.withheld else "do not speculate"),
        "requests": sum(r.completed for r in runs),
        "saved_s": sum(r.seconds_saved for r in runs),
        "waves": max((r.wave or 0 for r in runs), default=0),
        "arms": {a.id: round(session.result_for(a.id).output_throughput or 0) for a in session.arms if session.result_for(a.id)},
        "true": {a.id: round(engine.tps(a)) for a in session.arms},
    }


def true_of(row: dict) -> float:
    """True tok/s of the mode's answer (a verdict without a speculative arm means the baseline)."""
    return row["true"].get(row["answer"], row["true"]["baseline"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3, help="repeat each scenario with seeds 1..SEEDS")
    ap.add_argument("--verbose", action="store_true", help="print every arm's true and measured tok/s")
    args = ap.parse_args()
    modes = ("serial", "parallel", "parallel+adaptive")
    with tempfile.TemporaryDirectory() as tmp:
        for scenario, factor in (("measured", 1.0), ("spec-wins", 2.5)):
            print(f"\nscenario {scenario}: 20 arms, 8 GPUs, 64 prompts x 128 tokens at concurrency 8")
            print(
                f"{'seed':>4} {'mode':<18} {'sim wall':>9} {'vs serial':>9} {'launches':>8} {'waves':>5} {'requests':>8} {'saved s':>7}  answer (true tok/s; true best)"
            )
            speedups: dict[str, list[float]] = {m: [] for m in modes}
            agree = agree_parallel = 0
            for seed in range(1, args.seeds + 1):
                rows = []
                for m in modes:
                    loop = VirtualTimeLoop()
                    try:
                        rows.append(loop.run_until_complete(run(m, factor, seed, Path(tmp) / f"{scenario}-{m}-{seed}.db")))
                    finally:
                        loop.close()
                serial = rows[0]["sim_s"]
                best = max(rows[0]["true"].values())
                for r in rows:
                    speedups[r["mode"]].append(serial / r["sim_s"])
                    print(
                        f"{seed:>4} {r['mode']:<18} {r['sim_s']:>8.0f}s {serial / r['sim_s']:>8.1f}x {r['launches']:>8} {r['waves']:>5} {r['requests']:>8} "
                        f"{r['saved_s']:>7.0f}  {r['answer']} ({true_of(r):.0f}; {best:.0f})"
                    )
                    if args.verbose:
                        print("     ", {k: (r["true"][k], v) for k, v in r["arms"].items()})
                agree += rows[0]["answer"] == rows[2]["answer"]
                agree_parallel += rows[1]["answer"] == rows[2]["answer"]
            print("mean speed-up vs serial: " + ", ".join(f"{m} {sum(v) / len(v):.1f}x" for m, v in speedups.items()))
            print(
                f"parallel+adaptive gave parallel's answer in {agree_parallel} of {args.seeds} seeds, serial's in {agree} of {args.seeds} "
                "(where they differ, compare the true tok/s: near-ties go to the smaller N, and which side of a tie a noisy run lands on varies)"
            )


if __name__ == "__main__":
    main()
