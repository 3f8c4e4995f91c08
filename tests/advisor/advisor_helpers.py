"""Hand-built hardware and model profiles for advisor tests (no probes, no downloads)."""

from __future__ import annotations

from specadvisor.domain import EngineInfo, GpuInfo, HardwareProfile, ModelProfile, MtpInfo
from specadvisor.rulebase import find_gpu


def gpus(name: str, count: int = 1, *, engine_version: str | None = None) -> HardwareProfile:
    spec = find_gpu(name)
    assert spec is not None, name
    return HardwareProfile(
        gpus=[GpuInfo(index=i, vendor=spec.vendor, name=spec.name, memory_total_mib=int(spec.memory_gib * 1024), source="catalog") for i in range(count)],
        engine=EngineInfo(found=engine_version is not None, version=engine_version),
        hypothetical=True,
    )


def model(model_id: str, **fields) -> ModelProfile:
    return ModelProfile(id=model_id, **fields)


def mtp_model(model_id: str, layers: int, **fields) -> ModelProfile:
    return ModelProfile(id=model_id, mtp=MtpInfo(present=True, layers=layers, config_key="num_nextn_predict_layers"), **fields)
