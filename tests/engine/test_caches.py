"""Compile caches shared across arms, and cold/warm start-up read from vLLM's log."""

from specadvisor.engine.caches import cache_env, startup_cache
from specadvisor.engine.spec import ServerSpec, server_env


def test_caches_default_under_specadvisors_cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECADVISOR_HOME", str(tmp_path))
    monkeypatch.delenv("VLLM_CACHE_ROOT", raising=False)
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    env = server_env(ServerSpec(model="m"))
    assert env["VLLM_CACHE_ROOT"].startswith(str(tmp_path / "cache"))
    assert env["TORCHINDUCTOR_CACHE_DIR"].startswith(str(tmp_path / "cache"))
    # every arm gets the same folders: that is what makes later launches warm
    assert server_env(ServerSpec(model="other", env={"X": "1"}))["VLLM_CACHE_ROOT"] == env["VLLM_CACHE_ROOT"]


def test_user_set_cache_locations_are_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECADVISOR_HOME", str(tmp_path))
    monkeypatch.setenv("VLLM_CACHE_ROOT", "/mine/vllm")
    assert "VLLM_CACHE_ROOT" not in cache_env()
    assert server_env(ServerSpec(model="m", env={"TORCHINDUCTOR_CACHE_DIR": "/spec/ind"}))["TORCHINDUCTOR_CACHE_DIR"] == "/spec/ind"
    assert server_env(ServerSpec(model="m"))["VLLM_CACHE_ROOT"] == "/mine/vllm"


def test_startup_cache_from_vllm_log_lines():
    cold = [
        "INFO [backends.py:215] Compiling a graph for dynamic shape takes 21.4 s",
        "INFO [monitor.py:34] torch.compile takes 27.1 s in total",
    ]
    warm = ["INFO [backends.py:160] Directly load the compiled graph(s) for dynamic shape from the cache, took 3.1 s"]
    assert startup_cache(cold) == "cold"
    assert startup_cache(warm) == "warm"
    assert startup_cache(["INFO Starting vLLM API server", "enforce_eager=True"]) is None
