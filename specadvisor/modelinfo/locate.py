"""Find a checkpoint's config.json: a local folder, the Hugging Face cache, or the Hub.

The Hub is optional: offline (HF_HUB_OFFLINE=1 or no network) we say so and the caller falls back
to the rule base's catalog. Hub ids never touch the network when the cache already has them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from specadvisor.errors import InputError
from specadvisor.modelinfo.weights import INDEX_FILE, WeightInfo, from_index, read_local

HUB_TIMEOUT_S = 4.0
TRUTHY = {"1", "true", "yes", "on"}


@dataclass
class Located:
    source: Literal["local", "hf-cache", "hub"]
    config: dict[str, Any]
    path: str | None = None
    weights: WeightInfo | None = None
    notes: list[str] = field(default_factory=list)


class HubUnavailable(Exception):
    """The Hub could not answer (offline, timeout, 401/404); the message says which."""


def hub_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("HF_HUB_CACHE"):
        return Path(env["HF_HUB_CACHE"]).expanduser()
    if env.get("HF_HOME"):
        return Path(env["HF_HOME"]).expanduser() / "hub"
    return Path("~/.cache/huggingface/hub").expanduser()


def is_offline(offline: bool | None, env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    if offline is not None:
        return offline
    return env.get("HF_HUB_OFFLINE", "").lower() in TRUTHY or env.get("TRANSFORMERS_OFFLINE", "").lower() in TRUTHY


def looks_like_path(ref: str) -> bool:
    """A ref the user meant as a folder: absolute, relative with ./ or ~, or deeper than org/name."""
    return ref.startswith(("/", "./", "../", "~", ".\\")) or ref.count("/") > 1 or (os.sep != "/" and os.sep in ref)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{path}: not readable JSON ({exc})", hint="check the file or download the checkpoint again") from exc
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a JSON object", hint="point at a Hugging Face checkpoint folder")
    return data


def from_directory(directory: Path, source: Literal["local", "hf-cache"] = "local") -> Located:
    if directory.is_file() and directory.name == "config.json":
        directory = directory.parent
    config_path = directory / "config.json"
    if not config_path.is_file():
        raise InputError(f"{directory} has no config.json", hint="point at the folder that holds the checkpoint's config.json")
    return Located(source=source, config=_read_json(config_path), path=str(directory), weights=read_local(directory))


def cached_snapshot(repo_id: str, cache: Path | None = None) -> Path | None:
    """The snapshot folder for `repo_id` in the HF cache: refs/main's revision, else the newest one."""
    repo_dir = (cache or hub_cache_dir()) / f"models--{repo_id.replace('/', '--')}"
    snapshots = repo_dir / "snapshots"
    if not snapshots.is_dir():
        return None
    try:
        revision = (repo_dir / "refs" / "main").read_text().strip()
    except OSError:
        revision = ""
    if revision and (snapshots / revision / "config.json").is_file():
        return snapshots / revision
    candidates = [s for s in snapshots.iterdir() if (s / "config.json").is_file()]
    return max(candidates, key=lambda s: s.stat().st_mtime) if candidates else None


def fetch_hub_json(repo_id: str, filename: str, *, timeout_s: float = HUB_TIMEOUT_S, client: Any = None) -> dict[str, Any] | None:
    """A JSON file from the Hub; None on 404 (file absent); HubUnavailable when the Hub cannot answer."""
    import httpx  # only inspection talks to the network; `detect` never imports httpx

    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
    token = os.environ.get("HF_TOKEN")  # sent for gated repos, never stored
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    url = f"{endpoint}/{repo_id}/resolve/main/{filename}"
    try:
        if client is None:
            with httpx.Client(timeout=timeout_s, follow_redirects=True) as own:
                response = own.get(url, headers=headers)
        else:
            response = client.get(url, headers=headers)
    except httpx.HTTPError as exc:
        raise HubUnavailable(f"Hugging Face Hub unreachable ({type(exc).__name__})") from exc
    if response.status_code == 404:
        if filename == "config.json":
            raise HubUnavailable(f"no model {repo_id!r} on the Hub (HTTP 404)")
        return None
    if response.status_code in (401, 403):
        raise HubUnavailable(f"{repo_id} is gated or private on the Hub (HTTP {response.status_code}); set HF_TOKEN or download it")
    if response.status_code != 200:
        raise HubUnavailable(f"the Hub answered HTTP {response.status_code} for {repo_id}/{filename}")
    try:
        data = response.json()
    except ValueError as exc:
        raise HubUnavailable(f"the Hub sent unreadable JSON for {repo_id}/{filename}") from exc
    return data if isinstance(data, dict) else None


def from_hub(repo_id: str, *, timeout_s: float = HUB_TIMEOUT_S, client: Any = None) -> Located:
    config = fetch_hub_json(repo_id, "config.json", timeout_s=timeout_s, client=client)
    if config is None:
        raise HubUnavailable(f"the Hub has no config.json for {repo_id}")
    index = fetch_hub_json(repo_id, INDEX_FILE, timeout_s=timeout_s, client=client)
    return Located(source="hub", config=config, path=None, weights=from_index(index) if index else None)


def locate(ref: str, *, offline: bool | None = None, client: Any = None) -> tuple[Located | None, list[str]]:
    """The checkpoint's config, or None with the reasons each source failed (for the catalog fallback)."""
    path = Path(ref).expanduser()
    if path.exists():
        return from_directory(path), []
    if looks_like_path(ref):
        raise InputError(f"no such model folder: {ref}", hint="check the path, or give a Hugging Face id like Qwen/Qwen3-8B")
    reasons: list[str] = []
    snapshot = cached_snapshot(ref)
    if snapshot is not None:
        located = from_directory(snapshot, source="hf-cache")
        located.notes.append(f"read from the Hugging Face cache ({snapshot})")
        return located, []
    reasons.append(f"not in the Hugging Face cache ({hub_cache_dir()})")
    if is_offline(offline):
        reasons.append("Hub not consulted (offline: HF_HUB_OFFLINE=1 or --offline)")
        return None, reasons
    try:
        return from_hub(ref, client=client), []
    except HubUnavailable as exc:
        reasons.append(str(exc))
    return None, reasons
