"""The download planner and the parallel pre-download, with a fake Hub at the process boundary
(it lists files and writes blobs into a real temporary cache folder; no network)."""

from __future__ import annotations

import time

import pytest

from specadvisor.domain import Arm, DownloadProgress, Session
from specadvisor.errors import InputError
from specadvisor.modelinfo import fetch as fetch_mod
from specadvisor.modelinfo.fetch import HubFile, check_disk, checkpoints, plan_downloads, prefetch


class FakeHub:
    """repo -> [(name, size, cached)]; download writes the missing bytes in chunks into blobs/."""

    def __init__(self, cache, repos, chunks=4, delay=0.05, fail=()):
        self.cache, self.repos, self.chunks, self.delay, self.fail = cache, repos, chunks, delay, set(fail)
        self.listed: list[str] = []
        self.active: dict[str, tuple[float, float]] = {}

    def files(self, repo_id):
        self.listed.append(repo_id)
        if repo_id not in self.repos:
            raise FileNotFoundError(f"404 Client Error: Repository Not Found for url: .../{repo_id}")
        return [HubFile(n, s, c) for n, s, c in self.repos[repo_id]]

    def download(self, repo_id):
        start = time.monotonic()
        if repo_id in self.fail:
            raise ConnectionError("connection reset")
        blobs = self.cache / f"models--{repo_id.replace('/', '--')}" / "blobs"
        blobs.mkdir(parents=True, exist_ok=True)
        for name, size, cached in self.repos[repo_id]:
            if cached:
                continue
            part = blobs / f"{name}.incomplete"
            for _ in range(self.chunks):
                with part.open("ab") as fh:
                    fh.write(b"x" * (size // self.chunks))
                time.sleep(self.delay)
            part.rename(blobs / name)
        self.active[repo_id] = (start, time.monotonic())
        return str(blobs.parent)


@pytest.fixture
def hub_env(tmp_path, monkeypatch):
    monkeypatch.setattr(fetch_mod, "POLL_S", 0.02)
    cache = tmp_path / "hub"
    return cache, {"HF_HUB_CACHE": str(cache)}


def test_checkpoints_are_the_target_then_each_drafter_once():
    arms = [
        Arm(id="baseline", label="b"),
        Arm(id="e3", label="e", method="eagle3", n=3, speculative_config={"method": "eagle3", "model": "org/drafter", "num_speculative_tokens": 3}),
        Arm(id="e5", label="e", method="eagle3", n=5, speculative_config={"method": "eagle3", "model": "org/drafter", "num_speculative_tokens": 5}),
        Arm(id="ng", label="n", method="ngram", n=2, speculative_config={"method": "ngram", "num_speculative_tokens": 2}),
    ]
    assert checkpoints(Session(model="org/target", drafter="org/drafter", arms=arms)) == ["org/target", "org/drafter"]


def test_plan_counts_missing_bytes_and_notes_what_is_not_fetched(tmp_path, hub_env):
    cache, env = hub_env
    local = tmp_path / "my-model"
    local.mkdir()
    hub = FakeHub(
        cache,
        {
            "org/target": [("config.json", 1_000, True), ("model.safetensors", 4_000_000, False)],
            "org/cached": [("config.json", 1_000, True)],
        },
    )
    plan = plan_downloads([str(local), "org/target", "org/cached", "org/missing"], hub, env)
    assert [(d.repo_id, d.missing_bytes, d.total_bytes, d.missing_files) for d in plan.downloads] == [("org/target", 4_000_000, 4_001_000, 1)]
    notes = dict(plan.notes)
    assert "local folder" in notes[str(local)]
    assert "already in the Hugging Face cache" in notes["org/cached"]
    assert "404" in notes["org/missing"]
    assert str(local) not in hub.listed  # a local folder never reaches the Hub


def test_offline_fetches_nothing_and_says_so(hub_env):
    cache, env = hub_env
    hub = FakeHub(cache, {"org/target": [("model.safetensors", 10, False)]})
    plan = plan_downloads(["org/target"], hub, {**env, "HF_HUB_OFFLINE": "1"})
    assert plan.downloads == [] and hub.listed == []
    assert "HF_HUB_OFFLINE" in dict(plan.notes)["org/target"]


def test_a_disk_too_small_is_refused_before_any_byte(hub_env):
    cache, env = hub_env
    hub = FakeHub(cache, {"org/huge": [("model-00001.safetensors", 10**18, False)]})
    plan = plan_downloads(["org/huge"], hub, env)
    with pytest.raises(InputError) as caught:
        check_disk(plan, cache)
    line = caught.value.one_line()
    assert "not enough disk space to download org/huge" in line and "free" in line and "HF_HUB_CACHE" in line
    assert not cache.exists()  # nothing written


async def test_prefetch_downloads_in_parallel_with_progress(hub_env):
    cache, env = hub_env
    hub = FakeHub(
        cache,
        {
            "org/target": [("config.json", 100, True), ("model.safetensors", 400_000, False)],
            "org/drafter": [("model.safetensors", 200_000, False)],
        },
        chunks=5,
        delay=0.06,
    )
    events: list[DownloadProgress] = []
    plan = await prefetch(["org/target", "org/drafter"], events.append, hub=hub, env=env)
    assert {d.repo_id for d in plan.downloads} == {"org/target", "org/drafter"}
    for repo, size in (("org/target", 400_000), ("org/drafter", 200_000)):
        mine = [e for e in events if e.repo_id == repo]
        assert mine[0].status == "downloading" and mine[0].done_bytes == 0 and mine[0].total_bytes == size
        assert mine[-1].status == "done" and mine[-1].done_bytes == size
        partial = [e.done_bytes for e in mine if e.status == "downloading" and 0 < e.done_bytes < size]
        assert partial, f"no progress between 0 and {size} for {repo}"
        assert partial == sorted(partial)
    (a0, a1), (b0, b1) = hub.active["org/target"], hub.active["org/drafter"]
    assert a0 < b1 and b0 < a1  # the two downloads overlapped in time


async def test_one_failed_download_is_reported_and_the_others_finish(hub_env):
    cache, env = hub_env
    hub = FakeHub(cache, {"org/a": [("w", 1000, False)], "org/b": [("w", 1000, False)]}, fail={"org/b"}, delay=0.01)
    events: list[DownloadProgress] = []
    await prefetch(["org/a", "org/b"], events.append, hub=hub, env=env)
    final = {e.repo_id: e for e in events}
    assert final["org/a"].status == "done"
    assert final["org/b"].status == "failed" and "connection reset" in final["org/b"].message


async def test_prefetch_refuses_a_full_disk_with_no_download(hub_env):
    cache, env = hub_env
    hub = FakeHub(cache, {"org/huge": [("w", 10**18, False)]})
    events: list[DownloadProgress] = []
    with pytest.raises(InputError, match="not enough disk space"):
        await prefetch(["org/huge"], events.append, hub=hub, env=env)
    assert hub.active == {} and not any(e.status == "downloading" for e in events)
