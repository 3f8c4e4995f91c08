import pytest

from hw_fakes import ScriptedRunner, fixture, ok
from specadvisor.hardware.amd import (
    gfx_from_target_version,
    parse_amd_smi_static,
    parse_rocm_smi,
    probe_amd_smi,
    probe_amdsmi,
    probe_rocm_smi,
    probe_sysfs,
)
from specadvisor.hardware.commands import CommandResult


def test_amd_smi_bare_list_shape():
    gpus = parse_amd_smi_static(fixture("amd-smi-static-list.json"))
    assert [g.index for g in gpus] == [0, 1]
    assert gpus[0].name == "AMD Instinct MI300X"
    assert gpus[0].gfx_target == "gfx942"
    assert gpus[0].memory_total_mib == 196592
    assert gpus[0].pci_bus_id == "0000:05:00.0" and gpus[0].driver_version == "6.7.0"


def test_amd_smi_gpu_data_shape_and_name_from_gfx_when_market_name_is_na():
    gpus = parse_amd_smi_static(fixture("amd-smi-static-gpu-data.json"))
    assert [g.gfx_target for g in gpus] == ["gfx950", "gfx950"]
    assert gpus[0].name == "AMD Instinct MI355X" and gpus[0].memory_total_mib == 294896
    assert gpus[1].name == "AMD Instinct MI350X/MI355X"


def test_amd_smi_string_sizes_from_older_releases():
    text = '[{"gpu": 0, "asic": {"market_name": "AMD Instinct MI300X", "target_graphics_version": "gfx942"}, "vram": {"type": "HBM", "size": "196592 MB"}}]'
    assert parse_amd_smi_static(text)[0].memory_total_mib == 196592


def test_rocm_smi_json():
    gpus = parse_rocm_smi(fixture("rocm-smi-mi300x.json"))
    assert [g.index for g in gpus] == [0, 1]
    assert gpus[0].name == "AMD Instinct MI300X OAM" and gpus[0].gfx_target == "gfx942"
    assert gpus[0].memory_total_mib == 196592
    assert gpus[0].memory_free_mib == (206141652992 - 297164800) // 2**20


@pytest.mark.parametrize(
    "probe, tool, output, expected",
    [
        (probe_amd_smi, "amd-smi", "not json {", "unreadable output"),
        (probe_amd_smi, "amd-smi", '{"something_else": 1}', "no GPUs listed"),
        (probe_rocm_smi, "rocm-smi", "[1, 2]", "unreadable output"),
        (probe_rocm_smi, "rocm-smi", '{"system": {}}', "no GPUs listed"),
    ],
)
def test_garbage_output_degrades_to_a_note(probe, tool, output, expected):
    gpus, note = probe(ScriptedRunner({tool: ok(output)}))
    assert gpus == [] and not note.ok and expected in note.detail


def test_tools_failing_are_notes():
    denied = ScriptedRunner({"amd-smi": CommandResult(None, error="amd-smi: permission denied")})
    assert probe_amd_smi(denied)[1].detail == "amd-smi: permission denied"
    crashed = ScriptedRunner({"rocm-smi": CommandResult(1, "", "ERROR:root:Driver not initialized (amdgpu not found in modules)")})
    assert "Driver not initialized" in probe_rocm_smi(crashed)[1].detail
    gpus, note = probe_amd_smi(ScriptedRunner({"amd-smi": ok(fixture("amd-smi-static-list.json"))}))
    assert len(gpus) == 2 and note.ok


def test_amdsmi_import_raising_keyerror_is_guarded():
    def broken_import():
        raise KeyError("ROCM_PATH")  # what `import amdsmi` does without libamd_smi.so

    gpus, note = probe_amdsmi(broken_import)
    assert gpus == [] and not note.ok and "KeyError" in note.detail


class FakeAmdSmi:
    def __init__(self):
        self.closed = False

    def amdsmi_init(self):
        pass

    def amdsmi_shut_down(self):
        self.closed = True

    def amdsmi_get_processor_handles(self):
        return ["h0"]

    def amdsmi_get_gpu_asic_info(self, h):
        return {"market_name": "AMD Instinct MI325X", "target_graphics_version": "gfx942", "device_id": "0x74a5"}

    def amdsmi_get_gpu_vram_info(self, h):
        return {"vram_type": "HBM", "vram_size": 262128}

    def amdsmi_get_gpu_vram_usage(self, h):
        return {"vram_total": 262128, "vram_used": 128}

    def amdsmi_get_gpu_driver_info(self, h):
        return {"driver_name": "amdgpu", "driver_version": "6.10.5"}

    def amdsmi_get_gpu_device_uuid(self, h):
        raise RuntimeError("AMDSMI_STATUS_NOT_SUPPORTED")

    def amdsmi_get_gpu_device_bdf(self, h):
        return "0000:0c:00.0"


def test_amdsmi_library_reading():
    lib = FakeAmdSmi()
    gpus, note = probe_amdsmi(lambda: lib)
    assert note.ok and lib.closed
    g = gpus[0]
    assert (g.name, g.gfx_target, g.memory_total_mib, g.memory_free_mib) == ("AMD Instinct MI325X", "gfx942", 262128, 262000)
    assert g.uuid is None and g.pci_bus_id == "0000:0c:00.0" and g.driver_version == "6.10.5"


@pytest.mark.parametrize("value, gfx", [(90402, "gfx942"), (90500, "gfx950"), (90010, "gfx90a"), (110000, "gfx1100"), (0, None)])
def test_kfd_target_versions(value, gfx):
    assert gfx_from_target_version(value) == gfx


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_sysfs_tree_finds_amd_cards_and_their_gfx_target(tmp_path):
    sys_root = tmp_path / "sys"
    amd = sys_root / "class/drm/card1/device"
    _write(amd / "vendor", "0x1002\n")
    _write(amd / "mem_info_vram_total", str(196592 * 2**20) + "\n")
    _write(amd / "mem_info_vram_used", str(592 * 2**20) + "\n")
    _write(amd / "uevent", "DRIVER=amdgpu\nPCI_CLASS=12000\nPCI_SLOT_NAME=0000:05:00.0\n")
    (amd / "drm/renderD128").mkdir(parents=True)
    _write(sys_root / "class/drm/card0/device/vendor", "0x1a03\n")  # the BMC's display adapter
    _write(sys_root / "class/drm/card1-DP-1/status", "disconnected\n")  # a connector, not a card
    _write(sys_root / "class/kfd/kfd/topology/nodes/0/properties", "cpu_cores_count 96\ngfx_target_version 0\ndrm_render_minor 0\n")
    _write(sys_root / "class/kfd/kfd/topology/nodes/1/properties", "simd_count 1216\ngfx_target_version 90402\ndrm_render_minor 128\n")
    gpus, note = probe_sysfs(sys_root)
    assert note.ok and len(gpus) == 1
    g = gpus[0]
    assert g.gfx_target == "gfx942" and g.name == "AMD Instinct MI300X/MI325X"
    assert g.memory_total_mib == 196592 and g.memory_free_mib == 196000
    assert g.pci_bus_id == "0000:05:00.0" and g.source == "sysfs"


def test_sysfs_without_drm_or_amd_cards(tmp_path):
    gpus, note = probe_sysfs(tmp_path / "nothing")
    assert gpus == [] and not note.ok and "not present" in note.detail
    _write(tmp_path / "sys/class/drm/card0/device/vendor", "0x10de\n")
    gpus, note = probe_sysfs(tmp_path / "sys")
    assert gpus == [] and note.detail == "no AMD cards under /sys/class/drm"


def test_warning_lines_before_the_json_are_skipped():
    warned = "WARNING: User is missing the following required groups: render, video. Please add user to these groups.\n"
    gpus, note = probe_amd_smi(ScriptedRunner({"amd-smi": ok(warned + fixture("amd-smi-static-gpu-data.json"))}))
    assert note.ok and len(gpus) == 2
    assert (
        len(parse_rocm_smi("WARNING: AMD GPU device(s) is/are in a low-power state. Check power control/runtime_status\n\n" + fixture("rocm-smi-mi300x.json")))
        == 2
    )
    assert probe_rocm_smi(ScriptedRunner({"rocm-smi": ok("WARNING: no JSON at all\n")}))[1].detail.startswith("unreadable output")
