import pytest

from hw_fakes import ScriptedRunner, fixture, ok
from specadvisor.hardware import detect_gpus
from specadvisor.hardware.nvidia import parse_nvidia_smi_csv
from specadvisor.hardware.visible import apply_visible_devices

GPUS = parse_nvidia_smi_csv(fixture("nvidia-smi-h100x8.csv"))


def _physical(gpus):
    return [GPUS.index(next(p for p in GPUS if p.uuid == g.uuid)) for g in gpus]


def test_unset_means_every_gpu():
    gpus, note = apply_visible_devices(GPUS, "CUDA_VISIBLE_DEVICES", None)
    assert gpus == GPUS and note is None


def test_indices_select_and_renumber():
    gpus, note = apply_visible_devices(GPUS, "CUDA_VISIBLE_DEVICES", "3,1")
    assert [g.index for g in gpus] == [0, 1]
    assert _physical(gpus) == [3, 1]
    assert note.ok and "2 of 8 GPUs visible (physical 3, 1)" in note.detail


def test_uuid_entries_full_or_prefix():
    gpus, _ = apply_visible_devices(GPUS, "CUDA_VISIBLE_DEVICES", "GPU-7c1f0e3b-2d4a-8b5c-6e7f-1a2b3c4d5e61,GPU-9e2a")
    assert _physical(gpus) == [1, 2]


@pytest.mark.parametrize("value, expected", [("", []), ("-1", []), ("0,9,1", [0]), ("0,0,2", [0, 2]), ("GPU-nope", [])])
def test_cuda_runtime_semantics(value, expected):
    gpus, note = apply_visible_devices(GPUS, "CUDA_VISIBLE_DEVICES", value)
    assert _physical(gpus) == expected
    if value in ("-1", "0,9,1", "GPU-nope"):
        assert not note.ok and "names no GPU" in note.detail


def test_detect_gpus_applies_cuda_visible_devices_to_nvidia_smi_results(tmp_path):
    runner = ScriptedRunner({"nvidia-smi": ok(fixture("nvidia-smi-h100x8.csv"))})
    gpus, notes = detect_gpus(
        runner=runner,
        env={"CUDA_VISIBLE_DEVICES": "4,5"},
        sys_root=tmp_path,
        nvml_loader=_no_module,
        amdsmi_loader=_no_module,
    )
    assert [g.pci_bus_id for g in gpus] == ["00000000:9A:00.0", "00000000:AB:00.0"]
    assert [n.probe for n in notes] == ["nvml", "nvidia-smi", "amdsmi", "amd-smi", "rocm-smi", "sysfs", "CUDA_VISIBLE_DEVICES"]


def test_detect_gpus_applies_hip_visible_devices_to_amd_results(tmp_path):
    runner = ScriptedRunner({"amd-smi": ok(fixture("amd-smi-static-list.json"))})
    gpus, notes = detect_gpus(runner=runner, env={"HIP_VISIBLE_DEVICES": "1"}, sys_root=tmp_path, nvml_loader=_no_module, amdsmi_loader=_no_module)
    assert [(g.index, g.pci_bus_id) for g in gpus] == [(0, "0000:26:00.0")]
    assert notes[-1].probe == "HIP_VISIBLE_DEVICES"
    assert "rocm-smi" not in [n.probe for n in notes]  # amd-smi answered, later probes skipped


def _no_module():
    raise ModuleNotFoundError("not installed in this test")


def test_a_wedged_nvml_library_cannot_hang_detection(tmp_path):
    import threading
    import time

    release = threading.Event()

    def wedged_loader():
        release.wait(10)  # like nvmlInit stuck on a dying driver
        raise ModuleNotFoundError("late")

    runner = ScriptedRunner({"nvidia-smi": ok(fixture("nvidia-smi-h100x8.csv"))})
    start = time.monotonic()
    gpus, notes = detect_gpus(runner=runner, timeout_s=0.3, env={}, sys_root=tmp_path, nvml_loader=wedged_loader, amdsmi_loader=_no_module)
    release.set()
    assert time.monotonic() - start < 8  # not stuck on the wedged loader's 10 s
    assert notes[0].detail == "nvml: no answer within 0.3s" and len(gpus) == 8  # nvidia-smi took over
