"""The two small server calls a measurement needs besides load and /metrics."""

from __future__ import annotations

import httpx


def _headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


async def reset_prefix_cache(base_url: str, client: httpx.AsyncClient, api_key: str | None = None) -> bool:
    """POST /reset_prefix_cache so that a trial does not reuse the previous trial's cached prefixes.

    False when the server does not offer it (vLLM adds it only with VLLM_SERVER_DEV_MODE=1).
    """
    try:
        response = await client.post(base_url.rstrip("/") + "/reset_prefix_cache", headers=_headers(api_key), timeout=30.0)
    except httpx.HTTPError:
        return False
    return response.status_code == 200


async def server_version(base_url: str, client: httpx.AsyncClient, api_key: str | None = None) -> str | None:
    """vLLM's GET /version, recorded with every result; None when the server does not say."""
    try:
        response = await client.get(base_url.rstrip("/") + "/version", headers=_headers(api_key), timeout=10.0)
        if response.status_code == 200:
            version = response.json().get("version")
            return str(version) if version else None
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    return None
