"""The worker's events become the drafter's record (curve, validation, versions) and the live views' events."""

from __future__ import annotations

from pathlib import Path

from specadvisor.domain import TrainedDrafter, TrainSettings
from specadvisor.engine.speculators_env import TrainingPython
from specadvisor.training import layout
from specadvisor.training.runner import TrainJob, TrainRunner, extraction_config, kv_transfer_config, server_spec


def _runner(tmp_path: Path, *, cpu: bool = False, steps: int | None = 100, minutes: float | None = None) -> tuple[TrainRunner, list[TrainedDrafter]]:
    saved: list[TrainedDrafter] = []
    drafter = TrainedDrafter(target="/m", work_dir=str(tmp_path), settings=TrainSettings(method="eagle3", steps=steps, minutes=minutes))
    job = TrainJob(
        drafter=drafter, model="/m", prompts=[], aux_layer_ids=[2, 15, 27], num_layers=30,
        engine_cmd=["vllm", "serve"], trainer=TrainingPython(python=Path("/usr/bin/python3")), cpu=cpu,
    )  # fmt: skip
    return TrainRunner(job, save=saved.append), saved


def test_step_events_build_the_curve_and_say_steps_per_second(tmp_path: Path) -> None:
    runner, saved = _runner(tmp_path)
    event, failure = runner._on_worker_event({"event": "step", "step": 1, "loss": 9.5, "accuracy": [0.5, 0.25, 2.0, float("nan")]})
    assert failure is None and event is not None and event.kind == "step"
    assert event.total_steps == 100 and event.loss == 9.5
    assert runner.drafter.steps == 1 and runner.drafter.curve[-1].accuracy == [0.5, 0.25, 1.0, 0.0]  # clamped, NaN read as 0
    runner._on_worker_event({"event": "val", "epoch": 0, "loss": 8.0, "accuracy": [0.4]})
    assert runner.drafter.validation[-1].accuracy == [0.4] and saved[-1].validation


def test_a_time_budget_counts_down(tmp_path: Path) -> None:
    runner, _ = _runner(tmp_path, steps=None, minutes=2)
    event, _ = runner._on_worker_event({"event": "step", "step": 3, "loss": 1.0, "accuracy": []})
    assert event is not None and event.deadline_s is not None and event.deadline_s <= 120


def test_an_error_event_is_the_runs_failure(tmp_path: Path) -> None:
    runner, _ = _runner(tmp_path)
    event, failure = runner._on_worker_event({"event": "error", "kind": "ValueError", "detail": "CUDA out of memory"})
    assert failure == "CUDA out of memory" and event is not None and event.kind == "error"


def test_versions_from_the_trainer_are_recorded(tmp_path: Path) -> None:
    runner, _ = _runner(tmp_path)
    event, _ = runner._on_worker_event({"event": "stage", "stage": "start", "speculators": "0.9.0", "torch": "2.11.0"})
    assert runner.drafter.versions == {"speculators": "0.9.0", "torch": "2.11.0"}
    assert event is not None and "speculators 0.9.0" in event.message


def test_the_server_extracts_the_drafter_layers_and_the_last_one(tmp_path: Path) -> None:
    runner, _ = _runner(tmp_path)
    assert extraction_config(runner.job)["draft_model_config"]["hf_config"]["eagle_aux_hidden_state_layer_ids"] == [2, 15, 27, 30]
    assert kv_transfer_config(runner.job)["kv_connector"] == "ExampleHiddenStatesConnector"
    spec = server_spec(runner.job)
    assert "--kv-transfer-config" in spec.extra_args and "PYTHONPATH" not in spec.env


def test_the_cpu_build_gets_the_cpu_connector_on_its_path(tmp_path: Path) -> None:
    runner, _ = _runner(tmp_path, cpu=True)
    config = kv_transfer_config(runner.job)
    assert config["kv_connector"] == "CpuHiddenStatesConnector" and config["kv_connector_module_path"] == "sa_cpu_hidden_states"
    assert Path(server_spec(runner.job).env["PYTHONPATH"], "sa_cpu_hidden_states.py").is_file()


def test_an_interrupted_checkpoint_resumes_mid_epoch(tmp_path: Path) -> None:
    interrupted = layout.checkpoints(tmp_path) / "interrupted"
    interrupted.mkdir(parents=True)
    (interrupted / "model.safetensors").write_bytes(b"w")
    drafter = TrainedDrafter(work_dir=str(tmp_path), steps=57, epochs=3, epoch_start_step=40)
    assert layout.resume_interrupted_checkpoint(tmp_path, drafter)
    state = (layout.checkpoints(tmp_path) / "2" / "training_state.json").read_text()
    assert '"epoch": 2' in state and '"local_step": 17' in state and '"global_step": 57' in state
    assert not interrupted.exists()
    assert not layout.resume_interrupted_checkpoint(tmp_path, drafter)


def test_a_compile_failure_before_the_first_step_retries_with_the_eager_kernels(tmp_path: Path) -> None:
    runner, _ = _runner(tmp_path)
    dynamo = "ListVariable(length=21) is already tracked for mutation. ... speculators_dot_losses_dot_fused"
    assert runner._compiled_path_failed(dynamo)
    assert not runner._compiled_path_failed("CUDA out of memory")
    runner._on_worker_event({"event": "step", "step": 1, "loss": 1.0, "accuracy": []})
    assert not runner._compiled_path_failed(dynamo)  # it trained: a later failure is not the kernels'
    cpu_runner, _ = _runner(tmp_path, cpu=True)
    assert not cpu_runner._compiled_path_failed(dynamo)  # the CPU already trains with the eager ones


def test_the_budget_clock_starts_at_the_first_step(tmp_path: Path) -> None:
    runner, _ = _runner(tmp_path, steps=None, minutes=2)
    assert runner._train_seconds() == 0.0  # set-up and compilation before the first step are not spent
    assert runner._spec("http://x")["seconds"] == 120
    spent = runner.drafter.model_copy(update={"train_seconds": 90.0})
    again, _ = _runner(tmp_path, steps=None, minutes=2)
    again.drafter = spent
    assert again._spec("http://x")["seconds"] == 30
