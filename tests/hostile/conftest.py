"""Fixtures of the hostile-input suite (helpers live in hostile_helpers.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "store"))

from hostile_helpers import run_cli  # noqa: E402


@pytest.fixture
def cli(capsys):
    return lambda argv: run_cli(capsys, argv)
