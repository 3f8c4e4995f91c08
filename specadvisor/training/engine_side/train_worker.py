"""Train a drafter with Speculators, in the engine's Python, reporting progress as JSON lines.

Run by specadvisor as `python train_worker.py SPEC.json PROGRESS_FD`; imports nothing from
specadvisor (this Python has vLLM, torch and Speculators, not specadvisor). SPEC.json names the
regenerated rows, the folders, the running `vllm serve` (online mode: Speculators asks it for each
sample's hidden states), the step or time budget and the device. Every line written to
PROGRESS_FD is one JSON object with an "event": plan, stage, step, val, checkpoint, exported, done or error.

Three things are added around Speculators' own `train` (checked against speculators 0.9.0):
- a budget: stop after `max_steps` optimizer steps or once `seconds` of training have passed since
  the first step of this run (setup and compilation are not the budget's), then save, validate and
  end (Speculators' own --max-steps keeps running one step per remaining epoch);
- progress: its metric logger's records (loss and per-position accuracy) become step/val events;
- the CPU: its trainer assumes CUDA when no accelerator is present; with "cpu" set the model and
  batches go to the CPU, attention is SDPA and the loss the eager one (its fused loss is Triton).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

SUPPORTED_SPECULATORS = ("0.9.",)
_emit_stream: Any = None
_last: dict[str, Any] = {}  # the trainer of this run, for the final event


def emit(event: str, **fields: Any) -> None:
    if _emit_stream is None:
        return
    _emit_stream.write(json.dumps({"event": event, "t": time.time(), **fields}) + "\n")
    _emit_stream.flush()


def _positions(metrics: dict[str, float], prefix: str, suffix: str = "") -> list[float]:
    """full_acc_0, full_acc_1, ... (Speculators' names) as a list in position order."""
    found: dict[int, float] = {}
    for key, value in metrics.items():
        if key.startswith(prefix) and key.endswith(suffix):
            middle = key[len(prefix) : len(key) - len(suffix)] if suffix else key[len(prefix) :]
            if middle.isdigit():
                found[int(middle)] = float(value)
    return [found[i] for i in sorted(found)]


class _MetricsToEvents(logging.Handler):
    """Speculators logs metric dicts on "speculators.metrics"; each becomes a step or val event."""

    def emit(self, record: logging.LogRecord) -> None:
        msg = record.msg
        if not isinstance(msg, dict):
            return
        try:
            if isinstance(msg.get("train"), dict):
                train = msg["train"]
                lr = msg.get("lr")
                emit(
                    "step",
                    step=int(msg.get("global_step", 0)) + 1,
                    epoch=msg.get("epoch"),
                    loss=train.get("loss"),
                    accuracy=_positions(train, "full_acc_"),
                    lr=lr if isinstance(lr, int | float) else None,
                )
            elif isinstance(msg.get("val"), dict):
                val = msg["val"]
                emit("val", epoch=msg.get("epoch"), loss=val.get("loss_epoch"), accuracy=_positions(val, "full_acc_", "_epoch"))
        except Exception:  # noqa: BLE001 - progress must never stop training
            pass


def _prepare(spec: dict[str, Any]) -> None:
    """Speculators' prepare-data on rows that already carry input_ids and loss_mask (the target's
    own tokens, from regeneration): it writes the dataset and the token frequencies the draft
    vocabulary is chosen from. A dataset already there is kept (a resumed run)."""
    data_dir = Path(spec["data_dir"])
    if data_dir.is_dir() and any(data_dir.glob("*.arrow")):
        emit("stage", stage="prepare", detail="kept the prepared dataset")
        return
    emit("stage", stage="prepare", detail="speculators prepare-data")
    from speculators.data_generation.preprocessing import load_and_preprocess_dataset

    data_dir.mkdir(parents=True, exist_ok=True)
    dataset, _ = load_and_preprocess_dataset(
        target_model_path=spec["verifier"],
        train_data_paths=[spec["rows"]],
        seq_length=int(spec["seq_length"]),
        build_dataset_num_proc=1,
        seed=int(spec.get("seed", 0)),
        max_samples=None,
        token_freq_path=data_dir / "token_freq.pt",
        render_endpoint=None,
        minimum_valid_tokens=None,
        allow_empty_output=False,
        trust_remote_code=False,
        skip_token_freq=False,
    )
    dataset.save_to_disk(str(data_dir))


def _train_argv(spec: dict[str, Any]) -> list[str]:
    argv = [
        "--speculator-type",
        spec["speculator_type"],
        "--verifier-name-or-path",
        spec["verifier"],
        "--data-path",
        spec["data_dir"],
        "--vllm-endpoint",
        spec["endpoint"],
        "--on-missing",
        "generate",
        "--hidden-states-path",
        spec["hidden_states_dir"],
        "--save-path",
        spec["save_path"],
        "--total-seq-len",
        str(spec["total_seq_len"]),
        "--train-data-ratio",
        str(spec["train_data_ratio"]),
        "--ttt-steps",
        str(spec["ttt_steps"]),
        "--epochs",
        "1000000",  # the budget below ends the run
        "--checkpoint-freq",
        "1",
        "--num-workers",
        str(spec["num_workers"]),
        "--seed",
        str(spec.get("seed", 0)),
        "--log-dir",
        str(Path(spec["save_path"]).parent / "logs"),
    ]
    if spec.get("draft_vocab_size"):
        argv += ["--draft-vocab-size", str(spec["draft_vocab_size"])]
    if spec.get("target_layer_ids"):
        argv += ["--target-layer-ids", *[str(i) for i in spec["target_layer_ids"]]]
    if spec.get("lr"):
        argv += ["--lr", str(spec["lr"])]
    if spec.get("max_steps") is None:
        argv += ["--scheduler-type", "none"]  # a time budget has no known end for a decaying schedule
    else:
        argv += ["--scheduler-total-steps", str(spec["max_steps"])]
    if spec.get("cpu"):
        argv += ["--draft-attn-impl", "sdpa", "--loss-implementation", "eager", "--hidden-states-dtype", "float32"]
    elif spec.get("plain_kernels"):  # the compiled fused loss and flex attention failed on this torch
        argv += ["--draft-attn-impl", "sdpa", "--loss-implementation", "eager"]
    return argv + list(spec.get("extra_args", []))


def _install(spec: dict[str, Any]) -> None:
    """Patch Speculators' trainer in this process: the budget, progress events and the CPU."""
    import speculators.train.cli as train_cli
    import speculators.train.trainer as trainer_mod
    import torch
    from speculators.train.graceful_shutdown import with_graceful_shutdown

    cpu = bool(spec.get("cpu"))
    max_steps = spec.get("max_steps")
    seconds = spec.get("seconds")
    clock: dict[str, float] = {}
    if cpu:
        import speculators.train.checkpointer as checkpointer_mod

        trainer_mod.get_local_rank = lambda: "cpu"  # type: ignore[assignment]
        checkpointer_mod.get_current_device = lambda: "cpu"  # type: ignore[assignment]  (a resume loads the checkpoint here)
        if not torch.accelerator.is_available():
            torch.accelerator.synchronize = lambda *args, **kwargs: None  # type: ignore[assignment]

    setup_metric_logger = train_cli.setup_metric_logger

    def setup_and_listen(*args: Any, **kwargs: Any) -> None:
        setup_metric_logger(*args, **kwargs)
        logging.getLogger("speculators.metrics").addHandler(_MetricsToEvents())

    train_cli.setup_metric_logger = setup_and_listen

    class BudgetTrainer(trainer_mod.Trainer):  # type: ignore[misc, name-defined]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            if cpu:
                self.device_type = "cpu"
            self.stopped_by = ""
            _last["trainer"] = self
            emit(
                "plan",
                steps_per_epoch=len(self.train_loader),
                val_batches=len(self.val_loader) if self.val_loader is not None else 0,
                start_step=self.global_step,
                start_epoch=self.current_epoch,
                max_steps=max_steps,
                seconds=seconds,
            )

        def _after_step(self) -> None:
            started = clock.setdefault("first_step", time.monotonic())
            if max_steps is not None and self.global_step >= max_steps:
                self.stopped_by = "steps"
            elif seconds is not None and time.monotonic() - started >= seconds:
                self.stopped_by = "time"
            if self.stopped_by:
                self.config = self.config._replace(max_steps=self.global_step)  # Speculators' own check ends the epoch here

        @with_graceful_shutdown()
        def run_training(self) -> None:
            epoch = self.current_epoch
            if max_steps is not None and self.global_step >= max_steps:
                self.stopped_by = "steps"
                return
            while True:
                emit("stage", stage="train", epoch=epoch)
                self.train_epoch(epoch, step_callback=self._after_step)
                self.maybe_save_checkpoint(epoch)
                emit("checkpoint", epoch=epoch, step=self.global_step, path=str(self.checkpointer.path / str(epoch)))
                self.maybe_update_best(epoch, self.val_epoch(epoch))
                if self.stopped_by:
                    return
                epoch += 1

    train_cli.Trainer = BudgetTrainer


def _export(spec: dict[str, Any]) -> None:
    """The drafter folder vLLM loads, from the newest checkpoint: its config without the remote-code
    hook and its weights without `embed_tokens` (a frozen copy of the target's, which vLLM shares
    with the draft when the checkpoint has none: `_maybe_share_embeddings`)."""
    import shutil

    save = Path(spec["save_path"])
    epochs = sorted(int(d.name) for d in save.iterdir() if d.is_dir() and d.name.isdigit()) if save.is_dir() else []
    if not epochs:
        raise RuntimeError(f"training saved no checkpoint in {save}")
    from safetensors.torch import load_file, save_file

    source = save / str(epochs[-1])
    out = Path(spec["drafter_dir"])
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    tensors = {k: v.contiguous() for k, v in load_file(str(source / "model.safetensors")).items() if not k.startswith("embed_tokens")}
    save_file(tensors, str(partial / "model.safetensors"), metadata={"format": "pt"})
    config = json.loads((source / "config.json").read_text(encoding="utf-8"))
    config.pop("auto_map", None)
    (partial / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    shutil.rmtree(out, ignore_errors=True)
    partial.rename(out)
    size = sum(f.stat().st_size for f in out.iterdir())
    emit("exported", folder=str(out), checkpoint=str(source), bytes=size, params=sum(t.numel() for t in tensors.values()))


def main(argv: list[str]) -> int:
    global _emit_stream
    spec = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    _emit_stream = os.fdopen(int(argv[2]), "w", buffering=1) if len(argv) > 2 else sys.stdout
    try:
        from importlib.metadata import version as installed

        version = installed("speculators")
        if not str(version).startswith(SUPPORTED_SPECULATORS):
            emit("error", kind="speculators-version", detail=f"speculators {version} is installed; this is tested with 0.9.x")
            return 3
        emit("stage", stage="start", speculators=str(version), torch=__import__("torch").__version__)
        _prepare(spec)
        _install(spec)
        from speculators.train.cli import main as train_main
        from speculators.train.config import TrainConfig

        train_main(TrainConfig.resolve(_train_argv(spec)))
        trainer = _last.get("trainer")
        if trainer is not None and not trainer.stopped_by:  # Speculators caught SIGINT and saved `interrupted`
            emit("error", kind="interrupted", detail=f"interrupted at step {trainer.global_step}; the checkpoint is kept for a resume")
            return 130
        emit("stage", stage="export")
        _export(spec)
        emit(
            "done",
            save_path=spec["save_path"],
            step=getattr(trainer, "global_step", None),
            stopped_by=getattr(trainer, "stopped_by", "") or "epochs",
        )
        return 0
    except BaseException as exc:  # noqa: BLE001 - reported to specadvisor as an event and an exit code
        if isinstance(exc, KeyboardInterrupt):
            emit("error", kind="interrupted", detail="interrupted")
            return 130
        traceback.print_exc()  # into the trainer's log, beside Speculators' own output
        emit("error", kind=type(exc).__name__, detail=str(exc)[:2000], traceback=traceback.format_exc()[-4000:])
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
