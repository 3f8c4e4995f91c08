"""The machine's models are plain dataclasses (no pydantic on detect's path); what comes from outside
is still validated through the domain model that embeds them, as strictly as before."""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError, replace

import pytest
from pydantic import ValidationError

from specadvisor.domain import CpuInfo, EngineInfo, GpuInfo, HardwareProfile, ProbeNote, Session
from specadvisor.hardware import detect

SESSION = {"id": "0f0f0f0f-0000-4000-8000-000000000001", "name": "x", "model": "m"}


def _validated(hardware: dict) -> Session:
    return Session.model_validate_json(json.dumps({**SESSION, "hardware": hardware}), strict=True)  # as a bundle is read


def test_this_machine_s_profile_round_trips_through_a_session():
    profile = detect(timeout_s=1.0)
    again = Session.model_validate_json(Session(**SESSION, hardware=profile).model_dump_json()).hardware
    assert again == profile and isinstance(again, HardwareProfile) and isinstance(again.cpu, CpuInfo)


@pytest.mark.parametrize(
    "hardware, where",
    [
        ({"gpus": [{"index": 0, "vendor": "nvidia", "name": "H100", "bogus": 1}]}, "hardware.gpus.0.bogus"),  # unknown key
        ({"cpu": {"model": "c", "cores_logical": "2"}}, "hardware.cpu.cores_logical"),  # a number as text
        ({"gpus": [{"index": 0, "vendor": "intel", "name": "X"}]}, "hardware.gpus.0.vendor"),  # not a known vendor
        ({"engine": {"platform": "tpu"}}, "hardware.engine.platform"),
        ({"notes": [{"probe": "nvml"}]}, "hardware.notes.0.ok"),  # a required field missing
        ({"colour": "red"}, "hardware.colour"),
    ],
)
def test_a_bundle_s_hardware_is_validated_field_by_field(hardware, where):
    with pytest.raises(ValidationError) as caught:
        _validated(hardware)
    assert ".".join(str(p) for p in caught.value.errors()[0]["loc"]) == where


def test_the_models_are_frozen_and_change_by_replace():
    gpu = GpuInfo(index=0, vendor="nvidia", name="H100")
    with pytest.raises(FrozenInstanceError):
        gpu.index = 1  # type: ignore[misc]
    profile = HardwareProfile(gpus=[gpu], engine=EngineInfo(found=True), notes=[ProbeNote(probe="nvml", ok=True)])
    assert replace(profile, hypothetical=True).gpus == profile.gpus and not profile.hypothetical
