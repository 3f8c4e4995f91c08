import pytest

from specadvisor.errors import InputError
from specadvisor.hardware import hypothetical
from specadvisor.hardware.planning import gpu_spec_readings


@pytest.mark.parametrize(
    "spec, first",
    [("H100x8", ("H100", 8)), ("MI300Xx4", ("MI300X", 4)), ("A100-80GBx2", ("A100-80GB", 2)), ("8xH100", ("H100", 8)), ("H100 x 2", ("H100", 2))],
)
def test_readings(spec, first):
    assert gpu_spec_readings(spec)[0] == first


def test_plain_name_is_read_whole_as_a_last_resort():
    assert gpu_spec_readings("RTX4090")[-1] == ("RTX4090", 1)
    assert gpu_spec_readings("H200") == [("H200", 1)]


@pytest.mark.parametrize(
    "spec, count, vendor, memory_gib, arch",
    [
        ("H100x8", 8, "nvidia", 80, "9.0"),
        ("MI300Xx4", 4, "amd", 192, "gfx942"),
        ("H200", 1, "nvidia", 141, "9.0"),
        ("MI355Xx2", 2, "amd", 288, "gfx950"),
        ("L40S", 1, "nvidia", 48, "8.9"),
        ("A100-80GBx2", 2, "nvidia", 80, "8.0"),
        ("RTX4090", 1, "nvidia", 24, "8.9"),
    ],
)
def test_hypothetical_profiles_from_the_catalog(spec, count, vendor, memory_gib, arch):
    profile = hypothetical(spec)
    assert profile.hypothetical and len(profile.gpus) == count
    gpu = profile.gpus[0]
    assert gpu.vendor == vendor and gpu.source == "catalog"
    assert abs(gpu.memory_total_mib / 1024 - memory_gib) < 2
    assert (gpu.compute_capability or gpu.gfx_target) == arch
    assert profile.cpu.cores_logical  # the planning host's CPU is still reported


@pytest.mark.parametrize("spec, words", [("Foo", ["unknown GPU", "h100"]), ("H100x0", ["out of range"]), ("H100x65", ["out of range"]), ("  ", ["empty"])])
def test_bad_specs_name_the_problem(spec, words):
    with pytest.raises(InputError) as err:
        hypothetical(spec)
    assert all(w in str(err.value) for w in words)
    assert "\n" not in str(err.value)
