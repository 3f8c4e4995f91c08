"""Attach mode: measure a vLLM server someone else runs, and small calls shared with launched servers.

The API key is read from an environment variable the user names (e.g. VLLM_API_KEY) at the moment
of each request; it is never stored, logged or put into an error message.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections import deque
from typing import Any

import httpx
from pydantic import BaseModel

from specadvisor.errors import EngineError, InputError
from specadvisor.redact import remember_secret, remember_url

_TIMEOUT = httpx.Timeout(10.0)
# Every call has a total deadline and a size limit, not only a timeout between bytes: an endpoint
# that streams a body forever must not hang the sweep or fill memory.
DEADLINE_S = 30.0
MAX_BODY_BYTES = 16 * 1024 * 1024
# Identifying a server (its model, version, /server_info, /metrics) has one total deadline too: five
# calls of 30 s each must not hold a sweep whose --time-limit is 1 minute.
IDENTIFY_DEADLINE_S = 60.0


class _Unanswered(Exception):
    """The body did not end within DEADLINE_S or MAX_BODY_BYTES."""


async def _bounded(client: httpx.AsyncClient, method: str, path: str, params: dict[str, str] | None = None, *, read: bool = True) -> tuple[int, bytes]:
    body = bytearray()
    try:
        async with asyncio.timeout(DEADLINE_S), client.stream(method, path, params=params) as response:
            if read:
                async for piece in response.aiter_bytes():
                    body += piece
                    if len(body) > MAX_BODY_BYTES:
                        raise _Unanswered(f"answered more than {MAX_BODY_BYTES >> 20} MiB")
            return response.status_code, bytes(body)
    except TimeoutError as exc:
        raise _Unanswered(f"did not answer within {DEADLINE_S:.0f} s") from exc


def _json(body: bytes) -> object:
    try:
        return json.loads(body)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested deeper than the parser goes
        raise ValueError("not JSON") from exc


class EndpointInfo(BaseModel):
    url: str
    version: str | None = None
    served_model: str | None = None
    max_model_len: int | None = None
    speculative_config: dict[str, Any] | None = None  # from /server_info (needs VLLM_SERVER_DEV_MODE=1)
    server_info_available: bool = False
    server_info_error: str | None = None  # /server_info gave no answer (a timeout): unknown, not "not exposed"
    device: str | None = None  # /server_info's device config (cuda, rocm, cpu) when exposed
    tensor_parallel_size: int | None = None
    python: str | None = None  # the server's Python, from /metrics' python_info labels
    cache_config: dict[str, str] = {}  # /metrics' vllm:cache_config_info labels (gpu_memory_utilization, block_size...)


def _headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


class Endpoint:
    """A running OpenAI-compatible vLLM server at `url`."""

    def __init__(self, url: str, api_key_env: str | None = None):
        url = url.strip().rstrip("/")
        if url.endswith("/v1"):
            url = url[: -len("/v1")]
        if not url.startswith(("http://", "https://")):
            raise InputError(f"endpoint {url!r} is not an http(s) URL", hint="use e.g. http://127.0.0.1:8000")
        if api_key_env is not None and api_key_env not in os.environ:
            raise InputError(f"environment variable {api_key_env} is not set", hint=f"export {api_key_env}=<key> or omit --api-key-env")
        remember_url(url)  # a password with a space or a / is removed wherever it is echoed
        self.url = url
        self.api_key_env = api_key_env

    @property
    def api_key(self) -> str | None:
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        remember_secret(key)  # an endpoint may echo it ("Incorrect API key provided: <key>")
        return key

    def headers(self) -> dict[str, str]:
        return _headers(self.api_key)

    def __repr__(self) -> str:  # never show the key
        return f"Endpoint(url={self.url!r}, api_key_env={self.api_key_env!r})"

    async def info(self, deadline_s: float = IDENTIFY_DEADLINE_S) -> EndpointInfo:
        """Version, served model, max_model_len and (when exposed) the effective speculative config,
        all within `deadline_s` (every answer is parsed in one pass over it)."""
        try:
            async with asyncio.timeout(deadline_s):
                return await self._info()
        except TimeoutError:
            raise EngineError(
                f"{self.url} did not identify itself within {deadline_s:g} s",
                hint="check that the server is not overloaded, or give the sweep a longer --time-limit",
            ) from None

    async def _info(self) -> EndpointInfo:
        async with httpx.AsyncClient(base_url=self.url, headers=self.headers(), timeout=_TIMEOUT) as client:
            models = await self._get_json(client, "/v1/models")
            data = models.get("data") if isinstance(models, dict) else None
            first = data[0] if isinstance(data, list) and data else None
            if not isinstance(first, dict) or not isinstance(first.get("id"), str) or not first["id"]:
                raise EngineError(f"{self.url}/v1/models lists no model", hint="is this a vLLM OpenAI-compatible server?")
            max_len = first.get("max_model_len")
            info = EndpointInfo(url=self.url, served_model=first["id"], max_model_len=max_len if _small_int(max_len) else None)
            info.version = await _version(client)
            server_info = await _probe_json(client, "/server_info", {"config_format": "json"})
            if isinstance(server_info, str):
                info.server_info_error = server_info
            elif server_info is not None:
                info.server_info_available = True
                info.speculative_config = _checked_spec(self.url, _speculative_config_from(server_info))
                device = _find_key(server_info, ("device_type", "device"))
                info.device = str(device) if isinstance(device, str) and device else None
                tp = _find_key(server_info, ("tensor_parallel_size",))
                info.tensor_parallel_size = tp if isinstance(tp, int) else None
            metrics = await _optional_text(client, "/metrics")
            if metrics:
                python = metric_labels(metrics, "python_info")
                if python.get("version"):
                    info.python = f"{python.get('implementation', 'Python')} {python['version']}"
                info.cache_config = metric_labels(metrics, "vllm:cache_config_info")
            return info

    async def _get_json(self, client: httpx.AsyncClient, path: str) -> object:
        try:
            status, body = await _bounded(client, "GET", path)
        except httpx.TransportError as exc:
            raise EngineError(f"cannot reach {self.url}: {exc.__class__.__name__}", hint="check the URL and that the server is running") from exc
        except _Unanswered as exc:
            raise EngineError(f"{self.url}{path} {exc}", hint="is this a vLLM server?") from exc
        if status in (401, 403):
            raise EngineError(f"{self.url} refused the request (HTTP {status})", hint="pass the key with --api-key-env VAR")
        if status != 200:
            raise EngineError(f"{self.url}{path} answered HTTP {status}", hint="is this a vLLM server?")
        try:
            return _json(body)
        except ValueError as exc:
            raise EngineError(f"{self.url}{path} did not answer JSON", hint="is this a vLLM server?") from exc


def _small_int(value: object, low: int = 1, high: int = 2**31) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _checked_spec(url: str, spec: dict[str, Any] | None) -> dict[str, Any] | None:
    """The server's speculative config as data we can plan with: a string method and an N in 1..64."""
    if spec is None:
        return None
    method, n = spec.get("method"), spec.get("num_speculative_tokens")
    if not isinstance(method, str) or not method or len(method) > 64 or not (n is None or _small_int(n, 1, 64)):
        from specadvisor.textsafe import line

        shown = line(f"method={method!r} num_speculative_tokens={n!r}", 120)
        raise EngineError(
            f"{url}/server_info reports an unusable speculative config ({shown})",
            hint="is this a vLLM server? measure it without /server_info or fix its config",
        )
    return spec


async def _optional_json(client: httpx.AsyncClient, path: str, params: dict[str, str] | None = None) -> dict[str, Any] | None:
    value = await _probe_json(client, path, params)
    return value if isinstance(value, dict) else None


async def _probe_json(client: httpx.AsyncClient, path: str, params: dict[str, str] | None = None) -> dict[str, Any] | str | None:
    """The JSON object at `path`; None when the server answered something else (a 404: not offered);
    why, when it gave no answer: a timeout on a loaded box says nothing about what the server offers."""
    try:
        status, body = await _bounded(client, "GET", path, params)
    except httpx.TimeoutException:
        return f"did not answer within {_TIMEOUT.read:g} s"
    except httpx.TransportError as exc:
        return f"did not answer ({exc.__class__.__name__})"
    except _Unanswered as exc:
        return str(exc)
    try:
        value = _json(body) if status == 200 else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


async def _optional_text(client: httpx.AsyncClient, path: str) -> str | None:
    try:
        status, body = await _bounded(client, "GET", path)
    except (httpx.TransportError, _Unanswered):
        return None
    return body.decode("utf-8", errors="replace") if status == 200 else None


_LABEL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PLAIN = re.compile(r'[^"\\]*')
_ESCAPES = {"\\": "\\", '"': '"', "n": "\n"}
MAX_LABELS = 64  # vLLM's cache_config_info has about 20
MAX_LABEL_CHARS = 256  # what is kept of one value (shown as a provenance fact)
MAX_LABEL_LINE = 64 * 1024  # an info metric's line (vLLM's cache_config_info is under 1 KB)


def metric_labels(text: str, name: str) -> dict[str, str]:
    """The labels of the first sample of metric `name` in a Prometheus text exposition ({} if absent).
    One pass over the text, whatever it holds: a regex over a hostile 400 KB label line backtracked
    for minutes (the endpoint is identified before the sweep's watchdog starts)."""
    head = name + "{"
    for line in text.splitlines():
        if line.startswith(head):
            return _label_set(line, len(head))
    return {}


def _label_set(line: str, i: int) -> dict[str, str]:
    """`name="value", ...}` from `i` on, read once left to right; what precedes the first malformed
    piece is kept."""
    labels: dict[str, str] = {}
    if len(line) > MAX_LABEL_LINE:
        return labels  # no vLLM info metric is this long: not read at all
    for _ in range(MAX_LABELS):
        if i >= len(line):
            break
        match = _LABEL_NAME.match(line, i)  # anchored at i, and names cannot backtrack into a value
        if match is None or not line.startswith('="', match.end()):
            break
        i = match.end() + 2
        value: list[str] = []
        while i < len(line) and line[i] != '"':
            plain = _PLAIN.match(line, i)  # anchored: one attempt, up to the next quote or backslash
            assert plain is not None
            value.append(plain.group())
            i = plain.end()
            if line.startswith("\\", i) and i + 1 < len(line):
                value.append(_ESCAPES.get(line[i + 1], line[i : i + 2]))
                i += 2
            elif line.startswith("\\", i):
                i += 1
        if i >= len(line):
            break  # unterminated: not a label
        labels[match.group()] = "".join(value)[:MAX_LABEL_CHARS]
        i += 1
        if line.startswith(",", i):
            i += 1
    return labels


def _find_key(tree: object, keys: tuple[str, ...]) -> object:
    """The first value under any of `keys`, searching nested dicts and lists breadth-first (a deque:
    popping the front of a list made 800,000 items take 41 s)."""
    queue: deque[object] = deque([tree])
    while queue:
        node = queue.popleft()
        if isinstance(node, dict):
            for key in keys:
                if key in node and not isinstance(node[key], (dict, list)):
                    return node[key]
            queue.extend(node.values())
        elif isinstance(node, list):
            queue.extend(node)
    return None


async def _version(client: httpx.AsyncClient) -> str | None:
    body = await _optional_json(client, "/version")
    version = body.get("version") if isinstance(body, dict) else None
    return version[:64] if isinstance(version, str) else None


def _speculative_config_from(server_info: dict[str, Any]) -> dict[str, Any] | None:
    """vLLM nests the effective config differently across versions; find the speculative part."""
    stack: list[object] = [server_info]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key in ("speculative_config", "speculative-config"):
                if key in node:
                    value = node[key]
                    if not isinstance(value, dict):
                        return None
                    # Drop the nested target/draft model and parallel configs (they repeat the server's)
                    # and unset keys (null): replayed as --speculative-config they only add noise.
                    return {k: v for k, v in value.items() if not isinstance(v, dict) and v is not None}
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return None


async def server_version(base_url: str, api_key: str | None = None) -> str | None:
    """The server's vLLM version, or None when it does not say."""
    async with httpx.AsyncClient(base_url=base_url.rstrip("/"), headers=_headers(api_key), timeout=_TIMEOUT) as client:
        return await _version(client)


async def reset_prefix_cache(base_url: str, api_key: str | None = None) -> bool:
    """Empty the prefix cache between trials so cached prompts do not flatter later ones.
    False when the server does not offer it (launched without VLLM_SERVER_DEV_MODE=1)."""
    async with httpx.AsyncClient(base_url=base_url.rstrip("/"), headers=_headers(api_key), timeout=_TIMEOUT) as client:
        try:
            status, _ = await _bounded(client, "POST", "/reset_prefix_cache", read=False)
        except (httpx.TransportError, _Unanswered):
            return False
        return status == 200
