"""Shared fixtures for end-to-end tests against the real CPU build of vLLM.

`cpu_engine` provisions the engine through the same code as `specadvisor engine setup-cpu`
(idempotent and file-locked, so concurrent test sessions are safe) and is reused by every e2e test.
"""

from __future__ import annotations

import pytest

from specadvisor.engine.cpu import CpuEngine, ensure_cpu_engine


@pytest.fixture(scope="session")
def cpu_engine() -> CpuEngine:
    return ensure_cpu_engine(progress=lambda line: print(f"[cpu-engine] {line}", flush=True))


@pytest.fixture(scope="session")
def smollm2_dir(cpu_engine: CpuEngine):
    """The converted SmolLM2-135M-Instruct model folder (safetensors + tokenizer)."""
    return cpu_engine.model_dir
