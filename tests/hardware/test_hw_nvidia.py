from types import SimpleNamespace

from hw_fakes import ScriptedRunner, fixture, ok
from specadvisor.hardware.commands import CommandResult
from specadvisor.hardware.nvidia import parse_nvidia_smi_csv, probe_nvidia_smi, probe_nvml


def test_parses_eight_h100_rows():
    gpus = parse_nvidia_smi_csv(fixture("nvidia-smi-h100x8.csv"))
    assert [g.index for g in gpus] == list(range(8))
    first = gpus[0]
    assert first.name == "NVIDIA H100 80GB HBM3"
    assert first.memory_total_mib == 81559 and first.memory_free_mib == 81008
    assert first.compute_capability == "9.0"
    assert first.driver_version == "550.54.15"
    assert first.pci_bus_id == "00000000:18:00.0"
    assert first.uuid == "GPU-5a8e6f2c-1b3d-6e4f-9a71-0c2d4e6f8a10"
    assert {g.source for g in gpus} == {"nvidia-smi"}


def test_header_units_and_na_values_are_tolerated():
    gpus = parse_nvidia_smi_csv(fixture("nvidia-smi-a100x2-header-units.csv"))
    assert len(gpus) == 2
    assert gpus[0].memory_total_mib == 81920 and gpus[0].memory_free_mib == 79342
    assert gpus[1].memory_free_mib is None
    assert gpus[1].compute_capability == "8.0"


def test_probe_uses_the_runner_and_reports_the_count():
    runner = ScriptedRunner({"nvidia-smi": ok(fixture("nvidia-smi-h100x8.csv"))})
    gpus, note = probe_nvidia_smi(runner)
    assert len(gpus) == 8 and note.ok and note.detail == "8 NVIDIA GPU(s)"
    assert runner.calls[0][1].startswith("--query-gpu=index,name,uuid")


def test_old_driver_without_compute_cap_is_retried_without_that_field():
    rejected = CommandResult(2, "", fixture("nvidia-smi-old-driver-stderr.txt"))
    runner = ScriptedRunner({"nvidia-smi": [rejected, ok(fixture("nvidia-smi-rtx4090-no-compute-cap.csv"))]})
    gpus, note = probe_nvidia_smi(runner)
    assert note.ok and len(gpus) == 1
    assert gpus[0].name == "NVIDIA GeForce RTX 4090" and gpus[0].compute_capability is None
    assert gpus[0].memory_total_mib == 24564
    assert "compute_cap" not in runner.calls[1][1]


def test_missing_tool_and_timeout_and_garbage_degrade_to_notes():
    gpus, note = probe_nvidia_smi(ScriptedRunner({}))
    assert gpus == [] and not note.ok and note.detail == "nvidia-smi: not installed"
    timed_out = ScriptedRunner({"nvidia-smi": CommandResult(None, error="nvidia-smi: timed out after 2s")})
    assert probe_nvidia_smi(timed_out)[1].detail == "nvidia-smi: timed out after 2s"
    garbage = ScriptedRunner({"nvidia-smi": ok("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n")})
    gpus, note = probe_nvidia_smi(garbage)
    assert gpus == [] and not note.ok and note.detail == "output had no GPU rows"


class FakeNvml:
    """The subset of pynvml that the probe calls; two H200s, one without PCI info."""

    class NVMLError(Exception):
        pass

    def __init__(self, init_error: Exception | None = None):
        self.init_error = init_error
        self.shut_down = False

    def nvmlInit(self):
        if self.init_error:
            raise self.init_error

    def nvmlShutdown(self):
        self.shut_down = True

    def nvmlSystemGetDriverVersion(self):
        return b"570.86.15"

    def nvmlSystemGetCudaDriverVersion(self):
        return 12080

    def nvmlDeviceGetCount(self):
        return 2

    def nvmlDeviceGetHandleByIndex(self, i):
        return i

    def nvmlDeviceGetName(self, h):
        return "NVIDIA H200"

    def nvmlDeviceGetUUID(self, h):
        return f"GPU-0000000{h}-aaaa-bbbb-cccc-dddddddddddd"

    def nvmlDeviceGetMemoryInfo(self, h):
        return SimpleNamespace(total=143771 * 2**20, free=143000 * 2**20, used=771 * 2**20)

    def nvmlDeviceGetCudaComputeCapability(self, h):
        return (9, 0)

    def nvmlDeviceGetPciInfo(self, h):
        if h == 1:
            raise self.NVMLError("Not Supported")
        return SimpleNamespace(busId=b"00000000:19:00.0")


def test_nvml_reports_every_field_and_survives_one_unsupported_call():
    nvml = FakeNvml()
    gpus, note = probe_nvml(lambda: nvml)
    assert note.ok and len(gpus) == 2 and nvml.shut_down
    g = gpus[0]
    assert (g.name, g.memory_total_mib, g.memory_free_mib) == ("NVIDIA H200", 143771, 143000)
    assert g.compute_capability == "9.0" and g.driver_version == "570.86.15" and g.cuda_driver_version == "12.8"
    assert g.pci_bus_id == "00000000:19:00.0" and g.source == "nvml"
    assert gpus[1].pci_bus_id is None and gpus[1].uuid.startswith("GPU-00000001")


def test_nvml_missing_or_failing_init_is_a_note():
    def missing():
        raise ModuleNotFoundError("No module named 'pynvml'")

    gpus, note = probe_nvml(missing)
    assert gpus == [] and not note.ok and "nvidia-ml-py not usable" in note.detail
    gpus, note = probe_nvml(lambda: FakeNvml(init_error=FakeNvml.NVMLError("Driver Not Loaded")))
    assert gpus == [] and note.detail == "NVML init failed: Driver Not Loaded"
