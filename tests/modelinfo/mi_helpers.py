"""Fixture paths and small builders for the modelinfo tests (real files in tmp dirs)."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

MODELS = Path(__file__).resolve().parents[1] / "fixtures" / "models"


def model_dir(name: str) -> Path:
    return MODELS / name


def copy_model(name: str, dest: Path) -> Path:
    target = dest / name
    shutil.copytree(MODELS / name, target)
    return target


def write_safetensors(path: Path, tensors: dict[str, list[int]], dtype: str = "F32") -> None:
    """A real (tiny) safetensors file: header JSON with shapes/offsets, then zero bytes."""
    header, offset = {}, 0
    for name, shape in tensors.items():
        size = 4
        for dim in shape:
            size *= dim
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"\0" * offset)
