"""Fidelity as a regression test: in every entry mode (a server specadvisor launches through
`--engine-cmd`, the `--cpu` engine, a running server through `--endpoint`) and at concurrency 1
and 4, specadvisor's output throughput must agree with `vllm bench serve`'s on the same server, and
the acceptance counts it reports must equal the server's own /metrics counter deltas exactly.

"Agree" is judged on the data: both tools run RUNS times in ABBA order, and the 95% interval of the
paired ratio (from the runs' own spread) must reach into the band [1/1.05, 1.05], that is, the
runs must not show a gap larger than 5%. A systematic gap (the 0.785 of issue 25, every run of one
tool below every run of the other) fails it; run-to-run noise of a loaded 2-core machine does not.
Why not "the interval includes 1": when the pairs agree closely the interval is narrow, and a real
difference of a percent or two then excludes 1 although both tools measured correctly. On 2 cores
the client shares the CPU with a CPU-bound server, so the cheaper client sees a slightly faster
server (a fresh-clone CI run read 1.022 [1.011-1.034] at c=1); each client's CPU share is in the
table's last column. The figure itself (medians, spreads, ratio, CPU share) is a benchmark,
tracked in benchmarks/README.md: `benchmarks/fidelity_modes.py`.

Each mode is one real CLI sweep (`--concurrency 1,4`: one server, two arms); the harness wraps the
runner's measure function so that each arm is measured alternately by both tools. Two servers in
all: `--engine-cmd` launches one, `--cpu` another, and the `--endpoint` sweep measures the `--cpu`
one while it runs. Short runs (a few HumanEval prompts, short outputs) keep the module at about six
minutes on 2 cores.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fidelity_harness import HEADER, RUNS, BenchWorker, FidelityMeasure

from specadvisor.cli.main import main
from specadvisor.sweep import runner as runner_module

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.exclusive, pytest.mark.timeout(1200)]

METHOD = ["--method", "ngram", "--n", "3", "--spec-extra", '{"prompt_lookup_min":2,"prompt_lookup_max":4}']
RAW = ["--request-format", "completions"]  # raw text, as vLLM's ShareGPT loader sends the harness's file
LOAD = ["--prompts", "humaneval", *RAW, "--num-prompts", "4", "--output-len", "24", "--warmup", "0", "--concurrency", "1,4", "--no-baseline"]
MODES = ("launch", "cpu", "endpoint")
TOLERANCE = 1.05  # the largest gap between the tools the runs may show (see the module docstring)
TABLE: dict[tuple[str, int], object] = {}


@pytest.fixture(scope="module")
def bench_worker(cpu_engine):
    worker = BenchWorker(cpu_engine.python)
    yield worker
    worker.close()


@pytest.fixture(scope="module")
def fidelity(cpu_engine, bench_worker, tmp_path_factory):
    """mode -> {concurrency: Comparison}, each mode's sweep run once, on first use."""
    done: dict[str, dict] = {}

    def measure(mode: str) -> dict:
        if mode not in done:
            _sweep("cpu" if mode == "endpoint" else mode, cpu_engine, bench_worker, tmp_path_factory.mktemp(mode), done)
        return done[mode]

    yield measure
    out = os.environ.get("FIDELITY_TABLE_OUT")  # benchmarks/fidelity_modes.py reads the runs from here
    if out:
        rows = [
            {"mode": m, "concurrency": c, "ours": t.ours, "bench": t.bench, "ours_cpu": t.ours_cpu, "bench_cpu": t.bench_cpu} for (m, c), t in TABLE.items()
        ]
        Path(out).write_text(json.dumps(rows))
    if TABLE:
        print("\n" + HEADER)
        for key in sorted(TABLE, key=lambda k: (MODES.index(k[0]), k[1])):
            print(TABLE[key].row())


def _sweep(mode: str, cpu_engine, worker: BenchWorker, tmp: Path, results: dict) -> None:
    """One CLI sweep in `mode`; the `--cpu` one also runs the `--endpoint` sweep on its server."""
    after = (lambda url: _sweep_endpoint(url, cpu_engine, worker, tmp, results)) if mode == "cpu" else None
    harness = FidelityMeasure(mode, worker, cpu_engine.model_dir, after=after)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(runner_module, "_default_measure", harness)
        if mode == "launch":
            # The CPU build behind a plain --engine-cmd: specadvisor must add the CPU defaults itself
            # (without VLLM_CPU_KVCACHE_SPACE vLLM claims 92% of RAM and refuses to start here).
            for key in cpu_engine.env:
                mp.delenv(key, raising=False)
            argv = ["--model", str(cpu_engine.model_dir), "--engine-cmd", " ".join(cpu_engine.engine_cmd), *METHOD]
        else:
            argv = ["--cpu", *METHOD]
        code = main(["--db", str(tmp / f"{mode}.db"), "sweep", *argv, *LOAD, "--json"])
    assert code == 0
    _collect(mode, harness, results)


def _sweep_endpoint(url: str, cpu_engine, worker: BenchWorker, tmp: Path, results: dict) -> None:
    """`sweep --endpoint URL` on a running server (called from the --cpu sweep's harness thread)."""
    harness = FidelityMeasure("endpoint", worker, cpu_engine.model_dir)
    outer = runner_module._default_measure  # the --cpu runner already holds its own measure function
    runner_module._default_measure = harness
    try:
        code = main(["--db", str(tmp / "endpoint.db"), "sweep", "--endpoint", url, *LOAD, "--json"])
    finally:
        runner_module._default_measure = outer
    assert code == 0
    _collect("endpoint", harness, results)


def _collect(mode: str, harness: FidelityMeasure, results: dict) -> None:
    results[mode] = {c.concurrency: c for c in harness.comparisons}
    for c, cmp in results[mode].items():
        TABLE[(mode, c)] = cmp


@pytest.mark.parametrize("concurrency", [1, 4])
@pytest.mark.parametrize("mode", MODES)
def test_throughput_matches_vllm_bench_serve(fidelity, mode, concurrency, capsys):
    cmp = fidelity(mode)[concurrency]
    assert len(cmp.ours) == len(cmp.bench) == RUNS
    with capsys.disabled():
        print(f"\n{cmp.row()}  ours {[round(x, 2) for x in cmp.ours]} bench {[round(x, 2) for x in cmp.bench]}")
    low, high = cmp.paired_ratio_interval()
    assert high >= 1 / TOLERANCE and low <= TOLERANCE, f"the runs show a gap over {TOLERANCE - 1:.0%} between the tools: {cmp.row()}"


@pytest.mark.parametrize("concurrency", [1, 4])
@pytest.mark.parametrize("mode", MODES)
def test_acceptance_counts_equal_the_servers_counter_deltas(fidelity, mode, concurrency):
    cmp = fidelity(mode)[concurrency]
    assert cmp.count_checks
    for reported, server in cmp.count_checks:
        assert reported["drafts"] > 0, reported  # speculation ran: the check is not vacuous
        assert reported == server
    # and both tools see the same acceptance (same server, prompts and temperature 0)
    assert cmp.our_al and cmp.bench_al
    # (same server, prompts, order and temperature 0: only batching nondeterminism separates them)
    ours, bench = statistics.median(cmp.our_al), statistics.median(cmp.bench_al)
    assert abs(ours - bench) <= 0.05 * bench, (cmp.our_al, cmp.bench_al)
