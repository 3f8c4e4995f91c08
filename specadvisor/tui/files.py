"""Writing user-chosen files from the TUI without leaving half-written ones behind."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from specadvisor.errors import InputError


def write_text_atomic(path: Path, text: str) -> Path:
    """Write via a temporary file in the same folder and a rename; a bad folder is an InputError."""
    path = Path(path).expanduser()
    if path.is_dir():
        raise InputError(f"{path} is a folder", hint="give a file name")
    if not path.parent.is_dir():
        raise InputError(f"folder {path.parent} does not exist", hint="create it or choose another path")
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
