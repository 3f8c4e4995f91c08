"""The rule base and the advisor's configs, checked by the real vLLM 0.32.0 (CPU build) code.

No server: vLLM's own SpeculativeConfig validates each emitted config against the real SmolLM2
model folder, which is where vLLM rejects a bad --speculative-config.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from advisor_helpers import model
from specadvisor.advisor import advise
from specadvisor.domain import DrafterProfile, HardwareProfile, Workload, WorkloadKind
from specadvisor.rulebase import config_keys_for, load_rulebase, methods_for_version

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.timeout(900)]
VERSION = "0.32.0"
INTERNAL_FIELDS = {"target_model_config", "target_parallel_config", "draft_model_config", "draft_parallel_config"}


@pytest.fixture(scope="module")
def engine():
    from specadvisor.engine.cpu import ensure_cpu_engine

    return ensure_cpu_engine(progress=lambda line: print(f"[cpu-engine] {line}", flush=True))


def _emitted_configs(model_dir: Path) -> list[dict]:
    rb = load_rulebase(include_user=False)
    drafter = DrafterProfile(id=str(model_dir), path=str(model_dir), method="draft_model")
    configs = []
    for kind in WorkloadKind:
        for concurrency in (1, 64):
            for user_drafter in (None, drafter):
                advice = advise(
                    HardwareProfile(),
                    model("HuggingFaceTB/SmolLM2-135M-Instruct"),
                    Workload(kind=kind, concurrency=concurrency),
                    drafter=user_drafter,
                    vllm_version=VERSION,
                    rulebase=rb,
                )
                for candidate in advice.candidates:
                    configs += [{**candidate.speculative_config, "num_speculative_tokens": n} for n in candidate.n_grid]
    unique = {json.dumps(c, sort_keys=True): c for c in configs}
    return list(unique.values())


def test_rule_base_and_emitted_configs_agree_with_real_vllm(engine):
    configs = _emitted_configs(engine.model_dir)
    assert {c["method"] for c in configs} >= {"ngram", "suffix", "draft_model"}
    probe = Path(__file__).with_name("real_vllm_probe.py")
    proc = subprocess.run(
        [str(engine.python), str(probe)],
        input=json.dumps({"model_dir": str(engine.model_dir), "configs": configs}),
        capture_output=True,
        text=True,
        timeout=800,
        env={**os.environ, **engine.env},
    )
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")), None)
    assert line, proc.stderr[-2000:]
    real = json.loads(line.removeprefix("RESULT "))

    rb = load_rulebase(include_user=False)
    offered = methods_for_version(VERSION, rb)
    assert {m.vllm_method for m in offered.values()} <= set(real["methods"])
    assert "medusa" in real["methods"]  # removed only in 0.33
    fields = set(real["fields"]) - INTERNAL_FIELDS
    for method in {m.vllm_method for m in offered.values()}:
        assert set(config_keys_for(method, VERSION, rb)) <= fields, method

    for config, verdict in zip(configs, real["verdicts"], strict=True):
        if config["method"] == "suffix" and not verdict["ok"]:
            # Accepted by the config schema; only the optional package is missing here (the advisor warns about it).
            assert "Arctic Inference is required" in verdict["error"], verdict
            continue
        assert verdict["ok"], (config, verdict)
        assert verdict["method"] == config["method"] and verdict["n"] == config["num_speculative_tokens"]
