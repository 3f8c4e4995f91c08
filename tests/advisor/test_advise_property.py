"""Property: whatever the situation, every emitted config is valid for its vLLM version."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from advisor_helpers import gpus
from specadvisor.advisor import advise, validate_spec_config
from specadvisor.domain import DrafterProfile, ModelProfile, MtpInfo, Workload, WorkloadKind
from specadvisor.rulebase import config_keys_for, load_rulebase, methods_for_version

RB = load_rulebase(include_user=False)
MODEL_IDS = [m.hf_id for m in RB.models if m.hf_id] + ["acme/private-ft", "/models/local-thing"]
GPU_NAMES = [g.id for g in RB.gpus]
VERSIONS = [None, "0.16.0", "0.19.2", "0.20.0", "0.24.1", "0.32.0", "0.33.0"]
USER_DRAFTERS = [
    None,
    DrafterProfile(id="me/eagle3", method="eagle3"),
    DrafterProfile(id="me/peagle", algorithm="peagle"),
    DrafterProfile(id="me/dflash-b8", method="dflash", parallel_drafting=True, block_size=8, default_k=7),
    DrafterProfile(id="me/medusa", method="medusa"),
    DrafterProfile(id="me/small", default_k=5),
]


@st.composite
def models(draw):
    model_id = draw(st.sampled_from(MODEL_IDS))
    layers = draw(st.sampled_from([0, 0, 1, 2, 3]))
    params = draw(st.one_of(st.none(), st.floats(0.1, 1000)))
    mtp = MtpInfo(present=layers > 0, layers=layers)
    return ModelProfile(id=model_id, params_b=params, mtp=mtp)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    model=models(),
    gpu=st.sampled_from(GPU_NAMES),
    count=st.sampled_from([1, 2, 3, 4, 8]),
    kind=st.sampled_from(list(WorkloadKind)),
    concurrency=st.integers(1, 512),
    output_len=st.integers(1, 8192),
    temperature=st.floats(0, 2),
    train=st.booleans(),
    version=st.sampled_from(VERSIONS),
    drafter=st.sampled_from(USER_DRAFTERS),
)
def test_every_emitted_config_is_valid_for_its_version(model, gpu, count, kind, concurrency, output_len, temperature, train, version, drafter):
    workload = Workload(kind=kind, concurrency=concurrency, output_len=output_len, temperature=temperature, willing_to_train=train)
    advice = advise(gpus(gpu, count), model, workload, drafter=drafter, vllm_version=version, rulebase=RB)
    available = methods_for_version(version, RB)
    assert advice.baseline["speculative_config"] is None
    assert advice.verdict and advice.verdict_level in ("speculate", "careful", "unlikely")
    assert 1 <= advice.tensor_parallel_size <= count
    for candidate in advice.candidates:
        config = candidate.speculative_config
        assert config["method"] == candidate.method  # always explicit
        assert candidate.id in available
        assert set(config) <= set(config_keys_for(candidate.method, version, RB))
        assert candidate.n_grid and candidate.n_grid == sorted(set(candidate.n_grid))
        for n in candidate.n_grid:  # every N of the grid, not only the template's
            assert (
                validate_spec_config(
                    {**config, "num_speculative_tokens": n},
                    version,
                    rulebase=RB,
                    mtp_layers=model.mtp.layers if candidate.id == "mtp" and not candidate.drafter else None,
                )
                == []
            ), (candidate.id, n)
