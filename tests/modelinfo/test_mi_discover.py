"""Hub drafter discovery, against recorded responses of the shape the Hub returns (no network)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from specadvisor.domain import ModelProfile
from specadvisor.modelinfo.discover import STATUS, discover_drafters

HUB = Path(__file__).resolve().parents[1] / "fixtures" / "hub"


class Response:
    def __init__(self, status: int, body):
        self.status_code, self._body = status, body

    def json(self):
        return self._body


class RecordedHub:
    """Answers GET /api/models?filter=base_model:... and /<repo>/resolve/main/config.json from fixtures."""

    def __init__(self):
        self.models = json.loads((HUB / "models_base_model_qwen3-8b.json").read_text())
        self.configs = json.loads((HUB / "configs.json").read_text())
        self.calls: list[str] = []

    def get(self, url, params=None, headers=None):
        self.calls.append(url)
        if url.endswith("/api/models"):
            assert params["filter"] == "base_model:Qwen/Qwen3-8B"
            return Response(200, self.models)
        repo = url.split("huggingface.co/", 1)[1].split("/resolve/", 1)[0]
        if "gated" in repo:
            return Response(401, {"error": "gated"})
        return Response(200, self.configs[repo]) if repo in self.configs else Response(404, {})


TARGET = ModelProfile(id="Qwen/Qwen3-8B", source="hub", vocab_size=151936)


def test_discovery_keeps_only_verified_drafters_for_the_target(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    hub = RecordedHub()
    found = discover_drafters(TARGET, offline=False, client=hub, directory=tmp_path, today=dt.date(2026, 12, 1))
    by_id = {d.drafter: d for d in found.drafters}
    # kept: a speculators EAGLE-3 for this verifier, and a DFlash recognised from its architecture
    assert set(by_id) == {"RedHatAI/Qwen3-8B-speculator.eagle3", "someone/qwen3-8b-dflash-b16-chat"}
    assert by_id["someone/qwen3-8b-dflash-b16-chat"].method == "dflash" and by_id["someone/qwen3-8b-dflash-b16-chat"].parallel_drafting
    assert all(not d.reviewed and STATUS in d.source and d.date == "2026-12-01" for d in found.drafters)
    # left out: another verifier, a gated repo, and a plain fine-tune (never even asked for its config)
    assert not any("support-finetune" in call for call in hub.calls)


def test_discovery_is_cached_with_its_date_and_used_offline(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    discover_drafters(TARGET, offline=False, client=RecordedHub(), directory=tmp_path, today=dt.date(2026, 12, 1))
    cached = json.loads(next(tmp_path.glob("*.json")).read_text())
    assert cached["date"] == "2026-12-01" and len(cached["drafters"]) == 2

    class NoNetwork:
        def get(self, *a, **k):
            raise AssertionError("the cache must answer")

    again = discover_drafters(
        TARGET, offline=True, client=NoNetwork(), directory=tmp_path, today=dt.date(2027, 3, 1), known={"RedHatAI/Qwen3-8B-speculator.eagle3"}
    )
    assert again.from_cache and [d.drafter for d in again.drafters] == ["someone/qwen3-8b-dflash-b16-chat"]
    assert "2026-12-01" in again.note


def test_offline_without_cache_is_the_catalog_only(tmp_path):
    found = discover_drafters(TARGET, offline=True, directory=tmp_path)
    assert found.drafters == [] and "catalog only" in found.note


def test_unreachable_hub_is_said_not_raised(tmp_path, monkeypatch):
    import httpx

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)

    class Down:
        def get(self, *a, **k):
            raise httpx.ConnectError("no route")

    found = discover_drafters(TARGET, offline=False, client=Down(), directory=tmp_path)
    assert found.drafters == [] and "unreachable" in found.note and not list(tmp_path.glob("*.json"))


def test_a_discovered_drafter_becomes_a_candidate_marked_unreviewed(tmp_path, monkeypatch):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "advisor"))
    from advisor_helpers import gpus
    from specadvisor.advisor import advise
    from specadvisor.domain import Workload

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    found = discover_drafters(ModelProfile(id="acme/support-8b", source="hub"), offline=False, client=RecordedHubFor("acme/support-8b"), directory=tmp_path)
    model = ModelProfile(id="acme/support-8b", source="hub", params_b=8.2, drafters=found.drafters)
    advice = advise(gpus("H100"), model, Workload())
    dflash = next(c for c in advice.candidates if c.id == "dflash")
    assert dflash.drafter == "someone/qwen3-8b-dflash-b16-chat"
    assert any("unreviewed" in w for w in dflash.warnings)


class RecordedHubFor(RecordedHub):
    """The same recorded answers for a renamed target whose DFlash config names it."""

    def __init__(self, target: str):
        super().__init__()
        self.target = target
        self.configs["someone/qwen3-8b-dflash-b16-chat"]["target_model"] = target

    def get(self, url, params=None, headers=None):
        if url.endswith("/api/models"):
            assert params["filter"] == f"base_model:{self.target}"
            return Response(200, self.models)
        return super().get(url, params, headers)
