"""The engine-side worker's pure parts (it imports only the standard library until it trains)."""

from __future__ import annotations

import importlib.util
import io
import json
import logging
from pathlib import Path
from types import ModuleType

from specadvisor.training.worker import WORKER_SCRIPT


def _worker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("train_worker_under_test", WORKER_SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _spec(**changes: object) -> dict[str, object]:
    spec: dict[str, object] = {
        "speculator_type": "eagle3", "verifier": "/m", "data_dir": "/w/data", "endpoint": "http://127.0.0.1:1/v1",
        "hidden_states_dir": "/w/hs", "save_path": "/w/checkpoints", "total_seq_len": 2048, "train_data_ratio": 0.95,
        "ttt_steps": 3, "num_workers": 2, "seed": 0, "draft_vocab_size": 4096, "target_layer_ids": [2, 15, 27],
        "max_steps": 100, "cpu": False,
    }  # fmt: skip
    spec.update(changes)
    return spec


def test_the_worker_imports_nothing_from_specadvisor() -> None:
    text = WORKER_SCRIPT.read_text(encoding="utf-8")
    assert "specadvisor." not in text.replace("specadvisor (", "").split('"""', 2)[2]


def test_train_arguments_online_against_our_server() -> None:
    argv = _worker()._train_argv(_spec())
    joined = " ".join(argv)
    assert "--vllm-endpoint http://127.0.0.1:1/v1" in joined and "--on-missing generate" in joined
    assert "--target-layer-ids 2 15 27" in joined and "--draft-vocab-size 4096" in joined
    assert "--scheduler-total-steps 100" in joined and "--draft-attn-impl" not in joined


def test_a_time_budget_keeps_a_constant_rate_and_the_cpu_takes_sdpa_and_the_eager_loss() -> None:
    argv = " ".join(_worker()._train_argv(_spec(max_steps=None, cpu=True)))
    assert "--scheduler-type none" in argv
    assert "--draft-attn-impl sdpa" in argv and "--loss-implementation eager" in argv and "--hidden-states-dtype float32" in argv


def test_metric_records_become_step_and_val_events() -> None:
    worker = _worker()
    out = io.StringIO()
    worker._emit_stream = out
    handler = worker._MetricsToEvents()
    logger = logging.getLogger("speculators.metrics.test")
    logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(logging.INFO)
    train = {"loss": 7.5, "full_acc_1": 0.3, "full_acc_0": 0.6, "full_acc_2": 0.1, "cond_acc_0": 0.6}
    logger.info({"train": train, "epoch": 0, "global_step": 9, "lr": 0.001})
    logger.info({"val": {"loss_epoch": 7.0, "full_acc_0_epoch": 0.5, "full_acc_1_epoch": 0.25}, "epoch": 0})
    logger.info("not a metrics record")
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [e["event"] for e in events] == ["step", "val"]
    assert events[0]["step"] == 10 and events[0]["accuracy"] == [0.6, 0.3, 0.1] and events[0]["lr"] == 0.001
    assert events[1]["accuracy"] == [0.5, 0.25] and events[1]["loss"] == 7.0


def test_export_refuses_when_no_checkpoint_was_saved(tmp_path: Path) -> None:
    worker = _worker()
    try:
        worker._export({"save_path": str(tmp_path / "none"), "drafter_dir": str(tmp_path / "d")})
    except RuntimeError as exc:
        assert "saved no checkpoint" in str(exc)
    else:
        raise AssertionError("export without a checkpoint must fail")
