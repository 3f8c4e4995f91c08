"""The fake-server spec factory for engine tests."""

from __future__ import annotations

import sys

import pytest

from engine_helpers import FAKE_VLLM
from specadvisor.engine import ServerSpec


@pytest.fixture
def fake_spec(tmp_path):
    """ServerSpec factory launching fake_vllm.py in the given mode."""

    def make(mode: str = "ok", *fake_args: str, **overrides) -> ServerSpec:
        fields = {
            "model": "fake-model",
            "engine_cmd": [sys.executable, str(FAKE_VLLM), "--mode", mode, *fake_args],
            "log_path": tmp_path / "logs" / f"{mode}.log",
            "ready_timeout_s": 30,
        }
        fields.update(overrides)
        return ServerSpec(**fields)

    return make
