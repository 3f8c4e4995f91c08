from __future__ import annotations

import pytest

from specadvisor.store import Store


@pytest.fixture
def store(tmp_path):
    opened = Store.open(tmp_path / "sessions.db")
    yield opened
    opened.close()
