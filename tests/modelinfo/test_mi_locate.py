"""Where config.json comes from: local folders, the HF cache, the Hub (mocked at the HTTP boundary), the catalog."""

import json
import shutil

import httpx
import pytest

from mi_helpers import model_dir, write_safetensors
from specadvisor.errors import InputError
from specadvisor.modelinfo import inspect_model
from specadvisor.modelinfo.locate import cached_snapshot, from_hub, hub_cache_dir, is_offline, locate
from specadvisor.modelinfo.weights import read_local


def _cache(root, repo_id, revisions, main=None):
    repo = root / f"models--{repo_id.replace('/', '--')}"
    for rev in revisions:
        snap = repo / "snapshots" / rev
        snap.mkdir(parents=True)
        shutil.copy(model_dir("Qwen3-8B") / "config.json", snap / "config.json")
    if main:
        (repo / "refs").mkdir(parents=True)
        (repo / "refs" / "main").write_text(main)
    return repo


def test_hf_cache_honours_hf_hub_cache_and_refs_main(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    _cache(tmp_path, "Qwen/Qwen3-8B", ["aaa111", "bbb222"], main="aaa111")
    p = inspect_model("Qwen/Qwen3-8B", offline=True)
    assert p.source == "hf-cache" and p.path.endswith("snapshots/aaa111")
    assert p.architecture == "Qwen3ForCausalLM" and p.params_b == pytest.approx(8.19, rel=0.01)


def test_hf_home_is_the_fallback_cache_root(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    assert hub_cache_dir() == tmp_path / "hf" / "hub"
    _cache(tmp_path / "hf" / "hub", "org/model", ["rev1"])
    assert cached_snapshot("org/model").name == "rev1"
    assert cached_snapshot("org/other") is None


def test_offline_flags():
    assert is_offline(None, {"HF_HUB_OFFLINE": "1"}) and is_offline(None, {"TRANSFORMERS_OFFLINE": "true"})
    assert not is_offline(None, {}) and is_offline(True, {}) and not is_offline(False, {"HF_HUB_OFFLINE": "1"})


def test_offline_unknown_to_cache_falls_back_to_the_catalog_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    p = inspect_model("Qwen/Qwen3-8B", offline=True)
    assert p.source == "catalog" and p.params_b == pytest.approx(8.2, rel=0.05)
    assert any("offline" in w and "catalog" in w for w in p.warnings)
    assert any(d.drafter == "RedHatAI/Qwen3-8B-speculator.eagle3" for d in p.drafters)


def test_env_offline_is_honoured(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    located, reasons = locate("Qwen/Qwen3-8B")
    assert located is None and any("offline" in r for r in reasons)


def test_nothing_anywhere_is_one_clear_input_error(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(InputError) as err:
        inspect_model("nobody/nothing-7b", offline=True)
    text = str(err.value)
    assert "nobody/nothing-7b" in text and "catalog" in text and "\n" not in text and err.value.exit_code == 2


@pytest.mark.parametrize("ref", ["./no/such/dir", "/definitely/not/here", "~/nope-model-dir"])
def test_missing_local_folder(ref):
    with pytest.raises(InputError, match="no such model folder"):
        inspect_model(ref, offline=True)


def test_folder_without_config_and_broken_config(tmp_path):
    with pytest.raises(InputError, match=r"has no config.json"):
        inspect_model(str(tmp_path), offline=True)
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(InputError, match="not readable JSON"):
        inspect_model(str(tmp_path), offline=True)
    (tmp_path / "config.json").write_text("[1, 2]")
    with pytest.raises(InputError, match="expected a JSON object"):
        inspect_model(str(tmp_path), offline=True)


def test_config_json_path_is_accepted_as_its_folder():
    p = inspect_model(str(model_dir("Qwen3-8B") / "config.json"), offline=True)
    assert p.architecture == "Qwen3ForCausalLM"


def _hub(routes):
    def handler(request):
        for suffix, response in routes.items():
            if request.url.path.endswith(suffix):
                return response(request) if callable(response) else response
        return httpx.Response(404)

    return httpx.Client(transport=httpx.MockTransport(handler))


def test_hub_config_and_index_are_fetched():
    config = json.loads((model_dir("DeepSeek-V3") / "config.json").read_text())
    index = json.loads((model_dir("DeepSeek-V3") / "model.safetensors.index.json").read_text())
    client = _hub(
        {
            "/deepseek-ai/DeepSeek-V3/resolve/main/config.json": httpx.Response(200, json=config),
            "/deepseek-ai/DeepSeek-V3/resolve/main/model.safetensors.index.json": httpx.Response(200, json=index),
        }
    )
    located = from_hub("deepseek-ai/DeepSeek-V3", client=client)
    assert located.source == "hub" and located.config["model_type"] == "deepseek_v3"
    assert "model.layers.61.eh_proj.weight" in located.weights.names


@pytest.mark.parametrize(
    "response, words",
    [
        (httpx.Response(401), "gated or private"),
        (httpx.Response(404), "no model"),
        (httpx.Response(500), "HTTP 500"),
        (httpx.Response(200, text="<html>"), "unreadable JSON"),
    ],
)
def test_hub_answers_become_reasons(tmp_path, monkeypatch, response, words):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    located, reasons = locate("org/some-model", offline=False, client=_hub({"config.json": response}))
    assert located is None and any(words in r for r in reasons)


def test_unreachable_hub_is_a_reason_not_a_crash(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))

    def refuse(request):
        raise httpx.ConnectError("connection refused", request=request)

    located, reasons = locate("org/some-model", offline=False, client=_hub({"config.json": refuse}))
    assert located is None and any("unreachable" in r for r in reasons)


def test_local_safetensors_headers_give_exact_counts_and_names(tmp_path):
    shutil.copy(model_dir("Qwen3-0.6B") / "config.json", tmp_path / "config.json")
    write_safetensors(tmp_path / "model.safetensors", {"model.embed_tokens.weight": [10, 4], "model.layers.0.mlp.up_proj.weight": [4, 8]})
    weights = read_local(tmp_path)
    assert weights.exact_params == 72 and "model.layers.0.mlp.up_proj.weight" in weights.names
    assert inspect_model(str(tmp_path), offline=True).params_b == pytest.approx(72e-9)


def test_truncated_safetensors_is_ignored(tmp_path):
    (tmp_path / "model.safetensors").write_bytes(b"\x10\x00")
    assert read_local(tmp_path) is None
