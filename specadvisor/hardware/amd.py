"""AMD Instinct/Radeon GPUs, from the richest source that works: the amdsmi library, `amd-smi static
--json`, `rocm-smi --json`, then sysfs. The gfx target matters most (gfx942 = MI300X/MI325X,
gfx950 = MI350X/MI355X): it decides which kernels and speculative methods vLLM's ROCm build runs.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from specadvisor.hardware.commands import Runner, run_command
from specadvisor.machine import GpuInfo, ProbeNote

GFX_FAMILIES = {"gfx942": "MI300X/MI325X", "gfx950": "MI350X/MI355X", "gfx90a": "MI210/MI250X", "gfx908": "MI100"}
"""Instinct generations by gfx target: a name for GPUs whose marketing name is not reported."""

AMD_VENDOR_ID = "0x1002"


def gfx_family(gfx: str | None) -> str | None:
    return GFX_FAMILIES.get(gfx or "")


def _load_amdsmi() -> ModuleType:
    return importlib.import_module("amdsmi")


def _safe(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except Exception:  # noqa: BLE001 - a failure here is reported, never raised
        return None


def _name(market_name: str | None, gfx: str | None) -> str:
    if market_name and market_name.strip() not in {"", "N/A"}:
        return market_name.strip()
    family = gfx_family(gfx)
    return f"AMD Instinct {family}" if family else "AMD GPU"


def probe_amdsmi(loader: Callable[[], ModuleType] = _load_amdsmi) -> tuple[list[GpuInfo], ProbeNote]:
    try:
        lib = loader()
    except Exception as exc:  # noqa: BLE001 - amdsmi raises KeyError (not ImportError) when libamd_smi.so is missing
        return [], ProbeNote(probe="amdsmi", ok=False, detail=f"amdsmi not usable: {type(exc).__name__}: {exc}")
    try:
        lib.amdsmi_init()
    except Exception as exc:  # noqa: BLE001 - a failure here is reported, never raised
        return [], ProbeNote(probe="amdsmi", ok=False, detail=f"amdsmi init failed: {exc}")
    try:
        gpus = [_amdsmi_gpu(lib, i, h) for i, h in enumerate(lib.amdsmi_get_processor_handles())]
    except Exception as exc:  # noqa: BLE001 - a failure here is reported, never raised
        return [], ProbeNote(probe="amdsmi", ok=False, detail=f"amdsmi query failed: {exc}")
    finally:
        _safe(lib.amdsmi_shut_down)
    return gpus, ProbeNote(probe="amdsmi", ok=bool(gpus), detail=f"{len(gpus)} AMD GPU(s)")


def _amdsmi_gpu(lib: Any, index: int, handle: Any) -> GpuInfo:
    asic = _safe(lambda: lib.amdsmi_get_gpu_asic_info(handle)) or {}
    vram = _safe(lambda: lib.amdsmi_get_gpu_vram_info(handle)) or {}
    usage = _safe(lambda: lib.amdsmi_get_gpu_vram_usage(handle)) or {}
    driver = _safe(lambda: lib.amdsmi_get_gpu_driver_info(handle)) or {}
    gfx = _gfx(asic.get("target_graphics_version"))
    total = _int(vram.get("vram_size")) or _int(usage.get("vram_total"))
    used = _int(usage.get("vram_used"))
    return GpuInfo(
        index=index,
        vendor="amd",
        name=_name(asic.get("market_name"), gfx),
        memory_total_mib=total,
        memory_free_mib=total - used if total is not None and used is not None else None,
        uuid=_safe(lambda: lib.amdsmi_get_gpu_device_uuid(handle)),
        pci_bus_id=_safe(lambda: lib.amdsmi_get_gpu_device_bdf(handle)),
        gfx_target=gfx,
        driver_version=driver.get("driver_version") or None,
        source="amdsmi",
    )


def _int(value: Any) -> int | None:
    """Numbers as amd-smi prints them: 196592, "196592 MB", {"value": 196592, "unit": "MB"}."""
    if isinstance(value, dict):
        value = value.get("value")
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, str):
        match = re.match(r"\s*(\d+)", value)
        return int(match.group(1)) if match else None
    return None


def _or(value: int | None, default: int) -> int:
    return default if value is None else value


def _gfx(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    match = re.search(r"gfx[0-9a-f]+", value.lower())
    return match.group(0) if match else None


def _json_payload(text: str) -> Any:
    """The JSON document in a tool's stdout, skipping warning lines printed before it
    (amd-smi and rocm-smi print e.g. "WARNING: User is missing the following required groups")."""
    starts = [i for i in (text.find("["), text.find("{")) if i >= 0]
    if not starts:
        raise ValueError("no JSON in the output")
    value, _ = json.JSONDecoder().raw_decode(text[min(starts) :])
    return value


def parse_amd_smi_static(text: str) -> list[GpuInfo]:
    """`amd-smi static --json`: a bare list (ROCm 6.0-6.3) or {"gpu_data": [...]} (later releases)."""
    data = _json_payload(text)
    if isinstance(data, dict):
        data = data.get("gpu_data", [])
    if not isinstance(data, list):
        raise ValueError("expected a list of GPUs")
    gpus = []
    for pos, entry in enumerate(d for d in data if isinstance(d, dict)):
        asic = entry.get("asic") or {}
        vram = entry.get("vram") or {}
        board = entry.get("board") or {}
        gfx = _gfx(asic.get("target_graphics_version"))
        gpus.append(
            GpuInfo(
                index=_or(_int(entry.get("gpu")), pos),
                vendor="amd",
                name=_name(asic.get("market_name") or board.get("product_name"), gfx),
                memory_total_mib=_int(vram.get("size")),
                pci_bus_id=(entry.get("bus") or {}).get("bdf"),
                gfx_target=gfx,
                driver_version=(entry.get("driver") or {}).get("version"),
                source="amd-smi",
            )
        )
    return gpus


def parse_rocm_smi(text: str) -> list[GpuInfo]:
    """`rocm-smi --showproductname --showmeminfo vram --json`: {"card0": {...}, ..., "system": {...}}."""
    data = _json_payload(text)
    if not isinstance(data, dict):
        raise ValueError("expected an object keyed by card")
    gpus = []
    for key in sorted((k for k in data if re.fullmatch(r"card\d+", k)), key=lambda k: int(k[4:])):
        card = data[key]
        gfx = _gfx(card.get("GFX Version"))
        total_b = _int(card.get("VRAM Total Memory (B)"))
        used_b = _int(card.get("VRAM Total Used Memory (B)"))
        gpus.append(
            GpuInfo(
                index=int(key[4:]),
                vendor="amd",
                name=_name(card.get("Card Series") or card.get("Card series"), gfx),
                memory_total_mib=total_b // 2**20 if total_b is not None else None,
                memory_free_mib=(total_b - used_b) // 2**20 if total_b is not None and used_b is not None else None,
                uuid=card.get("Unique ID") or None,
                gfx_target=gfx,
                source="rocm-smi",
            )
        )
    return gpus


def _probe_json_tool(name: str, cmd: list[str], parse: Callable[[str], list[GpuInfo]], runner: Runner, timeout_s: float) -> tuple[list[GpuInfo], ProbeNote]:
    result = runner(cmd, timeout_s)
    if not result.ok:
        return [], ProbeNote(probe=name, ok=False, detail=result.reason())
    try:
        gpus = parse(result.stdout)
    except (ValueError, TypeError, AttributeError) as exc:  # json.JSONDecodeError is a ValueError
        return [], ProbeNote(probe=name, ok=False, detail=f"unreadable output: {exc}")
    return gpus, ProbeNote(probe=name, ok=bool(gpus), detail=f"{len(gpus)} AMD GPU(s)" if gpus else "no GPUs listed")


def probe_amd_smi(runner: Runner = run_command, timeout_s: float = 2.0) -> tuple[list[GpuInfo], ProbeNote]:
    return _probe_json_tool("amd-smi", ["amd-smi", "static", "--json"], parse_amd_smi_static, runner, timeout_s)


def probe_rocm_smi(runner: Runner = run_command, timeout_s: float = 2.0) -> tuple[list[GpuInfo], ProbeNote]:
    cmd = ["rocm-smi", "--showproductname", "--showmeminfo", "vram", "--json"]
    return _probe_json_tool("rocm-smi", cmd, parse_rocm_smi, runner, timeout_s)


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None


def gfx_from_target_version(value: int) -> str | None:
    """KFD's gfx_target_version 90402 -> "gfx942" (major*10000 + minor*100 + stepping, minor/step in hex)."""
    if value <= 0:
        return None
    major, minor, step = value // 10000, (value // 100) % 100, value % 100
    return f"gfx{major}{minor:x}{step:x}"


def _kfd_targets(sys_root: Path) -> dict[int, str]:
    """drm render minor -> gfx target, from /sys/class/kfd/kfd/topology/nodes/*/properties."""
    targets: dict[int, str] = {}
    for props in sorted((sys_root / "class/kfd/kfd/topology/nodes").glob("*/properties")):
        fields = dict(line.split(None, 1) for line in (_read(props) or "").splitlines() if len(line.split(None, 1)) == 2)
        try:
            gfx = gfx_from_target_version(int(fields.get("gfx_target_version", "0")))
            minor = int(fields.get("drm_render_minor", "-1"))
        except ValueError:
            continue
        if gfx and minor >= 0:
            targets[minor] = gfx
    return targets


def probe_sysfs(sys_root: Path = Path("/sys")) -> tuple[list[GpuInfo], ProbeNote]:
    """Last resort, readable without ROCm: vendor 0x1002 cards under /sys/class/drm."""
    drm = sys_root / "class/drm"
    if not drm.is_dir():
        return [], ProbeNote(probe="sysfs", ok=False, detail=f"{drm} not present")
    targets = _kfd_targets(sys_root)
    gpus: list[GpuInfo] = []
    cards = sorted((p for p in drm.glob("card*") if re.fullmatch(r"card\d+", p.name)), key=lambda p: int(p.name[4:]))
    for card in cards:
        device = card / "device"
        if _read(device / "vendor") != AMD_VENDOR_ID:
            continue
        total = _int(_read(device / "mem_info_vram_total"))
        used = _int(_read(device / "mem_info_vram_used"))
        render = next((int(p.name[7:]) for p in (device / "drm").glob("renderD*") if p.name[7:].isdigit()), None)
        gfx = targets.get(render) if render is not None else None
        gpus.append(
            GpuInfo(
                index=len(gpus),
                vendor="amd",
                name=_name(_read(device / "product_name"), gfx),
                memory_total_mib=total // 2**20 if total is not None else None,
                memory_free_mib=(total - used) // 2**20 if total is not None and used is not None else None,
                uuid=_read(device / "unique_id") or None,
                pci_bus_id=_pci_from_uevent(_read(device / "uevent")),
                gfx_target=gfx,
                source="sysfs",
            )
        )
    detail = f"{len(gpus)} AMD GPU(s)" if gpus else "no AMD cards under /sys/class/drm"
    return gpus, ProbeNote(probe="sysfs", ok=bool(gpus), detail=detail)


def _pci_from_uevent(text: str | None) -> str | None:
    match = re.search(r"^PCI_SLOT_NAME=(\S+)", text or "", re.M)
    return match.group(1) if match else None
