"""Find drafters published on the Hugging Face Hub for a target, beyond the curated catalog.

The Hub lists models whose card names the target as `base_model`; a candidate counts only once
its own config.json reads as a drafter vLLM can serve (speculators, EAGLE, DFlash, DSpark, an MTP
assistant) trained for this target. Results are cached with their date and always labelled
"discovered, unreviewed": nobody has checked their acceptance. Offline, only the cache answers.
This speaks the Hub's REST API through httpx, as the rest of model inspection does (the same
`/api/models` query huggingface_hub's `list_models` sends), so it adds no dependency.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from collections.abc import Set
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specadvisor.domain import DrafterRef, ModelProfile
from specadvisor.modelinfo.drafter import check_compatibility, read_drafter
from specadvisor.modelinfo.locate import HUB_TIMEOUT_S, HubUnavailable, fetch_hub_json, is_offline
from specadvisor.rulebase import registry

STATUS = "discovered, unreviewed"
TTL_DAYS = 7
MAX_CANDIDATES = 40  # config.json reads per discovery: the Hub is asked politely
GENERIC_HINTS = ("speculator", "assistant", "draft")
"""Words in a repo id or its tags that make it worth reading its config; method names come from the registry."""


@dataclass
class Discovery:
    target: str
    date: str  # ISO date the Hub was asked
    drafters: list[DrafterRef] = field(default_factory=list)
    from_cache: bool = False
    note: str = ""


def cache_dir() -> Path:
    from specadvisor.settings import paths

    return paths().cache / "discovered-drafters"


def _cache_file(directory: Path, target: str) -> Path:
    return directory / (re.sub(r"[^A-Za-z0-9._-]+", "--", target.strip().lower()) + ".json")


def _read_cache(path: Path) -> Discovery | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Discovery(
            target=data["target"],
            date=data["date"],
            from_cache=True,
            drafters=[DrafterRef(**row) for row in data.get("drafters", [])],
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None  # a damaged cache is re-asked, never trusted


def _write_cache(path: Path, found: Discovery) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    payload = {"target": found.target, "date": found.date, "drafters": [row.model_dump() for row in found.drafters]}
    tmp.write_text(json.dumps(payload, indent=1), encoding="utf-8")
    tmp.replace(path)  # never a half-written cache


def list_hub_models(target: str, *, client: Any = None, timeout_s: float = HUB_TIMEOUT_S) -> list[dict[str, Any]]:
    """Models whose card names `target` as base_model (GET /api/models?filter=base_model:<target>)."""
    import httpx

    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
    token = os.environ.get("HF_TOKEN")  # sent, never stored
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    params = {"filter": f"base_model:{target}", "limit": "100", "full": "false"}
    try:
        if client is None:
            with httpx.Client(timeout=timeout_s, follow_redirects=True) as own:
                response = own.get(f"{endpoint}/api/models", params=params, headers=headers)
        else:
            response = client.get(f"{endpoint}/api/models", params=params, headers=headers)
    except httpx.HTTPError as exc:
        raise HubUnavailable(f"Hugging Face Hub unreachable ({type(exc).__name__})") from exc
    if response.status_code != 200:
        raise HubUnavailable(f"the Hub answered HTTP {response.status_code} listing models based on {target}")
    try:
        rows = response.json()
    except ValueError as exc:
        raise HubUnavailable("the Hub sent an unreadable model list") from exc
    return [row for row in rows if isinstance(row, dict)] if isinstance(rows, list) else []


def _hints() -> set[str]:
    hints = set(GENERIC_HINTS)
    for spec in registry.default_rulebase_methods():
        if spec.needs_drafter or spec.uses_native_heads:
            hints |= {spec.id.lower(), *spec.speculators_types, *spec.architecture_hints}
    return hints


def _looks_like_drafter(row: dict[str, Any]) -> bool:
    text = " ".join([str(row.get("id") or row.get("modelId") or ""), *map(str, row.get("tags") or [])]).lower()
    return any(hint in text for hint in _hints())


def _verify(repo_id: str, target: ModelProfile, config: dict[str, Any], date: str) -> DrafterRef | None:
    """A DrafterRef when the config reads as a servable drafter made for this target; else None."""
    drafter = read_drafter(repo_id, config, None)
    speculators = isinstance(config.get("speculators_model_type"), str)
    recognised = speculators or registry.from_architecture(list(config.get("architectures") or []), config.get("model_type"))[0] is not None
    if not drafter.servable or drafter.method is None or not recognised:
        return None
    checked = check_compatibility(drafter, target)
    if checked.compatible is False:
        return None
    return DrafterRef(
        drafter=repo_id,
        method=drafter.method,
        parallel_drafting=drafter.parallel_drafting,
        source=f"https://huggingface.co/{repo_id} ({STATUS})",
        date=date,
        reviewed=False,
    )


def discover_drafters(
    target: ModelProfile,
    *,
    offline: bool | None = None,
    client: Any = None,
    directory: Path | None = None,
    today: dt.date | None = None,
    known: Set[str] = frozenset(),
) -> Discovery:
    """Drafters on the Hub for `target` that the catalog does not list (`known`), cached for TTL_DAYS."""
    directory = directory or cache_dir()
    today = today or dt.date.today()
    path = _cache_file(directory, target.id)
    cached = _read_cache(path)
    fresh = cached is not None and (today - dt.date.fromisoformat(cached.date)).days < TTL_DAYS
    if cached is not None and (fresh or is_offline(offline)):
        cached.drafters = [d for d in cached.drafters if d.drafter not in known]
        cached.note = f"Hub drafters from the cache ({cached.date})"
        return cached
    if is_offline(offline):
        return Discovery(target.id, today.isoformat(), note="offline: the curated catalog only")
    try:
        rows = list_hub_models(target.id, client=client)
    except HubUnavailable as exc:
        return Discovery(target.id, today.isoformat(), note=f"no Hub discovery ({exc}): the curated catalog only")
    found = Discovery(target.id, today.isoformat())
    for row in [r for r in rows if _looks_like_drafter(r)][:MAX_CANDIDATES]:
        repo_id = str(row.get("id") or row.get("modelId") or "")
        if not repo_id or repo_id == target.id:
            continue
        try:
            config = fetch_hub_json(repo_id, "config.json", client=client)
        except HubUnavailable:
            continue  # gated or gone: not verifiable, so not listed
        ref = _verify(repo_id, target, config, found.date) if config else None
        if ref is not None:
            found.drafters.append(ref)
    _write_cache(path, found)
    found.drafters = [d for d in found.drafters if d.drafter not in known]
    found.note = f"{len(found.drafters)} drafter(s) discovered on the Hub ({found.date}), unreviewed"
    return found
