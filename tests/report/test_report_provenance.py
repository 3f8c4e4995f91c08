"""Reports say where and how a session was measured, and show GPU telemetry with energy per token."""

from __future__ import annotations

import sys
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))
from specadvisor.domain import GpuReading, GpuState, GpuTelemetry, Provenance
from specadvisor.report import html, markdown
from specadvisor.store.compare import compare_sessions
from store_samples import h200_hardware, make_session


def measured_session():
    hw = h200_hardware()
    hw.gpus[0] = replace(hw.gpus[0], driver_version="580.159.04", cuda_driver_version="13.0", uuid="GPU-abb4", pci_bus_id="00000000:00:06.0")
    t = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
    session = make_session(hardware=hw, provenance=Provenance(entry_point="sweep", measured_on="this machine", specadvisor_version="0.1.0",
                                                              rules_sha256="c" * 64, prompt_source="humaneval", prompt_sha256="d" * 64,
                                                              prompt_count=32, started_at=t, finished_at=t))  # fmt: skip
    result = session.results[0]
    result.serve_argv = ["vllm", "serve", "m", "--api-key", "sk-abcdefabcdefabcdef12", "--port", "8000"]
    result.telemetry = GpuTelemetry(
        source="nvml", gpus=[0], start=[GpuState(gpu=0, sm_clock_mhz=1980, temperature_c=40, power_limit_w=700)],
        end=[GpuState(gpu=0, sm_clock_mhz=1755, temperature_c=66, power_limit_w=700)],
        samples=[GpuReading(t=i, gpu=0, power_w=300 + 10 * i, sm_clock_mhz=1980 - 20 * i, memory_used_mib=40000 + i) for i in range(10)],
        energy_j=3150.0, mean_power_w=350.0, energy_per_output_token_j=0.42,
    )  # fmt: skip
    return session


def test_markdown_report_has_provenance_argv_and_telemetry():
    text = markdown(measured_session())
    assert "## Where and how it was measured" in text
    for fact in ("580.159.04", "CUDA 13.0", "UUID GPU-abb4", "PCI 00000000:00:06.0", "AMD EPYC 9654", "96 physical / 192 logical cores",
                 "1511.2 GiB", "Linux 6.8", "vLLM 0.32.0", "platform cuda", "32 prompts, content sha256 dddddddddddddddd (of the sampled prompts as sent", "2026-12-01 06:00:00 UTC"):  # fmt: skip
        assert fact in text, fact
    assert "## GPU telemetry" in text and "| 350 | 3150 | 0.42 | 1980→1755 | 40→66 | 700 | 40009 |" in text
    assert "\nvllm serve m --api-key '<redacted>' --port 8000\n" in text  # quoted: bare `<` is a redirection and "sk-abc" not in text


def test_html_report_plots_power_and_clock():
    page = html(measured_session())
    assert "GPU power and SM clock" in page and page.count("<polyline") >= 2
    assert "Where and how it was measured" in page


def test_unrecorded_facts_read_unknown_in_the_report():
    from specadvisor.domain import HardwareProfile
    from specadvisor.store.upgrade import upgrade_session

    text = markdown(upgrade_session(make_session(hardware=HardwareProfile())))
    assert "- **OS**: unknown" in text and "- **GPU**: unknown" in text and "- **entry point**: unknown" in text


def test_compare_flags_driver_cpu_and_prompt_differences():
    a = measured_session()
    b = measured_session().model_copy(update={"id": "0f0f0f0f-0000-4000-8000-000000000001"}, deep=True)
    b.hardware.gpus[0] = replace(b.hardware.gpus[0], driver_version="570.86.15")
    b.hardware = replace(b.hardware, cpu=replace(b.hardware.cpu, model="Intel Xeon Platinum 8480+"))
    b.provenance.prompt_sha256 = "e" * 64
    notes = compare_sessions([a, b]).differences
    assert any(n.startswith("GPU driver differs: 580.159.04") for n in notes), notes
    assert any(n.startswith("CPU differs: AMD EPYC 9654") for n in notes), notes
    assert any(n.startswith("prompt content differs") for n in notes), notes
    c = measured_session().model_copy(update={"id": "0f0f0f0f-0000-4000-8000-000000000002"}, deep=True)
    c.hardware = replace(c.hardware, os="unknown")
    notes = compare_sessions([a, c]).differences
    assert not any(n.startswith("OS differs") for n in notes) and any("not compared: OS" in n for n in notes), notes
