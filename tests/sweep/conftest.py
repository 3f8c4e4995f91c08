import pytest

from specadvisor.store import Store
from sweep_fakes import FakeServer


@pytest.fixture
def store(tmp_path):
    s = Store.open(tmp_path / "sweep.db")
    yield s
    s.close()


@pytest.fixture(autouse=True)
def _reset_fakes():
    FakeServer.instances.clear()
    yield
