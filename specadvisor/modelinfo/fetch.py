"""Download the target and every drafter before the first server launch.

A `vllm serve` that downloads 60 GB of weights inside its start-up looks exactly like a hung server.
So the sweep fetches every checkpoint of its plan first, in parallel, with huggingface_hub (which
resumes partial files), reports progress as DownloadProgress events (the TUI and the CLI show
them), and checks the disk before the first byte. Local folders need nothing; offline
(HF_HUB_OFFLINE) nothing is fetched and vLLM reads the cache. The Hub sits behind `Hub` (the
process boundary): tests pass a fake, never the network.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from specadvisor.domain import DownloadProgress, Session
from specadvisor.errors import InputError
from specadvisor.modelinfo.locate import hub_cache_dir, is_offline, looks_like_path

DISK_MARGIN = 1.05  # 5% beyond the files themselves (lock files, temporary names)
POLL_S = 0.5


@dataclass(frozen=True)
class HubFile:
    name: str
    size: int | None
    cached: bool


class Hub(Protocol):
    """What the planner needs from the Hub."""

    def files(self, repo_id: str) -> list[HubFile]: ...
    def download(self, repo_id: str) -> str: ...


class HfHub:
    """The real Hub through huggingface_hub (imported only when something is fetched)."""

    def __init__(self, cache_dir: Path):
        self.cache_dir = cache_dir

    def files(self, repo_id: str) -> list[HubFile]:
        from huggingface_hub import snapshot_download

        infos = snapshot_download(repo_id, cache_dir=self.cache_dir, dry_run=True)
        return [HubFile(i.filename, i.file_size, not i.will_download) for i in infos]

    def download(self, repo_id: str) -> str:
        from huggingface_hub import snapshot_download

        return snapshot_download(repo_id, cache_dir=self.cache_dir)


@dataclass
class Download:
    repo_id: str
    missing_bytes: int
    total_bytes: int
    missing_files: int


@dataclass
class DownloadPlan:
    downloads: list[Download] = field(default_factory=list)  # only repos with something missing
    notes: list[tuple[str, str]] = field(default_factory=list)  # (ref, why nothing is fetched)

    @property
    def missing_bytes(self) -> int:
        return sum(d.missing_bytes for d in self.downloads)


def checkpoints(session: Session) -> list[str]:
    """Every checkpoint the plan's servers load: the target, then each drafter, once each."""
    refs = [session.model, session.drafter]
    refs += [(arm.speculative_config or {}).get("model") for arm in session.arms]
    return list(dict.fromkeys(r for r in refs if isinstance(r, str) and r))


def plan_downloads(refs: Iterable[str], hub: Hub, env: Mapping[str, str] | None = None) -> DownloadPlan:
    """What is missing from the cache, per repo. Local folders and offline runs fetch nothing (a
    note says why); a repo the Hub cannot list is noted too (vLLM will say why at start-up)."""
    env = os.environ if env is None else env
    plan = DownloadPlan()
    for ref in refs:
        if looks_like_path(ref) or Path(ref).expanduser().exists():
            plan.notes.append((ref, "a local folder: nothing to download"))
        elif is_offline(None, env):
            plan.notes.append((ref, "offline (HF_HUB_OFFLINE): not pre-downloaded; vLLM reads it from the Hugging Face cache"))
        else:
            try:
                files = hub.files(ref)
            except Exception as exc:  # noqa: BLE001 - network, 401/404, gated: vLLM's start-up will diagnose it
                plan.notes.append((ref, f"not pre-downloaded: the Hub did not list its files ({_reason(exc)})"))
                continue
            missing = [f for f in files if not f.cached]
            if missing:
                plan.downloads.append(Download(ref, sum(f.size or 0 for f in missing), sum(f.size or 0 for f in files), len(missing)))
            else:
                plan.notes.append((ref, "already in the Hugging Face cache"))
    return plan


def check_disk(plan: DownloadPlan, cache_dir: Path) -> None:
    """Refuse before any byte when the cache's disk cannot hold what is missing."""
    need = int(plan.missing_bytes * DISK_MARGIN)
    if need == 0:
        return
    where = cache_dir
    while not where.exists() and where != where.parent:
        where = where.parent
    free = shutil.disk_usage(where).free
    if need > free:
        repos = ", ".join(d.repo_id for d in plan.downloads)
        raise InputError(
            f"not enough disk space to download {repos}: {_gb(need)} needed, {_gb(free)} free in {cache_dir}",
            hint="free some space or point HF_HUB_CACHE / HF_HOME at a larger disk",
        )


def fetch(plan: DownloadPlan, hub: Hub, cache_dir: Path, on_event: Callable[[DownloadProgress], None], *, max_parallel: int = 4) -> None:
    """Download every planned repo in parallel; progress from the bytes landing in each repo's blob
    folder (partial files included), so it works whatever huggingface_hub's progress bars do. A
    failed repo is reported and the others go on: its server will fail at start-up with the cause."""

    def one(download: Download) -> None:
        blobs = cache_dir / f"models--{download.repo_id.replace('/', '--')}" / "blobs"
        start = _size(blobs)
        finished = threading.Event()

        def watch() -> None:
            while not finished.wait(POLL_S):
                done = min(max(0, _size(blobs) - start), download.missing_bytes)
                on_event(DownloadProgress(repo_id=download.repo_id, done_bytes=done, total_bytes=download.missing_bytes))

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        try:
            hub.download(download.repo_id)
        except Exception as exc:  # noqa: BLE001 - a failure here is reported, never raised
            on_event(DownloadProgress(repo_id=download.repo_id, status="failed", total_bytes=download.missing_bytes, message=_reason(exc)))
            return
        finally:
            finished.set()
            watcher.join()
        on_event(DownloadProgress(repo_id=download.repo_id, status="done", done_bytes=download.missing_bytes, total_bytes=download.missing_bytes))

    for d in plan.downloads:
        on_event(DownloadProgress(repo_id=d.repo_id, done_bytes=0, total_bytes=d.missing_bytes, message=f"{d.missing_files} files, {_gb(d.missing_bytes)}"))
    if plan.downloads:
        with ThreadPoolExecutor(max_workers=max(1, min(max_parallel, len(plan.downloads)))) as pool:
            list(pool.map(one, plan.downloads))


async def prefetch(
    refs: Iterable[str], emit: Callable[[DownloadProgress], None], *, hub: Hub | None = None, env: Mapping[str, str] | None = None
) -> DownloadPlan:
    """Plan, check the disk, fetch; events reach `emit` on the calling loop. Raises InputError when
    the disk is too small (before anything is written)."""
    loop = asyncio.get_running_loop()
    env = os.environ if env is None else env
    cache_dir = hub_cache_dir(dict(env))
    hub = hub or HfHub(cache_dir)
    refs = list(refs)

    def work() -> DownloadPlan:
        plan = plan_downloads(refs, hub, env)
        for ref, note in plan.notes:
            loop.call_soon_threadsafe(emit, DownloadProgress(repo_id=ref, status="skipped", message=note))
        check_disk(plan, cache_dir)
        fetch(plan, hub, cache_dir, forward)
        return plan

    def forward(event: DownloadProgress) -> None:
        loop.call_soon_threadsafe(emit, event)

    return await asyncio.to_thread(work)


def _size(folder: Path) -> int:
    try:
        return sum(entry.stat().st_size for entry in os.scandir(folder) if entry.is_file())
    except OSError:
        return 0


def _gb(n: int) -> str:
    return f"{n / 1e9:.1f} GB" if n >= 1e8 else f"{n / 1e6:.1f} MB"


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text[:160]}" if text else type(exc).__name__
