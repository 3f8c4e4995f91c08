"""Read vLLM's Prometheus /metrics and turn before/after snapshots into speculation figures.

Counters are cumulative since the server started and are split by `engine` (and `position`,
`finished_reason`) labels, so a measurement is always a delta of sums over engines. The formulas
are vLLM's own (vllm/v1/spec_decode/metrics.py, `vllm bench serve`), so our numbers agree with
theirs on the same run.
"""

from __future__ import annotations

import asyncio
import time

import httpx
from prometheus_client.parser import text_string_to_metric_families
from pydantic import BaseModel, Field

from specadvisor import figures
from specadvisor.errors import EngineError, InputError
from specadvisor.figures import Acceptance
from specadvisor.physics import ImplausibleFigures, check_acceptance, counter_delta

DRAFTS = "vllm:spec_decode_num_drafts_total"
DRAFT_TOKENS = "vllm:spec_decode_num_draft_tokens_total"
ACCEPTED = "vllm:spec_decode_num_accepted_tokens_total"
ACCEPTED_PER_POS = "vllm:spec_decode_num_accepted_tokens_per_pos_total"
GENERATION_TOKENS = "vllm:generation_tokens_total"
PROMPT_TOKENS = "vllm:prompt_tokens_total"
REQUEST_SUCCESS = "vllm:request_success_total"
RUNNING = "vllm:num_requests_running"
WAITING = "vllm:num_requests_waiting"
KV_CACHE_USAGE = "vllm:kv_cache_usage_perc"
PREEMPTIONS = "vllm:num_preemptions_total"
MAX_POSITIONS = 64  # vLLM's N limit: a per-position label beyond it is no draft position
# vLLM's /metrics is tens of kB; a body past this, or one still arriving after the deadline, is not a scrape.
MAX_METRICS_BYTES = 16 * 1024 * 1024
SCRAPE_DEADLINE_S = 30.0


class MetricsSnapshot(BaseModel):
    """Sample values summed over every label set (engines), with the per-label splits we need."""

    values: dict[str, float] = Field(default_factory=dict)
    accepted_per_pos: dict[int, float] = Field(default_factory=dict)
    success_by_reason: dict[str, float] = Field(default_factory=dict)
    taken_at: float = Field(default_factory=time.monotonic)

    @property
    def spec_enabled(self) -> bool:
        """vLLM registers the spec-decode counters only when speculation is configured."""
        return DRAFTS in self.values

    def get(self, name: str, default: float = 0.0) -> float:
        return self.values.get(name, default)

    def gauge(self, name: str) -> float | None:
        return self.values.get(name)


class SpecDelta(BaseModel):
    """What happened on the server between two snapshots (counters only, all engines)."""

    spec_enabled: bool = False
    num_drafts: int = 0
    num_draft_tokens: int = 0
    num_accepted_tokens: int = 0
    accepted_per_position: list[int] = Field(default_factory=list)
    generation_tokens: int = 0
    prompt_tokens: int = 0
    requests_succeeded: int = 0
    preemptions: int = 0
    seconds: float = 0.0


def parse_metrics(text: str) -> MetricsSnapshot:
    """Parse Prometheus exposition text; `_created` timestamps and histogram buckets are dropped."""
    snap = MetricsSnapshot()
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as exc:  # the parser raises ValueError/TypeError/IndexError on garbage
        raise InputError(f"/metrics text could not be parsed: {exc}", hint="point --endpoint at a vLLM server") from exc
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    for family in families:
        for sample in family.samples:
            name = sample.name
            if name.endswith(("_created", "_bucket")):
                continue
            series = (name, tuple(sorted(sample.labels.items())))
            if series in seen:  # summed twice it would double every figure drawn from it
                raise ImplausibleFigures(f"the endpoint's /metrics lists the series {name} with the same labels twice: not vLLM's; arm not measured")
            seen.add(series)
            snap.values[name] = snap.values.get(name, 0.0) + float(sample.value)
            if name == ACCEPTED_PER_POS and "position" in sample.labels:
                pos = _position(sample.labels["position"])
                snap.accepted_per_pos[pos] = snap.accepted_per_pos.get(pos, 0.0) + float(sample.value)
            elif name == REQUEST_SUCCESS:
                reason = sample.labels.get("finished_reason", "")
                snap.success_by_reason[reason] = snap.success_by_reason.get(reason, 0.0) + float(sample.value)
    return snap


async def scrape(base_url: str, client: httpx.AsyncClient | None = None, api_key: str | None = None) -> MetricsSnapshot:
    """GET {base_url}/metrics and parse it; an unreachable server is an EngineError (one line). The
    whole scrape has a deadline and a size limit: an endpoint that streams /metrics forever is refused."""
    url = base_url.rstrip("/") + "/metrics"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    own = client is None
    http = client or httpx.AsyncClient(timeout=10.0)
    try:
        async with asyncio.timeout(SCRAPE_DEADLINE_S):
            status, body = await _get_bounded(http, url, headers)
    except TimeoutError as exc:
        raise EngineError(f"{url} did not finish answering within {SCRAPE_DEADLINE_S:.0f} s", hint="check that the vLLM server is not overloaded") from exc
    except httpx.HTTPError as exc:
        raise EngineError(f"cannot read {url}: {type(exc).__name__}", hint="check that the vLLM server is up") from exc
    finally:
        if own:
            await http.aclose()
    if status != 200:
        raise EngineError(
            f"{url} answered HTTP {status}",
            hint="vLLM exposes /metrics unless --disable-log-stats is set; remove that flag",
        )
    return parse_metrics(body.decode("utf-8", errors="replace"))


async def _get_bounded(http: httpx.AsyncClient, url: str, headers: dict[str, str]) -> tuple[int, bytes]:
    body = bytearray()
    async with http.stream("GET", url, headers=headers, timeout=10.0) as response:
        async for piece in response.aiter_bytes():
            body += piece
            if len(body) > MAX_METRICS_BYTES:
                raise ImplausibleFigures(f"the endpoint's /metrics is over {MAX_METRICS_BYTES >> 20} MiB: not vLLM's; arm not measured")
        return response.status_code, bytes(body)


def _position(label: str) -> int:
    if not (label.isascii() and label.isdigit() and int(label) < MAX_POSITIONS):
        raise ImplausibleFigures(f"the endpoint's /metrics names draft position {label[:20]!r}: not a vLLM counter; arm not measured")
    return int(label)


def delta(before: MetricsSnapshot, after: MetricsSnapshot) -> SpecDelta:
    """What happened between two snapshots. Counters only grow and stay exact: a counter that is
    not finite, negative, beyond 2^53 or smaller than before raises ImplausibleFigures."""
    positions = sorted(set(before.accepted_per_pos) | set(after.accepted_per_pos))

    def d(name: str) -> int:
        return counter_delta(name, before.get(name), after.get(name))

    return SpecDelta(
        spec_enabled=after.spec_enabled,
        num_drafts=d(DRAFTS),
        num_draft_tokens=d(DRAFT_TOKENS),
        num_accepted_tokens=d(ACCEPTED),
        accepted_per_position=[
            counter_delta(f"{ACCEPTED_PER_POS}{{position={p}}}", before.accepted_per_pos.get(p, 0.0), after.accepted_per_pos.get(p, 0.0)) for p in positions
        ],
        generation_tokens=d(GENERATION_TOKENS),
        prompt_tokens=d(PROMPT_TOKENS),
        requests_succeeded=d(REQUEST_SUCCESS),
        preemptions=d(PREEMPTIONS),
        seconds=max(0.0, after.taken_at - before.taken_at),
    )


def acceptance(d: SpecDelta) -> Acceptance:
    """The delta's speculation figures (specadvisor.figures); none when speculation is off."""
    if not d.spec_enabled:
        return Acceptance()
    figures_ = figures.acceptance(d.num_drafts, d.num_draft_tokens, d.num_accepted_tokens, d.accepted_per_position)
    check_acceptance(figures_.rate, figures_.mean_length, len(d.accepted_per_position) or None)
    return figures_
