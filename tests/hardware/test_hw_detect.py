from specadvisor.hardware import detect


def test_detect_on_this_machine_always_answers_with_reasons():
    profile = detect()  # its speed is measured by benchmarks/startup.py (detect), not asserted here
    assert profile.cpu.cores_logical and profile.cpu.ram_total_gib > 0
    assert profile.os and profile.python.startswith(("CPython", "PyPy"))
    probes = {n.probe for n in profile.notes}
    assert {"nvml", "amdsmi", "cpu", "vllm"} <= probes
    for note in profile.notes:
        assert note.ok or note.detail  # every miss says why
    if not profile.gpus:
        assert profile.gpu_label == "CPU only"
