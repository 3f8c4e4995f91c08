"""The fidelity harness the e2e tests share: specadvisor's own measurement, wrapped so that every
arm it measures is measured RUNS times alternately with `vllm bench serve` on the same server.

The wrapper replaces the runner's measure function at the process boundary only: it calls the real
specadvisor.bench.measure.measure_arm with exactly the arm, settings, prompts and model name the
CLI's entry path built, and hands the runner the last result as usual. Around each of its own runs
it reads the server's /metrics, so that the acceptance counts specadvisor reports can be checked
against the server's counter deltas (warmup 0: the delta covers exactly the measured requests).
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import statistics
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from specadvisor.bench.loadgen import run_load
from specadvisor.bench.measure import measure_arm
from specadvisor.bench.metrics import delta, scrape
from specadvisor.domain import ArmFinished, ArmResult
from specadvisor.engine import reset_prefix_cache
from specadvisor.stats import t_critical_975

RUNS = int(os.environ.get("FIDELITY_RUNS", "4"))  # per tool; even, so the ABBA order is balanced
WORKER = Path(__file__).with_name("vllm_bench_worker.py")


class BenchWorker:
    """One `vllm bench serve` process (the CPU engine's Python) serving many runs."""

    def __init__(self, engine_python: Path):
        self.proc = subprocess.Popen(
            [str(engine_python), str(WORKER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "VLLM_LOGGING_LEVEL": "WARNING"},
        )
        self.lock = threading.Lock()
        hello = self.proc.stdout.readline()
        if not hello:
            raise RuntimeError("the vllm bench serve worker did not start")

    def run(self, argv: list[str]) -> dict:
        with self.lock:
            self.proc.stdin.write(json.dumps(argv) + "\n")
            self.proc.stdin.flush()
            answer = json.loads(self.proc.stdout.readline())
        if "error" in answer:
            raise RuntimeError(f"vllm bench serve failed: {answer['error']}\n{answer.get('trace', '')}")
        return answer

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@dataclass
class Comparison:
    """Both tools' runs at one concurrency on one server."""

    mode: str
    concurrency: int
    ours: list[float] = field(default_factory=list)
    bench: list[float] = field(default_factory=list)
    count_checks: list[tuple[dict, dict]] = field(default_factory=list)  # (reported, server delta) per run of ours
    bench_al: list[float] = field(default_factory=list)
    our_al: list[float] = field(default_factory=list)
    # each client's own CPU share while it measured (CPU seconds / wall seconds): on a 2-core machine the
    # client shares the CPU with a CPU-bound server, so a costlier client measures a slower server
    ours_cpu: list[float] = field(default_factory=list)
    bench_cpu: list[float] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        return statistics.median(self.ours) / statistics.median(self.bench)

    def paired_ratio_interval(self) -> tuple[float, float]:
        """95% t-interval of the ratio ours/bench from the runs taken in pairs (run i of each tool ran
        back to back, ABBA order), on the log scale: the machine's drift hits both members of a pair,
        so what is left is each tool's run-to-run noise, estimated from the data itself."""
        logs = [math.log(o / b) for o, b in zip(self.ours, self.bench, strict=True)]
        mean, half = statistics.fmean(logs), t_critical_975(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
        return math.exp(mean - half), math.exp(mean + half)

    @staticmethod
    def spread(values: list[float]) -> float:
        return (max(values) - min(values)) / statistics.median(values)

    def row(self) -> str:
        low, high = self.paired_ratio_interval()
        cpu = f" {statistics.median(self.ours_cpu):.0%} / {statistics.median(self.bench_cpu):.0%} |" if self.ours_cpu and self.bench_cpu else " - |"
        return (
            f"| {self.mode} | {self.concurrency} | {statistics.median(self.ours):.2f} | {statistics.median(self.bench):.2f} | "
            f"{self.ratio:.3f} | {low:.3f}-{high:.3f} | {self.spread(self.ours):.1%} / {self.spread(self.bench):.1%} |{cpu}"
        )


HEADER = (
    "| mode | c | specadvisor median tok/s | vllm bench serve median tok/s | ratio of medians | paired 95% interval "
    "| spread (ours / bench) | client CPU (ours / bench) |\n|---|---|---|---|---|---|---|---|"
)


class CpuShare:
    """CPU seconds a process spent per wall second between start() and stop()."""

    def __init__(self, pid: int):
        self.proc = psutil.Process(pid)

    def start(self) -> None:
        t = self.proc.cpu_times()
        self.cpu, self.wall = t.user + t.system, time.perf_counter()

    def stop(self) -> float:
        t = self.proc.cpu_times()
        return (t.user + t.system - self.cpu) / max(time.perf_counter() - self.wall, 1e-9)


def _counts(r: ArmResult) -> dict:
    return {"drafts": r.num_drafts, "draft_tokens": r.num_draft_tokens, "accepted": r.num_accepted_tokens, "per_position": [p.accepted for p in r.per_position]}


def _delta_counts(d) -> dict:
    return {
        "drafts": int(d.num_drafts),
        "draft_tokens": int(d.num_draft_tokens),
        "accepted": int(d.num_accepted_tokens),
        "per_position": [int(x) for x in d.accepted_per_position],
    }


class FidelityMeasure:
    """A drop-in for the runner's measure function (see the module docstring)."""

    def __init__(self, mode: str, worker: BenchWorker, tokenizer: Path, after=None):
        self.mode = mode
        self.worker = worker
        self.tokenizer = tokenizer
        self.after = after  # called with the server's URL once its arms are measured (shares the server)
        self.comparisons: list[Comparison] = []
        self._dataset_dir = tempfile.TemporaryDirectory()
        self._warm: set[str] = set()

    def _dataset(self, prompts) -> Path:
        # ShareGPT layout: vLLM sends the first turn as the raw completion prompt, as specadvisor does.
        path = Path(self._dataset_dir.name) / "prompts.json"
        path.write_text(
            json.dumps([{"id": p.id, "conversations": [{"from": "human", "value": p.text}, {"from": "gpt", "value": "-"}]} for p in prompts.prompts])
        )
        return path

    def _bench(self, base_url: str, model_name: str, settings, concurrency: int, dataset: Path, n: int) -> dict:
        return self.worker.run(
            [
                "--base-url",
                base_url,
                "--backend",
                "openai",
                "--endpoint",
                "/v1/completions",
                "--model",
                model_name,
                "--tokenizer",
                str(self.tokenizer),
                "--dataset-name",
                "sharegpt",
                "--dataset-path",
                str(dataset),
                "--sharegpt-output-len",
                str(settings.output_len),
                "--disable-shuffle",
                "--num-prompts",
                str(n),
                "--max-concurrency",
                str(concurrency),
                "--ignore-eos",
                "--temperature",
                str(settings.temperature),
                "--num-warmups",
                "0",
                "--disable-tqdm",
            ]
        )

    async def __call__(self, **kw):
        arm, settings, prompts, base_url = kw["arm"], kw["settings"], kw["prompts"], kw["base_url"]
        dataset = self._dataset(prompts)
        if base_url not in self._warm:  # a fresh server's first requests are slow: keep them out of both tools' runs
            self._warm.add(base_url)
            warm = prompts.model_copy(update={"prompts": prompts.prompts[:2]})
            await run_load(
                base_url=base_url,
                model_name=kw["model_name"],
                prompts=warm,
                output_len=settings.output_len,
                temperature=settings.temperature,
                seed=settings.seed,
                concurrency=2,
            )
        cmp = Comparison(self.mode, arm.concurrency)
        self.comparisons.append(cmp)
        last: ArmResult | None = None
        for i in range(RUNS):
            for tool in ("ours", "bench") if i % 2 == 0 else ("bench", "ours"):
                await reset_prefix_cache(base_url)  # the same cold prefix cache for both tools
                if tool == "bench":
                    share = CpuShare(self.worker.proc.pid)
                    share.start()
                    data = await asyncio.to_thread(self._bench, base_url, kw["model_name"], settings, arm.concurrency, dataset, len(prompts.prompts))
                    cmp.bench_cpu.append(share.stop())
                    assert data["completed"] == len(prompts.prompts), data
                    cmp.bench.append(data["output_throughput"])
                    if data.get("spec_decode_acceptance_length") is not None:
                        cmp.bench_al.append(data["spec_decode_acceptance_length"])
                    continue
                before = await scrape(base_url)
                share = CpuShare(os.getpid())  # this process: specadvisor's client and the harness, nothing else runs here then
                share.start()
                async for event in measure_arm(**kw):
                    if isinstance(event, ArmFinished):
                        last = event.result
                cmp.ours_cpu.append(share.stop())
                after = await scrape(base_url)
                cmp.ours.append(last.output_throughput)
                cmp.count_checks.append((_counts(last), _delta_counts(delta(before, after))))
                if last.mean_acceptance_length is not None:
                    cmp.our_al.append(last.mean_acceptance_length)
        if self.after is not None and arm.concurrency == max(settings.concurrency):
            await asyncio.to_thread(self.after, base_url)
        yield ArmFinished(result=last)
