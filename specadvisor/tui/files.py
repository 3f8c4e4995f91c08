"""Writing user-chosen files from the TUI without leaving half-written ones behind."""

from __future__ import annotations

from pathlib import Path

from specadvisor.fileio import write_atomic


def write_text_atomic(path: Path, text: str) -> Path:
    return write_atomic(path, text)
