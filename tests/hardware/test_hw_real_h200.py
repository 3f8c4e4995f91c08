"""Outputs captured on a real NVIDIA H200 (driver 580.159.04) through the device tool, 2026-11-29."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import TypeAdapter

from specadvisor.domain import HardwareProfile
from specadvisor.hardware.nvidia import parse_nvidia_smi_csv

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "hardware"


def test_parses_real_h200_nvidia_smi_without_header():
    gpus = parse_nvidia_smi_csv((FIXTURES / "nvidia-smi-h200-real-noheader.csv").read_text())
    assert len(gpus) == 1
    gpu = gpus[0]
    assert (gpu.name, gpu.memory_total_mib, gpu.compute_capability) == ("NVIDIA H200", 143771, "9.0")
    assert gpu.uuid == "GPU-abb4e75c-4558-1ee4-76b0-e3ef47f51810"
    assert gpu.driver_version == "580.159.04" and gpu.pci_bus_id == "00000000:00:06.0"


def test_parses_real_h200_nvidia_smi_with_header_and_units():
    gpus = parse_nvidia_smi_csv((FIXTURES / "nvidia-smi-h200-real-header.csv").read_text())
    assert [(g.name, g.memory_total_mib, g.memory_free_mib) for g in gpus] == [("NVIDIA H200", 143771, 143156)]


def test_real_h200_detect_json_is_a_valid_profile():
    """`specadvisor detect --json` as printed on the H200 still validates against today's models."""
    profile = TypeAdapter(HardwareProfile).validate_python(json.loads((FIXTURES / "detect-h200-real.json").read_text()))
    assert profile.gpu_label == "1x NVIDIA H200"
    assert profile.gpus[0].source == "nvml" and profile.gpus[0].cuda_driver_version == "13.0"
