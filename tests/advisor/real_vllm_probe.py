"""Run inside the CPU engine's venv: validate configs with vLLM's own SpeculativeConfig.

stdin: {"model_dir": ..., "configs": [...]}; stdout: one line "RESULT <json>" with the real
field names, method literals and one verdict per config.
"""

import dataclasses
import json
import sys
import typing

from vllm.config import ModelConfig, ParallelConfig, speculative


def _literals(tp) -> list[str]:
    found = []
    for arg in typing.get_args(tp):
        found += _literals(arg) if typing.get_args(arg) else [arg]
    return found


request = json.loads(sys.stdin.read())
target = ModelConfig(model=request["model_dir"], dtype="float32", max_model_len=2048)
verdicts = []
for config in request["configs"]:
    try:
        parsed = speculative.SpeculativeConfig(target_model_config=target, target_parallel_config=ParallelConfig(), **config)
        verdicts.append({"ok": True, "method": parsed.method, "n": parsed.num_speculative_tokens})
    except Exception as exc:  # noqa: BLE001 - the verdict is the data: report every failure
        verdicts.append({"ok": False, "error": f"{type(exc).__name__}: {exc}"[:600]})
print(
    "RESULT "
    + json.dumps(
        {
            "fields": [f.name for f in dataclasses.fields(speculative.SpeculativeConfig) if f.init],
            "methods": sorted(set(_literals(speculative.SpeculativeMethod))),
            "verdicts": verdicts,
        }
    )
)
