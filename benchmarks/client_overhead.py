"""How fast is specadvisor's load generator, and how precise are its timings, next to `vllm bench serve`?

Both clients hit the same local fake SSE server (a separate process) with the same settings:
1. throughput: an instant server (no delay), one token per chunk -> requests/s and chunks/s the
   client sustains (on a 2-core machine the server competes for the same cores);
2. timing error: a server that waits a fixed delay before every chunk -> measured mean/p99
   inter-chunk latency minus that delay (what the client adds to TPOT/ITL).

Usage: .venv/bin/python benchmarks/client_overhead.py [--requests 2000 --output-len 64 --concurrency 64]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from specadvisor.bench.loadgen import make_client, run_load  # noqa: E402
from specadvisor.bench.prompts import load_prompts  # noqa: E402
from specadvisor.settings import paths  # noqa: E402
from specadvisor.stats import percentile  # noqa: E402

ENGINE_PY = paths().cpu_engine / "venv" / "bin" / "python"
TOKENIZER = paths().cpu_engine / "models" / "SmolLM2-135M-Instruct"
VLLM_BENCH = (
    "import argparse, sys; from vllm.benchmarks.serve import add_cli_args, main; "
    "p = argparse.ArgumentParser(); add_cli_args(p); main(p.parse_args(sys.argv[1:]))"
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """The fake server in its own process (uvloop from vLLM's venv when available)."""

    def __init__(self, chunk_delay: float, yield_every: int = 1):
        self.port = free_port()
        py = str(ENGINE_PY) if ENGINE_PY.exists() else sys.executable
        cmd = [
            py,
            str(ROOT / "benchmarks" / "_fake_sse_server.py"),
            "--port",
            str(self.port),
            "--chunk-delay",
            str(chunk_delay),
            "--yield-every",
            str(yield_every),
        ]
        if ENGINE_PY.exists():
            cmd.append("--uvloop")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.proc.stdout.readline()  # "fake SSE server on ..." once listening

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def ours(url: str, n: int, output_len: int, concurrency: int, httpx_pool: bool = False) -> dict:
    """Default path (raw HTTP/1.1 connections), or one shared pooled httpx client (the first design)."""
    ps = load_prompts("random", n, seed=0)

    async def go():
        client = make_client(concurrency) if httpx_pool else None
        try:
            return await run_load(
                base_url=url, model_name="m", prompts=ps, output_len=output_len, temperature=0.0, seed=0, concurrency=concurrency, client=client
            )
        finally:
            if client is not None:
                await client.aclose()

    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    result = asyncio.run(go())
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    itl = [x for r in result.ok_records for x in r.itl_s]
    chunks = sum(len(r.itl_s) + 1 for r in result.ok_records)
    return {
        "completed": result.completed,
        "duration_s": result.duration_s,
        "req_s": result.completed / result.duration_s,
        "chunks_s": chunks / result.duration_s,
        "tokens_ok": all(r.completion_tokens == output_len for r in result.ok_records),
        "itl_mean_ms": 1000 * sum(itl) / len(itl) if itl else None,
        "itl_p99_ms": 1000 * percentile(itl, 99) if itl else None,
        "cpu_s": (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime),
    }


def vllm_bench(url: str, n: int, output_len: int, concurrency: int, startup_cpu_s: float = 0.0) -> dict | None:
    """One `vllm bench serve` run; its client CPU is the child's CPU minus a 1-request run's (imports, tokenizer)."""
    if not ENGINE_PY.exists():
        return None
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            str(ENGINE_PY),
            "-c",
            VLLM_BENCH,
            "--base-url",
            url,
            "--backend",
            "openai",
            "--endpoint",
            "/v1/completions",
            "--model",
            "m",
            "--tokenizer",
            str(TOKENIZER),
            "--dataset-name",
            "random",
            "--random-input-len",
            "32",
            "--random-output-len",
            str(output_len),
            "--num-prompts",
            str(n),
            "--max-concurrency",
            str(concurrency),
            "--ignore-eos",
            "--disable-tqdm",
            "--save-result",
            "--save-detailed",
            "--result-dir",
            tmp,
            "--result-filename",
            "r.json",
            "--percentile-metrics",
            "ttft,tpot,itl,e2el",
            "--metric-percentiles",
            "99",
        ]
        t0 = time.time()
        proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "VLLM_LOGGING_LEVEL": "WARNING"})
        if proc.returncode != 0:
            print(proc.stdout[-2000:], proc.stderr[-3000:], file=sys.stderr)
            return None
        data = json.loads((Path(tmp) / "r.json").read_text())
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    chunks = sum(len(itl) + 1 for itl in data.get("itls", []) if itl is not None)
    return {
        "completed": data["completed"],
        "duration_s": data["duration"],
        "req_s": data["request_throughput"],
        "chunks_s": chunks / data["duration"],
        "tokens_ok": data["total_output_tokens"] == data["completed"] * output_len,
        "itl_mean_ms": data["mean_itl_ms"],
        "itl_p99_ms": data["p99_itl_ms"],
        "cpu_s": (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime) - startup_cpu_s,
        "wall_s": time.time() - t0,
    }


def show(title: str, rows: dict[str, dict | None], delay_ms: float | None = None) -> None:
    """client CPU s: what the client itself burned; with the server on the same 2 cores, CPU per
    request (not wall rate) is the figure that says which client would saturate first."""
    print(f"\n== {title}")
    print(f"{'client':<24}{'req/s':>9}{'chunks/s':>11}{'ITL mean ms':>13}{'ITL p99 ms':>12}{'err mean ms':>13}{'client CPU s':>14}")
    for name, r in rows.items():
        if r is None:
            print(f"{name:<24}  (not run)")
            continue
        err = f"{r['itl_mean_ms'] - delay_ms:13.3f}" if delay_ms is not None and r["itl_mean_ms"] is not None else f"{'-':>13}"
        cpu = f"{r['cpu_s']:14.2f}" if r["cpu_s"] is not None else f"{'-':>14}"
        print(
            f"{name:<24}{r['req_s']:9.1f}{r['chunks_s']:11.0f}{r['itl_mean_ms'] or 0:13.3f}{r['itl_p99_ms'] or 0:12.3f}{err}{cpu}"
            + ("" if r["tokens_ok"] else "  (token count mismatch!)")
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--output-len", type=int, default=64)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--delay-ms", type=float, default=10.0, help="per-chunk server delay for the timing-error run")
    ap.add_argument("--delay-requests", type=int, default=256)
    ap.add_argument("--skip-vllm", action="store_true")
    ap.add_argument("--rounds", type=int, default=3, help="alternating throughput runs per client")
    ap.add_argument("--yield-every", type=int, default=8, help="instant server: chunks written between yields")
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start")

    server = Server(chunk_delay=0.0, yield_every=args.yield_every)
    try:
        startup = 0.0
        if not args.skip_vllm:
            one = vllm_bench(server.url, 1, args.output_len, 1)
            startup = one["cpu_s"] if one else 0.0
        rows = {}
        for i in range(args.rounds):  # alternate the clients: machine load drifts between runs
            runs = [
                ("specadvisor", lambda: ours(server.url, args.requests, args.output_len, args.concurrency)),
                ("vllm bench serve", None if args.skip_vllm else (lambda: vllm_bench(server.url, args.requests, args.output_len, args.concurrency, startup))),
            ]
            for name, run in runs if i % 2 == 0 else runs[::-1]:
                rows[f"{name} #{i + 1}"] = run() if run else None
        rows["specadvisor httpx pool"] = ours(server.url, args.requests, args.output_len, args.concurrency, httpx_pool=True)
    finally:
        server.stop()
    show(f"throughput: instant server, {args.requests} requests x {args.output_len} tokens, concurrency {args.concurrency}", rows)
    for name in ("specadvisor", "vllm bench serve"):
        rates = [r["req_s"] for k, r in rows.items() if k.startswith(name + " #") and r]
        if rates:
            print(f"{name:<24} median {statistics.median(rates):.1f} req/s over {len(rates)} runs")

    server = Server(chunk_delay=args.delay_ms / 1000)
    try:
        n, c = args.delay_requests, min(args.concurrency, 16)
        rows = {"specadvisor": ours(server.url, n, 32, c)}
        rows["vllm bench serve"] = None if args.skip_vllm else vllm_bench(server.url, n, 32, c, startup)
    finally:
        server.stop()
    show(f"timing error: server waits {args.delay_ms} ms per chunk, {n} requests x 32 tokens, concurrency {c}", rows, args.delay_ms)
    print(f"\nload average at end {os.getloadavg()[0]:.2f} (other work on the machine inflates every figure)")


if __name__ == "__main__":
    main()
