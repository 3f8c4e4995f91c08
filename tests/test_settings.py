from pathlib import Path

from specadvisor import settings


def test_home_override_moves_data_and_engine(monkeypatch, tmp_path):
    monkeypatch.setenv("SPECADVISOR_HOME", str(tmp_path))
    monkeypatch.delenv("SPECADVISOR_ENGINE_DIR")
    p = settings.paths()
    assert p.database == tmp_path / "data" / "specadvisor.db"
    assert p.cpu_engine == tmp_path / "cache" / "engine-cpu"


def test_engine_dir_override_moves_only_the_engine(monkeypatch, tmp_path):
    monkeypatch.setenv("SPECADVISOR_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SPECADVISOR_ENGINE_DIR", str(tmp_path / "engine"))
    p = settings.paths()
    assert p.cpu_engine == tmp_path / "engine"
    assert p.database.is_relative_to(tmp_path / "home")


def test_tests_never_touch_the_real_user_data():
    assert not settings.paths().database.is_relative_to(Path.home() / ".local")
