"""Where a training run keeps its pieces, inside its own folder (one per trained drafter)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from specadvisor.domain import TrainedDrafter


def rows(work: Path) -> Path:
    """The regenerated training rows: prompt and response token ids with the loss mask (JSONL)."""
    return work / "rows.jsonl"


def heldout(work: Path) -> Path:
    """The prompts kept out of training, as a prompt file a sweep reads (JSONL)."""
    return work / "heldout.jsonl"


def data(work: Path) -> Path:
    return work / "data"


def hidden_states(work: Path) -> Path:
    return work / "hidden_states"


def checkpoints(work: Path) -> Path:
    return work / "checkpoints"


def drafter_folder(work: Path) -> Path:
    """What vLLM loads: `--speculative-config '{"method": "eagle3", "model": <this>}'`."""
    return work / "drafter"


def spec(work: Path) -> Path:
    return work / "train_spec.json"


def server_log(work: Path) -> Path:
    return work / "logs" / "server.log"


def worker_log(work: Path) -> Path:
    return work / "logs" / "trainer.log"


def resume_interrupted_checkpoint(work: Path, drafter: TrainedDrafter) -> bool:
    """Make Speculators resume from the checkpoint it saved when interrupted mid-epoch.

    It saves that one as `interrupted/` and, on the next start, ignores it ("rename it to an epoch
    number"); renamed to its epoch with the step it reached, its mid-epoch resume takes over (it
    skips the batches already trained on). Returns whether there was one to take."""
    folder = checkpoints(work)
    interrupted = folder / "interrupted"
    if not interrupted.is_dir():
        return False
    epoch = max(drafter.epochs - 1, 0)
    target = folder / str(epoch)
    if target.exists():
        shutil.rmtree(target)
    interrupted.rename(target)
    local_step = max(0, drafter.steps - drafter.epoch_start_step)
    (target / "training_state.json").write_text(json.dumps({"epoch": epoch, "local_step": local_step, "global_step": drafter.steps}), encoding="utf-8")
    return True
