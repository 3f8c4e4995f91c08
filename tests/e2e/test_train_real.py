"""`specadvisor train` end to end on the real CPU engine: interrupted, resumed, exported, measured.

The real binary trains an EAGLE-3 head for SmolLM2 with Speculators 0.9 (installed beside the CPU
engine by the same code as the product), online against a `vllm serve` it launches with hidden-state
extraction (the CPU stand-in connector). SIGINT mid-training must leave no server or trainer behind
and a record that says "interrupted"; `--resume` must continue from the checkpoint to the step
budget (not start over), export a drafter folder vLLM loads, and measure it with vLLM on the
held-out prompts. A handful of steps: this checks the pipeline, not the drafter's quality (that is
tests/e2e/test_trained_drafter_real.py, on a drafter trained long enough to draft).
"""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from specadvisor.domain import ArmStatus
from specadvisor.store import Store

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.timeout(1800)]

STEPS = 14
TRAIN = [
    "train", "--cpu", "--prompts", "humaneval", "--num-prompts", "24", "--output-len", "32",
    "--steps", str(STEPS), "--total-seq-len", "512", "--draft-vocab-size", "1024", "--no-sweep",
]  # fmt: skip


def _cli(db: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "specadvisor.cli.main", "--db", str(db), *args]


def _safetensors_names(path: Path) -> set[str]:
    """Tensor names from a safetensors header (8-byte little-endian length, then JSON): no torch here."""
    with open(path, "rb") as handle:
        (size,) = struct.unpack("<Q", handle.read(8))
        header = json.loads(handle.read(size))
    return {name for name in header if name != "__metadata__"}


def _ours_running(work_dir: str) -> list[str]:
    """Processes whose command line names this run's folder: the extraction server and the trainer."""
    found = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmdline = " ".join(proc.info.get("cmdline") or [])
        if work_dir in cmdline:
            found.append(f"{proc.info['pid']}: {cmdline[:120]}")
    return found


def test_train_interrupt_resume_export_and_heldout_check(cpu_engine, tmp_path: Path) -> None:
    db = tmp_path / "train.db"
    first = subprocess.Popen(_cli(db, *TRAIN), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 900
    drafter = None
    while time.monotonic() < deadline and first.poll() is None:
        time.sleep(3)
        with Store.open(db) as store:
            found = store.list_drafters()
        if found and found[0].steps >= 3:
            drafter = found[0]
            break
    assert drafter is not None, f"training never reached step 3: {first.communicate(timeout=60)[1][-3000:]}"
    first.send_signal(signal.SIGINT)
    _, err = first.communicate(timeout=300)
    assert first.returncode == 130, err[-3000:]
    assert f"specadvisor train --resume {drafter.id[:8]}" in err
    with Store.open(db) as store:
        stopped = store.get_drafter(drafter.id)
    assert stopped.status == "interrupted" and stopped.stopped_by == "interrupted"
    assert 3 <= stopped.steps < STEPS
    assert _ours_running(stopped.work_dir) == []  # no server or trainer left behind
    work = Path(stopped.work_dir)
    assert len((work / "rows.jsonl").read_text().splitlines()) == stopped.train_prompts > 0

    resumed = subprocess.run(_cli(db, "train", "--resume", drafter.id[:8], "--no-sweep", "--json"), capture_output=True, text=True, timeout=1500)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    record = json.loads(resumed.stdout)
    assert record["status"] == "complete" and record["steps"] == STEPS and record["stopped_by"] == "steps"
    steps = [p["step"] for p in record["curve"]]
    assert steps == sorted(steps) and steps[-1] == STEPS
    assert len(steps) < STEPS + stopped.steps  # continued from the checkpoint: the early steps were not trained again
    assert record["train_seconds"] > stopped.train_seconds
    assert record["versions"]["speculators"].startswith("0.9.") and record["versions"]["vllm"] == cpu_engine.vllm_version

    folder = Path(record["folder"])
    config = json.loads((folder / "config.json").read_text())
    assert config["speculators_model_type"] == "eagle3" and "auto_map" not in config
    names = _safetensors_names(folder / "model.safetensors")
    assert "lm_head.weight" in names and "d2t" in names and not any(n.startswith("embed_tokens") for n in names)

    with Store.open(db) as store:
        heldout = store.get_session(record["heldout_session_id"])
    [result] = heldout.results
    assert result.status == ArmStatus.ok and result.num_drafts and result.num_drafts > 0
    assert [p.position for p in result.per_position] == [0, 1, 2, 3]  # N = the trained depth + 1
    assert heldout.drafter == record["folder"]
    assert os.path.samefile(heldout.settings.prompt_source, work / "heldout.jsonl")

    shown = subprocess.run(_cli(db, "drafters", "show", drafter.id[:8]), capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0 and "vLLM on held-out prompts" in shown.stdout and f"{STEPS} steps" in shown.stdout
