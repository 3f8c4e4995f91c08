"""GPU telemetry and the free-memory check against a fake NVML module (the process boundary)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hw_fakes import FakeGpu, FakeNvml
from specadvisor.machine import GpuReading, GpuState
from specadvisor.telemetry.gpus import NvmlReader, decode_throttle, open_reader, process_name, visible_to_physical
from specadvisor.telemetry.memory import is_ours, need_per_gpu, wait_for_memory
from specadvisor.telemetry.sampler import ArmSampler, ArmTelemetry, hazards, power_integral

ROOT = Path(__file__).resolve().parents[2]


def reader(*gpus: FakeGpu) -> NvmlReader:
    return NvmlReader(FakeNvml(list(gpus) or [FakeGpu(0)]))


def test_no_library_or_no_driver_means_no_reader():
    def missing():
        raise ImportError("No module named 'pynvml'")

    assert open_reader(nvml_loader=missing, amdsmi_loader=missing) is None
    assert open_reader(nvml_loader=lambda: FakeNvml(fail_init=True), amdsmi_loader=missing) is None
    assert open_reader(nvml_loader=lambda: FakeNvml([]), amdsmi_loader=missing) is None
    assert isinstance(open_reader(nvml_loader=lambda: FakeNvml(), amdsmi_loader=missing), NvmlReader)


def test_reading_and_state_convert_nvml_units():
    r = reader(FakeGpu(0, util=97, power_mw=612_500, sm_clock=1980, temperature=61, used_mib=40960.0, throttle=0x4))
    got = r.reading(0, 1.5)
    assert got == GpuReading(t=1.5, gpu=0, memory_used_mib=40960.0, utilization_pct=97.0, power_w=612.5, sm_clock_mhz=1980.0,
                          temperature_c=61.0, throttle=["sw_power_cap"])  # fmt: skip
    state = r.state(0)
    assert (state.power_limit_w, state.sm_clock_max_mhz, state.memory_clock_mhz, state.memory_total_mib) == (700.0, 1980.0, 3201.0, 143771.0)
    assert state.uuid.startswith("GPU-abb4e75c") and state.name == "NVIDIA H200"
    assert r.energy_j(0) == 1000.0


def test_an_unsupported_field_reads_as_none_not_an_error():
    r = reader(FakeGpu(0, unsupported={"power", "energy", "throttle"}))
    got = r.reading(0, 0.0)
    assert got.power_w is None and got.throttle == [] and got.sm_clock_mhz == 345.0
    assert r.energy_j(0) is None and r.state(0).power_w is None


def test_idle_and_settings_are_not_throttling():
    assert decode_throttle(0x1 | 0x2 | 0x100) == []
    assert decode_throttle(0x4 | 0x40) == ["sw_power_cap", "hw_thermal_slowdown"]
    assert decode_throttle(None) == []


def test_cuda_visible_devices_maps_to_physical_indices():
    r = reader(FakeGpu(0), FakeGpu(1), FakeGpu(2), FakeGpu(3))
    assert visible_to_physical(None, r) == [0, 1, 2, 3]
    assert visible_to_physical("2,0", r) == [2, 0]
    assert visible_to_physical("GPU-abb4e75c-4558-1ee4-76b0-e3ef47f51813, 1", r) == [3, 1]
    assert visible_to_physical("1,7,2", r) == [1]  # stops at the first entry naming no device, like CUDA
    assert visible_to_physical("", r) == []


def test_power_integral_is_a_trapezoid_per_gpu_summed():
    samples = [GpuReading(t=0, gpu=0, power_w=100), GpuReading(t=1, gpu=0, power_w=300), GpuReading(t=2, gpu=0, power_w=300),
               GpuReading(t=0, gpu=1, power_w=50), GpuReading(t=2, gpu=1, power_w=50), GpuReading(t=1, gpu=1, power_w=None)]  # fmt: skip
    assert power_integral(samples) == 200 + 300 + 100
    assert power_integral([GpuReading(t=0, gpu=0)]) is None


def test_energy_per_token_uses_the_measured_duration():
    record = ArmTelemetry(source="nvml", gpus=[0], interval_s=1, energy_j=5000.0, span_s=10.0)
    assert record.mean_power_w == 500.0
    assert record.energy_per_token_j(output_tokens=1000, duration_s=8.0) == 4.0
    assert record.energy_per_token_j(output_tokens=1000, duration_s=None) == 5.0
    assert record.energy_per_token_j(output_tokens=0, duration_s=8.0) is None


def test_sampler_reads_at_its_interval_and_integrates_power():
    gpu = FakeGpu(0, util=95, power_mw=400_000, sm_clock=1980, throttle=0)
    nvml = FakeNvml([gpu])
    sampler = ArmSampler(NvmlReader(nvml), [0], interval_s=0.02).start()
    time.sleep(0.25)
    gpu.energy_mj += 100_000  # the driver counted 100 J meanwhile
    record = sampler.stop()
    assert len(record.samples) >= 5 and all(s.gpu == 0 and s.power_w == 400.0 for s in record.samples)
    times = [s.t for s in record.samples]
    assert times == sorted(times) and times[0] == 0.0
    assert abs(record.energy_j - 400.0 * (times[-1] - times[0])) < 1e-6
    assert record.energy_counter_j == 100.0
    assert record.start[0].sm_clock_mhz == 1980.0 and record.end and record.warnings == []
    calls = nvml.calls
    time.sleep(0.1)
    assert nvml.calls == calls  # the thread has stopped


def test_falling_clocks_and_throttle_reasons_are_flagged():
    busy = [GpuReading(t=i, gpu=0, utilization_pct=99, sm_clock_mhz=c) for i, c in enumerate([1980, 1980, 1965, 1700, 1500, 1490])]
    idle = [GpuReading(t=6, gpu=0, utilization_pct=0, sm_clock_mhz=345)]  # idle clocks are not a fall
    throttled = [GpuReading(t=7, gpu=0, utilization_pct=99, sm_clock_mhz=1490, throttle=["sw_power_cap"])]
    record = ArmTelemetry(source="nvml", gpus=[0], interval_s=1, samples=busy + idle + throttled,
                          start=[GpuState(gpu=0, power_limit_w=700)], end=[GpuState(gpu=0, power_limit_w=500, throttle=["hw_thermal_slowdown"])])  # fmt: skip
    notes = hazards(record)
    assert any("SM clock fell from 1980 to 1490 MHz" in n for n in notes), notes
    assert any("sw_power_cap (1 of 8 readings)" in n and "hw_thermal_slowdown (at the end)" in n for n in notes), notes
    assert any("power cap lowered from 700 to 500 W" in n for n in notes), notes
    steady = ArmTelemetry(source="nvml", gpus=[0], interval_s=1, samples=busy[:3] + idle)
    assert hazards(steady) == []


class Clock:
    """A fake clock whose sleep advances time and runs a script of state changes."""

    def __init__(self, script=None):
        self.now = 0.0
        self.script = script or {}

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds
        for at, change in list(self.script.items()):
            if self.now >= at:
                change()
                del self.script[at]


def test_memory_check_passes_at_once_when_there_is_room():
    r = reader(FakeGpu(0, used_mib=615.0))
    need = need_per_gpu(r, [0], 0.9)
    assert round(need[0]) == round(0.9 * 143771)
    check = asyncio.run(wait_for_memory(r, need, clock=Clock(), sleep=Clock().sleep))
    assert check.ok and check.waited_s == 0 and check.polls == 1


def test_memory_of_our_stopped_server_is_waited_for_with_progress():
    gpu = FakeGpu(0, used_mib=120_000.0, processes=[(4242, 120_000 * 2**20)])

    def released():
        gpu.used_mib, gpu.processes = 615.0, []

    clock = Clock({5.0: released})
    seen = []
    check = asyncio.run(wait_for_memory(reader(gpu), {0: 100_000.0}, ours=lambda pid: pid == 4242, on_wait=seen.append,
                                        clock=clock, sleep=clock.sleep))  # fmt: skip
    assert check.ok and check.waited_s == 5.0
    assert len(seen) == 5 and seen[0].holders[0].pid == 4242 and not seen[0].ok


def test_a_stranger_holding_memory_is_named_after_the_grace():
    gpu = FakeGpu(0, used_mib=120_000.0, processes=[(os.getpid(), 20 * 2**30)])
    clock = Clock()
    check = asyncio.run(wait_for_memory(reader(gpu), {0: 100_000.0}, foreign_grace_s=3, clock=clock, sleep=clock.sleep))
    assert not check.ok and check.reason == "held" and check.waited_s == 3
    message = check.message()
    assert f"pid {os.getpid()}" in message and "20480 MiB on GPU 0" in message and "python" in message.lower()
    assert "GPU 0: 23.2 GiB free, 97.7 GiB needed" in message


def test_memory_never_released_times_out_and_says_so():
    gpu = FakeGpu(0, used_mib=120_000.0)
    clock = Clock()
    check = asyncio.run(wait_for_memory(reader(gpu), {0: 100_000.0}, timeout_s=8, clock=clock, sleep=clock.sleep))
    assert not check.ok and check.reason == "timeout" and check.waited_s == 8
    assert "not released within 8 s" in check.message() and "no process is listed" in check.message()


def test_our_processes_are_told_from_strangers():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"], start_new_session=True)
    try:
        assert is_ours(child.pid, set())  # a child of this process
        assert is_ours(child.pid, {child.pid})  # the process group of a server we launched
        assert not is_ours(1, set())  # init is nobody's server
    finally:
        child.kill()
        child.wait()
    assert is_ours(child.pid, set())  # gone: its memory is on its way back
    assert process_name(os.getpid()).startswith("python")


def test_telemetry_needs_none_of_the_app_dependencies():
    """The GPU box has torch and nvidia-ml-py only: the telemetry modules and the check script must
    import without pydantic, httpx, psutil, platformdirs, rich, sqlite-utils or prometheus-client."""
    blocker = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in {'pydantic', 'httpx', 'psutil', 'platformdirs', 'rich', 'sqlite_utils', 'prometheus_client', 'pynvml', 'torch'}:\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import specadvisor.telemetry.gpus, specadvisor.telemetry.sampler, specadvisor.telemetry.memory\n"
        "import importlib.util\n"
        "spec = importlib.util.spec_from_file_location('check', 'benchmarks/gpu_telemetry_check.py')\n"
        "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", blocker], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_gpu_check_script_runs_end_to_end_against_fakes(monkeypatch, capsys, tmp_path):
    """benchmarks/gpu_telemetry_check.py with NVML faked in this process and torch faked in the
    stand-in's: the stand-in's files drive what the fake GPU reports, so every phase is exercised
    before the script spends device time."""
    import importlib.util
    import json

    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "benchmarks" / "gpu_telemetry_check.py")
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)

    class StandInGpu(FakeGpu):
        """Memory and load follow the stand-in's progress files."""

        def _files(self):
            found = list(tmp_path.glob("gpu-telemetry-*/ready"))
            return found[0].parent if found else None

        def __getattribute__(self, name):
            if name in ("used_mib", "processes", "util", "power_mw"):
                folder = object.__getattribute__(self, "_files")()
                holding = folder is not None and not (folder / "freed").exists()
                busy = holding and not (folder / "busy").exists()
                pid = json.loads((folder / "ready").read_text())["pid"] if holding else None
                return {"used_mib": 615.0 + (20 * 1024 + 500 if holding else 0), "processes": [(pid, 20 * 2**30)] if holding else [],
                        "util": 99 if busy else 0, "power_mw": 650_000 if busy else 80_000}[name]  # fmt: skip
            return object.__getattribute__(self, name)

    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(check, "open_reader", lambda: NvmlReader(FakeNvml([StandInGpu(0)])))
    monkeypatch.setenv("PYTHONPATH", f"{ROOT / 'tests' / 'fixtures' / 'fake_torch'}{os.pathsep}{ROOT}")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    code = check.main(["--gib", "20", "--busy-s", "1.5", "--grace-s", "0.5", "--timeout-s", "1", "--release-after-s", "0.5", "--interval-s", "0.2"])
    document = json.loads(capsys.readouterr().out)
    assert code == 0 and document["ok"], document["expectations"]
    checks = document["memory_checks"]
    assert checks["stranger"]["reason"] == "held" and f"pid {document['stand_in']['pid']} " in checks["stranger"]["message"]
    assert checks["timeout"]["reason"] == "timeout" and checks["release"]["ok"] and checks["release"]["progress_events"] >= 1
    assert document["energy"]["integral_j"] > 0 and document["stand_in"]["iterations"] > 0
    assert {"t", "gpu", "memory_used_mib", "utilization_pct", "power_w", "sm_clock_mhz", "temperature_c"} <= set(document["samples"][0])
    assert not list(tmp_path.glob("gpu-telemetry-*"))  # the script cleans up after itself


def test_one_definition_of_a_gpu_reading_from_the_sampler_to_a_bundle(tmp_path):
    """The sampler's readings (no pydantic on a bare GPU box) are the stored ones, not twins that can
    drift apart: a reading round-trips through the store and a bundle, and a bundle's reading with an
    unknown key or a wrong type is refused as every other bundle field is."""
    import json

    import pydantic

    from specadvisor import domain, telemetry
    from specadvisor.domain import ArmResult, GpuTelemetry
    from specadvisor.store.rows import gpu_sample_rows, result_from_row, result_row

    assert domain.GpuReading is telemetry.gpus.GpuReading and domain.GpuState is telemetry.gpus.GpuState
    reading = GpuReading(t=1.0, gpu=0, power_w=612.5, throttle=["sw_power_cap"])
    state = GpuState(gpu=0, sm_clock_mhz=1980.0, power_limit_w=700.0)
    result = ArmResult(arm_id="a", status="ok", telemetry=GpuTelemetry(source="nvml", gpus=[0], start=[state], end=[state], samples=[reading]))
    back = result_from_row(result_row("s", result)["result_json"], [row["sample_json"] for row in gpu_sample_rows("s", result)])
    assert back.telemetry is not None and back.telemetry.samples == [reading] and back.telemetry.start == [state]
    dumped = json.loads(result.model_dump_json())
    assert ArmResult.model_validate(dumped) == result
    dumped["telemetry"]["samples"][0]["volts"] = 1.2
    with pytest.raises(pydantic.ValidationError):
        ArmResult.model_validate(dumped)
    dumped["telemetry"]["samples"][0].pop("volts")
    dumped["telemetry"]["start"][0]["sm_clock_mhz"] = "fast"
    with pytest.raises(pydantic.ValidationError):
        ArmResult.model_validate(dumped)
