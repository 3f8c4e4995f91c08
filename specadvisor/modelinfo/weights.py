"""What the checkpoint's weight files say: tensor names (to confirm MTP heads) and the parameter count.

Reads only `model.safetensors.index.json` and the JSON headers of local .safetensors files (a few KB
each), never the tensors themselves.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

INDEX_FILE = "model.safetensors.index.json"
MAX_HEADER_BYTES = 100 * 2**20


@dataclass(frozen=True)
class WeightInfo:
    names: frozenset[str]
    total_bytes: int | None = None  # from the index's metadata.total_size
    exact_params: int | None = None  # summed from safetensors headers when every shard is local
    source: str = ""


def from_index(index: object) -> WeightInfo | None:
    weight_map = index.get("weight_map") if isinstance(index, dict) else None
    if not isinstance(index, dict) or not isinstance(weight_map, dict):
        return None
    total = (index.get("metadata") or {}).get("total_size")
    return WeightInfo(
        names=frozenset(weight_map),
        total_bytes=int(total) if isinstance(total, (int, float)) else None,
        source=INDEX_FILE,
    )


def _header(path: Path) -> dict[str, Any] | None:
    """The JSON header of a .safetensors file: 8-byte little-endian length, then JSON."""
    try:
        with path.open("rb") as fh:
            (length,) = struct.unpack("<Q", fh.read(8))
            if length > MAX_HEADER_BYTES:
                return None
            header = json.loads(fh.read(length))
    except (OSError, struct.error, ValueError):
        return None
    return header if isinstance(header, dict) else None


def _count(header: dict[str, Any]) -> int:
    return sum(math.prod(t.get("shape", [])) for name, t in header.items() if name != "__metadata__" and isinstance(t, dict))


def read_local(model_dir: Path) -> WeightInfo | None:
    """Index and/or safetensors headers of a local checkpoint; None when it has neither."""
    index_info = None
    index_path = model_dir / INDEX_FILE
    if index_path.is_file():
        try:
            index_info = from_index(json.loads(index_path.read_text()))
        except (OSError, ValueError):
            index_info = None
    files = sorted(model_dir.glob("*.safetensors"))
    headers = [h for h in (_header(f) for f in files) if h is not None]
    if files and len(headers) == len(files):
        names = frozenset(n for h in headers for n in h if n != "__metadata__")
        if index_info is None or names >= index_info.names:
            total = index_info.total_bytes if index_info else None
            return WeightInfo(names=names, total_bytes=total, exact_params=sum(map(_count, headers)), source="safetensors headers")
    return index_info
