"""Every test runs with its own SPECADVISOR_HOME (database, logs, user rules, config), so no test
reads or writes the developer's real data. The provisioned CPU engine is the exception: it is
4 GB and takes minutes to build, so its location (from the ambient environment) is shared."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from machine_share import MachineShare
from specadvisor import settings
from specadvisor.engine.cpu import CpuEngine, ensure_cpu_engine

_AMBIENT_ENGINE_DIR = str(settings.paths().cpu_engine)
EXCLUSIVE = "exclusive"


# --- Two workers on one machine (.ci/run runs `pytest -n 2`, pytest-xdist) ---------------------------
# Most tests only need a core; a few measure throughput or pin servers to every core and would read
# the other worker's load as the server's speed. Those carry the `exclusive` mark: they run on one
# worker (one xdist group), and only while the other worker runs nothing (a readers-writer file lock
# taken around each test's whole protocol, outside pytest-timeout's timer, so waiting is not hanging).


# What the caller's environment may hold that changes what specadvisor, vLLM, Ray or rich do: a test
# reads none of it (a developer's exported VLLM_CPU_KVCACHE_SPACE, CUDA_VISIBLE_DEVICES, RAY_ADDRESS,
# COLUMNS or $TMUX would otherwise decide a result). Tests that need one set it themselves.
AMBIENT_PREFIXES = ("VLLM_", "RAY_")
AMBIENT_NAMES = {
    "SPECADVISOR_STALL_TIMEOUT_S",
    "CUDA_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "HF_TOKEN",
    "HF_ENDPOINT",
    "TMUX",
    "COLUMNS",
    "LINES",
    "NO_COLOR",
    "FORCE_COLOR",
}


def pytest_configure(config: pytest.Config) -> None:
    for name in [n for n in os.environ if n.startswith(AMBIENT_PREFIXES) or n in AMBIENT_NAMES]:
        del os.environ[name]  # SPECADVISOR_HOME and the engine's folder are set per test below
    worker = getattr(config, "workerinput", {}).get("workerid")
    if worker:  # each worker's vLLM servers on their own core, as `sweep --parallel` pins its slots
        os.environ["VLLM_CPU_OMP_THREADS_BIND"] = str(int(worker.removeprefix("gw")) % (os.cpu_count() or 1))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:  # before xdist reads the groups (--dist loadgroup)
        if item.get_closest_marker(EXCLUSIVE):
            item.add_marker(pytest.mark.xdist_group(EXCLUSIVE))
    if hasattr(config, "workerinput"):  # the long tests first, so the short ones even out the two workers' ends
        items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    run = getattr(item.config, "workerinput", {}).get("testrunuid")
    if not run:
        yield
        return
    with MachineShare(Path(tempfile.gettempdir()) / f"specadvisor-tests-{run}", exclusive=item.get_closest_marker(EXCLUSIVE) is not None):
        yield


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


@pytest.fixture
def over_the_cap_session():
    """A session of 31 arms (a baseline and 30 n-gram arms, 11 measured) that is over the row cap once
    `capped_tables` lowers it to 20: shared by the views that summarise such a session (show, the TUI)."""
    from specadvisor.domain import Arm, ArmResult, Session

    session = Session(id="cccc3333-0000-4000-8000-000000000003", name="big", model="org/model", status="finished")
    session.arms.append(Arm(id="baseline", label="baseline c1"))
    session.results.append(ArmResult(arm_id="baseline", completed=8, output_throughput=100.0))
    for i in range(30):
        session.arms.append(
            Arm(id=f"ngram-{i}", label=f"ngram {i} c1", method="ngram", n=2, speculative_config={"method": "ngram", "num_speculative_tokens": 2})
        )
        if i % 3 == 0:  # 10 measured, 20 never run
            session.results.append(ArmResult(arm_id=f"ngram-{i}", completed=8, output_throughput=100.0 + i))
    return session


@pytest.fixture
def capped_tables(monkeypatch):
    """The report's row cap lowered to 20 arms, 2 per concurrency: a small session shows the big-session path."""
    from specadvisor.report import content

    monkeypatch.setattr(content, "MAX_REPORT_ARMS", 20)
    monkeypatch.setattr(content, "TOP_ARMS_PER_CONCURRENCY", 2)
