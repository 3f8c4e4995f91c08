"""Which GPUs are close: NVLink / xGMI peers first, then GPUs under one PCIe host bridge.

Parallel sweeps give a tensor-parallel arm GPUs that talk fast to each other; this reads the link
matrix from NVML (P2P over NVLink, common PCIe ancestor) or amdsmi (xGMI link type). Every call is
guarded: an unknown topology is an empty matrix, and grouping then falls back to index order.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

NVLINK = 2  # NVLink / xGMI peers
SAME_BRIDGE = 1  # under one PCIe host bridge
FAR = 0


def _load_nvml() -> ModuleType:
    return importlib.import_module("pynvml")


def _load_amdsmi() -> ModuleType:
    return importlib.import_module("amdsmi")


def nvidia_affinity(indices: list[int], loader: Callable[[], ModuleType] = _load_nvml) -> dict[tuple[int, int], int]:
    """{(i, j): NVLINK | SAME_BRIDGE | FAR} for NVIDIA GPU indices; {} when NVML is unusable."""
    try:
        nvml = loader()
        nvml.nvmlInit()
    except Exception:  # noqa: BLE001 - topology is a hint; any vendor-library failure means "unknown"
        return {}
    try:
        handles = {i: nvml.nvmlDeviceGetHandleByIndex(i) for i in indices}
        out: dict[tuple[int, int], int] = {}
        for i in indices:
            for j in indices:
                if i < j:
                    out[(i, j)] = out[(j, i)] = _nvidia_pair(nvml, handles[i], handles[j])
        return out
    except Exception:  # noqa: BLE001 - topology is a hint; any vendor-library failure means "unknown"
        return {}
    finally:
        with contextlib.suppress(Exception):
            nvml.nvmlShutdown()


def _nvidia_pair(nvml: Any, a: Any, b: Any) -> int:
    try:
        if nvml.nvmlDeviceGetP2PStatus(a, b, nvml.NVML_P2P_CAPS_INDEX_NVLINK) == nvml.NVML_P2P_STATUS_OK:
            return NVLINK
    except Exception:  # noqa: BLE001 - topology is a hint; any vendor-library failure means "unknown"
        pass
    try:
        level = nvml.nvmlDeviceGetTopologyCommonAncestor(a, b)
        return SAME_BRIDGE if level <= nvml.NVML_TOPOLOGY_HOSTBRIDGE else FAR
    except Exception:  # noqa: BLE001 - topology is a hint; any vendor-library failure means "unknown"
        return FAR


def amd_affinity(indices: list[int], loader: Callable[[], ModuleType] = _load_amdsmi) -> dict[tuple[int, int], int]:
    """{(i, j): NVLINK (xGMI) | FAR} for AMD GPU indices; {} when amdsmi is unusable."""
    try:
        lib = loader()
        lib.amdsmi_init()
    except Exception:  # noqa: BLE001 - topology is a hint; any vendor-library failure means "unknown"
        return {}
    try:
        handles = lib.amdsmi_get_processor_handles()
        out: dict[tuple[int, int], int] = {}
        for i in indices:
            for j in indices:
                if i < j and i < len(handles) and j < len(handles):
                    info = lib.amdsmi_topo_get_link_type(handles[i], handles[j])
                    kind = info.get("type") if isinstance(info, dict) else info
                    xgmi = "XGMI" in str(kind).upper() or kind == getattr(getattr(lib, "AmdSmiIoLinkType", None), "XGMI", object())
                    out[(i, j)] = out[(j, i)] = NVLINK if xgmi else FAR
        return out
    except Exception:  # noqa: BLE001 - topology is a hint; any vendor-library failure means "unknown"
        return {}
    finally:
        with contextlib.suppress(Exception):
            lib.amdsmi_shut_down()
