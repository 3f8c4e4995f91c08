"""One training run, stage by stage, as an event stream: serve the target with hidden-state
extraction, regenerate the training rows on it, train with Speculators online, export the drafter.

Every stage leaves what a resume needs in the run's folder (rows appended as they come,
Speculators' checkpoints, the drafter folder) and the record in the store says how far it got, so
`specadvisor train --resume ID` continues where an interruption stopped it. The target server runs
under the same lifecycle as a sweep's (own process group, parent-death signal, stopped on exit).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specadvisor.bench.prompts import Prompt
from specadvisor.domain import TrainedDrafter, TrainEvent, TrainPoint, TrainValidation
from specadvisor.engine.server import VllmServer
from specadvisor.engine.spec import ServerSpec
from specadvisor.engine.speculators_env import TrainingPython
from specadvisor.errors import EngineError
from specadvisor.rulebase import registry
from specadvisor.training import layout
from specadvisor.training.regenerate import RegenerateSettings, clear_hidden_states, regenerate, row_counts
from specadvisor.training.worker import PLUGIN_FOLDER, TrainWorker

CURVE_POINTS_KEPT = 2000  # a long run keeps every other point once past this
SAVE_EVERY_S = 10.0


@dataclass(frozen=True)
class TrainJob:
    """Everything a run needs, resolved and checked before anything starts (app.train plans it)."""

    drafter: TrainedDrafter
    model: str  # what the server loads and Speculators reads as the verifier
    prompts: list[Prompt]  # the training prompts (held-out ones already removed)
    aux_layer_ids: list[int]  # the target layers the drafter reads; the last layer is added for the server
    num_layers: int
    engine_cmd: list[str]
    trainer: TrainingPython
    cpu: bool = False
    server_args: list[str] = field(default_factory=list)
    server_env: dict[str, str] = field(default_factory=dict)
    server_gpus: str | None = None  # CUDA_VISIBLE_DEVICES of the server
    trainer_gpus: str | None = None  # and of the trainer (another GPU when there is one)
    regen_concurrency: int = 16
    num_workers: int = 2
    ready_timeout_s: float = 1200.0

    @property
    def work(self) -> Path:
        return Path(self.drafter.work_dir)


def extraction_config(job: TrainJob) -> dict[str, Any]:
    """vLLM's `extract_hidden_states` method: the drafter's layers plus the last one (the target's
    own final hidden state, which the trainer turns into its teacher's logits)."""
    layers = [*job.aux_layer_ids, job.num_layers]
    method = registry.hidden_state_extraction().vllm_method
    return {"method": method, "num_speculative_tokens": 1, "draft_model_config": {"hf_config": {"eagle_aux_hidden_state_layer_ids": layers}}}


def kv_transfer_config(job: TrainJob) -> dict[str, Any]:
    """The connector that writes each request's hidden states as a file the trainer reads: vLLM's
    own on a GPU, the CPU stand-in (engine_side/sa_cpu_hidden_states.py) on the CPU build."""
    config: dict[str, Any] = {
        "kv_connector": "ExampleHiddenStatesConnector",
        "kv_role": "kv_producer",
        "kv_connector_extra_config": {"shared_storage_path": str(layout.hidden_states(job.work))},
    }
    if job.cpu:
        config["kv_connector"] = "CpuHiddenStatesConnector"
        config["kv_connector_module_path"] = "sa_cpu_hidden_states"
    return config


def server_spec(job: TrainJob) -> ServerSpec:
    env = dict(job.server_env)
    if job.cpu:
        env["PYTHONPATH"] = str(PLUGIN_FOLDER)
    return ServerSpec(
        model=job.model,
        speculative_config=extraction_config(job),
        engine_cmd=list(job.engine_cmd),
        extra_args=[*job.server_args, "--kv-transfer-config", json.dumps(kv_transfer_config(job))],
        env=env,
        gpu_ids=job.server_gpus,
        ready_timeout_s=job.ready_timeout_s,
        log_path=layout.server_log(job.work),
    )


class TrainRunner:
    """Runs a job; `run()` yields TrainEvents and keeps `drafter` (and the store, through `save`) current."""

    def __init__(self, job: TrainJob, save: Callable[[TrainedDrafter], None]):
        self.job = job
        self.drafter = job.drafter
        self._save = save
        self._saved_at = 0.0
        self._seconds_before = job.drafter.train_seconds
        self._first_step_at: float | None = None  # for steps/s: the first step of this run
        self._run_first_step: int | None = None

    def _update(self, force: bool = True, **changes: Any) -> None:
        self.drafter = self.drafter.model_copy(update=changes)
        now = time.monotonic()
        if force or now - self._saved_at >= SAVE_EVERY_S:
            self._save(self.drafter)
            self._saved_at = now

    async def run(self) -> AsyncIterator[TrainEvent]:
        started = time.monotonic()
        wall_before = self.drafter.wall_seconds
        self._update(status="running", stopped_by="", error=None)
        try:
            yield TrainEvent(kind="stage", stage="server", message=f"starting vllm serve {self.job.model} with hidden-state extraction")
            async with VllmServer(server_spec(self.job)) as server:
                yield TrainEvent(kind="stage", stage="regenerate", message=f"regenerating {len(self.job.prompts)} responses with the target")
                async for event in self._regenerate(server.base_url):
                    yield event
                async for event in self._train(server.base_url):
                    yield event
            self._update(
                status="complete", stage="export", folder=str(layout.drafter_folder(self.job.work)), wall_seconds=wall_before + time.monotonic() - started
            )
            yield TrainEvent(kind="done", message=f"drafter ready: {layout.drafter_folder(self.job.work)}", step=self.drafter.steps)
        except (asyncio.CancelledError, KeyboardInterrupt):
            self._update(status="interrupted", stopped_by="interrupted", wall_seconds=wall_before + time.monotonic() - started)
            raise
        except Exception as exc:
            self._update(status="failed", stopped_by="error", error=str(exc)[:2000], wall_seconds=wall_before + time.monotonic() - started)
            yield TrainEvent(kind="error", message=str(exc))
            raise

    async def _regenerate(self, base_url: str) -> AsyncIterator[TrainEvent]:
        rows = layout.rows(self.job.work)
        progress: asyncio.Queue[tuple[int, int]] = asyncio.Queue()
        settings = RegenerateSettings(
            model=self.job.model,
            output_len=self.drafter.settings.output_len,
            temperature=self.drafter.settings.temperature,
            seed=self.drafter.settings.seed,
            concurrency=self.job.regen_concurrency,
        )
        self._update(stage="regenerate")
        task = asyncio.create_task(regenerate(base_url, self.job.prompts, rows, settings, on_row=lambda d, t: progress.put_nowait((d, t))))
        while not task.done():
            getter = asyncio.create_task(progress.get())
            await asyncio.wait({task, getter}, return_when=asyncio.FIRST_COMPLETED)
            if getter.done():
                done, total = getter.result()
                yield TrainEvent(kind="stage", stage="regenerate", step=done, total_steps=total, message=f"regenerated {done}/{total}")
            else:
                getter.cancel()
        task.result()
        count, tokens = row_counts(rows)
        clear_hidden_states(layout.hidden_states(self.job.work))
        self._update(train_prompts=count, tokens=tokens)
        yield TrainEvent(kind="note", stage="regenerate", message=f"{count} training rows, {tokens} response tokens")

    def _spec(self, base_url: str) -> dict[str, Any]:
        s = self.drafter.settings
        seconds = None
        if s.minutes is not None:
            seconds = max(s.minutes * 60 - self.drafter.train_seconds, 1.0)
        return {
            "verifier": self.job.model,
            "rows": str(layout.rows(self.job.work)),
            "data_dir": str(layout.data(self.job.work)),
            "hidden_states_dir": str(layout.hidden_states(self.job.work)),
            "endpoint": f"{base_url}/v1",
            "save_path": str(layout.checkpoints(self.job.work)),
            "drafter_dir": str(layout.drafter_folder(self.job.work)),
            "speculator_type": registry.require(s.method).trained_as,
            "draft_vocab_size": s.draft_vocab_size,
            "max_steps": s.steps,
            "seconds": seconds,
            "plain_kernels": self.drafter.plain_kernels,
            "total_seq_len": s.total_seq_len,
            "seq_length": s.total_seq_len,
            "train_data_ratio": 0.95,
            "ttt_steps": s.ttt_steps,
            "target_layer_ids": self.job.aux_layer_ids,
            "num_workers": 0 if self.job.cpu else self.job.num_workers,
            "seed": s.seed,
            "cpu": self.job.cpu,
        }

    async def _train(self, base_url: str) -> AsyncIterator[TrainEvent]:
        failure = None
        async for event in self._train_once(base_url):
            if event.kind == "error":
                failure = event.message
            yield event
        if failure and self._compiled_path_failed(failure):
            self._update(plain_kernels=True)
            yield TrainEvent(
                kind="note",
                stage="train",
                message=f"the compiled loss or attention failed before the first step ({failure[:160]}): training again with the eager loss and SDPA",
            )
            failure = None
            async for event in self._train_once(base_url):
                if event.kind == "error":
                    failure = event.message
                yield event
        if failure:
            raise EngineError(
                f"training stopped: {failure}",
                hint=f"see {layout.worker_log(self.job.work)}; `specadvisor train --resume {self.drafter.id[:8]}` continues from the last checkpoint",
            )

    def _compiled_path_failed(self, failure: str) -> bool:
        """Speculators' fused loss and flex attention go through torch.compile and Triton; with torch
        2.11 (vLLM 0.26's) dynamo failed on the fused loss on an H200 before the first step
        ("ListVariable ... is already tracked for mutation"). Their eager counterparts train the same head."""
        if self.job.cpu or self.drafter.plain_kernels or self._first_step_at is not None:
            return False
        return any(word in failure.lower() for word in ("dynamo", "inductor", "triton", "torch.compile", "tracked for mutation", "unsupported:"))

    async def _train_once(self, base_url: str) -> AsyncIterator[TrainEvent]:
        work = self.job.work
        layout.resume_interrupted_checkpoint(work, self.drafter)
        spec_path = layout.spec(work)
        spec_path.write_text(json.dumps(self._spec(base_url), indent=2) + "\n", encoding="utf-8")
        env = {"CUDA_VISIBLE_DEVICES": self.job.trainer_gpus} if self.job.trainer_gpus is not None else {}
        worker = TrainWorker(self.job.trainer, spec_path, layout.worker_log(work), env=env)
        self._update(stage="train")
        await worker.start()
        failure: str | None = None
        try:
            async for raw in worker.events():
                event, failed = self._on_worker_event(raw)
                if failed:
                    failure = failed
                if event is not None and event.kind != "error":  # the run's one error event comes below
                    yield event
        except (asyncio.CancelledError, KeyboardInterrupt):
            await asyncio.shield(worker.stop())
            self._update(train_seconds=self._train_seconds())
            raise
        code = await worker.wait()
        self._update(train_seconds=self._train_seconds())
        if code != 0 and not failure:
            failure = f"the worker exited with {code}"
        if failure:
            yield TrainEvent(kind="error", stage="train", message=failure)

    def _train_seconds(self) -> float:
        """Optimizer time: from this run's first step (set-up and compilation are not the budget's, as
        in the worker), added to what earlier runs spent."""
        if self._first_step_at is None:
            return self._seconds_before
        return self._seconds_before + max(0.0, time.monotonic() - self._first_step_at)

    def _on_worker_event(self, raw: dict[str, Any]) -> tuple[TrainEvent | None, str | None]:
        kind = raw.get("event")
        s = self.drafter.settings
        if kind == "stage":
            stage = str(raw.get("stage", ""))
            if stage == "train":
                self._update(epochs=max(self.drafter.epochs, int(raw.get("epoch") or 0) + 1), epoch_start_step=self.drafter.steps)
            if stage == "start":
                versions = {k: str(raw[k]) for k in ("speculators", "torch") if raw.get(k)}
                self._update(versions={**self.drafter.versions, **versions})
            return TrainEvent(kind="stage", stage=stage, message=_stage_text(stage, raw)), None
        if kind == "plan":
            return TrainEvent(kind="plan", message=f"{raw.get('steps_per_epoch')} steps per epoch", total_steps=s.steps), None
        if kind == "step":
            step = int(raw.get("step") or 0)
            if self._first_step_at is None:
                self._first_step_at, self._run_first_step = time.monotonic(), step
            seconds = self._train_seconds()
            point = TrainPoint(step=step, seconds=round(seconds, 3), loss=_finite(raw.get("loss")), accuracy=_rates(raw.get("accuracy")))
            curve = [*self.drafter.curve, point]
            if len(curve) > CURVE_POINTS_KEPT:
                curve = curve[::2]
            self._update(force=False, steps=step, curve=curve, train_seconds=seconds)
            return self._step_event(point), None
        if kind == "val":
            val = TrainValidation(
                epoch=int(raw.get("epoch") or 0), step=self.drafter.steps, loss=_finite(raw.get("loss")), accuracy=_rates(raw.get("accuracy"))
            )
            self._update(validation=[*self.drafter.validation, val])
            return TrainEvent(kind="val", step=val.step, loss=val.loss, accuracy=val.accuracy, message=f"held-out rows after epoch {val.epoch + 1}"), None
        if kind == "checkpoint":
            return TrainEvent(kind="checkpoint", step=int(raw.get("step") or 0), message=f"checkpoint {raw.get('path')}"), None
        if kind == "exported":
            self._update(stage="export", folder=str(raw.get("folder") or ""))
            return TrainEvent(kind="stage", stage="export", message=f"drafter folder {raw.get('folder')} ({int(raw.get('bytes') or 0) / 1e6:.1f} MB)"), None
        if kind == "done":
            self._update(stopped_by=str(raw.get("stopped_by") or ""))
            return None, None
        if kind == "error":
            detail = str(raw.get("detail") or raw.get("kind") or "unknown error")
            return TrainEvent(kind="error", message=detail), detail
        return None, None

    def _step_event(self, point: TrainPoint) -> TrainEvent:
        s = self.drafter.settings
        rate = None
        if self._first_step_at is not None and self._run_first_step is not None:
            elapsed = time.monotonic() - self._first_step_at
            done = point.step - self._run_first_step
            rate = done / elapsed if elapsed > 0 and done > 0 else None
        eta = deadline = None
        if s.minutes is not None:
            deadline = eta = max(0.0, s.minutes * 60 - point.seconds)
        elif s.steps is not None and rate:
            eta = max(0.0, (s.steps - point.step) / rate)
        return TrainEvent(
            kind="step", step=point.step, total_steps=s.steps, loss=point.loss, accuracy=point.accuracy, steps_per_s=rate, eta_s=eta, deadline_s=deadline
        )


def _stage_text(stage: str, raw: dict[str, Any]) -> str:
    if stage == "start":
        return f"trainer started: speculators {raw.get('speculators', '?')}, torch {raw.get('torch', '?')}"
    if stage == "train":
        return f"epoch {int(raw.get('epoch') or 0) + 1}"
    if stage == "export":
        return "exporting the drafter folder"
    return str(raw.get("detail") or stage)


def _finite(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number == number and abs(number) != float("inf") else None


def _rates(values: Any) -> list[float]:
    if not isinstance(values, list):
        return []
    out = []
    for v in values[:64]:
        number = _finite(v)
        out.append(min(1.0, max(0.0, number)) if number is not None else 0.0)
    return out
