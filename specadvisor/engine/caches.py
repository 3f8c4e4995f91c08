"""vLLM's compile and CUDA-graph caches: one shared home for every arm, and whether a launch found them.

Arms of one model compile the same graphs; a cache shared across arms (and sweeps) turns every
launch after the first into a warm one. specadvisor points VLLM_CACHE_ROOT (torch.compile
artifacts) and TORCHINDUCTOR_CACHE_DIR (Inductor kernels) under its own cache folder unless the
user set them, and reads from the server's log whether the launch was cold or warm, so start-up
times are compared like with like.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Literal

from specadvisor.settings import paths

# vLLM's compilation backend logs one of these per compiled graph (vllm/compilation/backends.py).
_WARM = re.compile(r"Directly load (the compiled graph|AOT compil)")
_COLD = re.compile(r"Compiling a graph for|Cache the graph .*for later use")


def cache_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The cache variables to add to a server's environment: those the user (`env`, default ours)
    has not set, pointing under specadvisor's cache folder."""
    env = os.environ if env is None else env
    root = paths().cache / "vllm"
    wanted = {"VLLM_CACHE_ROOT": root / "vllm-cache", "TORCHINDUCTOR_CACHE_DIR": root / "inductor"}
    return {key: str(path) for key, path in wanted.items() if not env.get(key)}


def startup_cache(log_lines: Iterable[str]) -> Literal["cold", "warm"] | None:
    """ "warm" when vLLM loaded its compiled graphs from the cache, "cold" when it compiled them,
    None when the log says neither (eager mode, or a vLLM that logs otherwise)."""
    cold = False
    for line in log_lines:
        if _WARM.search(line):
            return "warm"
        if _COLD.search(line):
            cold = True
    return "cold" if cold else None
