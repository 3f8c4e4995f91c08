"""Every test runs with its own SPECADVISOR_HOME (database, logs, user rules, config), so no test
reads or writes the developer's real data. The provisioned CPU engine is the exception: it is
3 GB and takes minutes to build, so its location (from the ambient environment) is shared."""

from __future__ import annotations

import os

import pytest

from specadvisor import settings
from specadvisor.engine.cpu import CpuEngine, ensure_cpu_engine

_AMBIENT_ENGINE_DIR = str(settings.paths().cpu_engine)


@pytest.fixture(autouse=True)
def isolated_specadvisor_home(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("specadvisor-home")
    monkeypatch.setenv("SPECADVISOR_HOME", str(home))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # no test reaches the Hub (a sweep would pre-download); Hub fakes unset it
    monkeypatch.setenv("SPECADVISOR_ENGINE_DIR", os.environ.get("SPECADVISOR_ENGINE_DIR", _AMBIENT_ENGINE_DIR))
    return home


@pytest.fixture(scope="session")
def cpu_engine() -> CpuEngine:
    """The real CPU build of vLLM, provisioned through the same code as `specadvisor engine setup-cpu`
    (idempotent and file-locked, so concurrent test sessions are safe); shared by every real-engine test."""
    return ensure_cpu_engine(progress=lambda line: print(f"[cpu-engine] {line}", flush=True))


@pytest.fixture(scope="session")
def smollm2_dir(cpu_engine: CpuEngine):
    """The converted SmolLM2-135M-Instruct model folder (safetensors + tokenizer)."""
    return cpu_engine.model_dir
