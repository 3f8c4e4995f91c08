"""Real end to end: the CPU build of vLLM serves SmolLM2 and specadvisor's figures equal vLLM's own.

Two arms, one server at a time (the machine has 2 cores): no speculation, and n-gram with K=4.
specadvisor measures each with the bench layer (measure_arm); the test then checks the figures
against two independent sources from the same server: the /metrics counters (scraped and parsed
here, without specadvisor's parser) and vLLM's periodic `SpecDecoding metrics` log lines.
No warmups, so everything the server ever counted is the measured traffic.
"""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import httpx
import pytest

from specadvisor.bench.measure import measure_arm
from specadvisor.bench.prompts import prompts_for
from specadvisor.domain import Arm, ArmFinished, SweepSettings
from specadvisor.engine import Endpoint, ServerSpec, VllmServer, reaper, reset_prefix_cache, server_version

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.timeout(1500)]

SERVED = "smollm2"
K = 4
NGRAM = {"method": "ngram", "num_speculative_tokens": K, "prompt_lookup_min": 2, "prompt_lookup_max": 4}
SETTINGS = SweepSettings(prompt_source="humaneval", num_prompts=4, output_len=48, temperature=0.0, warmup=0, trials=1)
LOG_INTERVAL_S = 30.0  # few SpecDecoding lines per arm; each covers the traffic since the previous one

SPEC_LINE = re.compile(
    r"SpecDecoding metrics: Mean acceptance length: (?P<mal>[\d.]+), .*?Accepted: (?P<acc>\d+) tokens, "
    r"Drafted: (?P<drafted>\d+) tokens, Per-position acceptance rate: (?P<pos>[\d., ]+?), Avg Draft"
)
COUNTER = re.compile(r"^(vllm:[a-z_]+)\{([^}]*)\} ([0-9.eE+-]+)$")


def spec_lines(log: list[str]) -> list[dict]:
    out = []
    for line in log:
        match = SPEC_LINE.search(line)
        if match:
            out.append(
                {
                    "mal": float(match["mal"]),
                    "accepted": int(match["acc"]),
                    "drafted": int(match["drafted"]),
                    "per_position": [float(x) for x in match["pos"].split(",")],
                }
            )
    return out


async def raw_counters(base_url: str) -> dict[str, float]:
    """/metrics parsed with a regex, independent of specadvisor.bench: sums over engines, with
    per-position counters keyed `name[position]`."""
    async with httpx.AsyncClient() as client:
        text = (await client.get(f"{base_url}/metrics")).text
    totals: dict[str, float] = {}
    for line in text.splitlines():
        match = COUNTER.match(line)
        if not match or not match[1].endswith("_total"):
            continue
        name, labels, value = match[1], match[2], float(match[3])
        position = re.search(r'position="(\d+)"', labels)
        key = f"{name}[{position[1]}]" if position else name
        totals[key] = totals.get(key, 0.0) + value
    return totals


def counter_delta(before: dict, after: dict, key: str) -> int:
    return round(after.get(key, 0.0) - before.get(key, 0.0))


async def serve_and_measure(cpu_engine, arm: Arm, tmp_path) -> dict:
    spec = ServerSpec(
        model=str(cpu_engine.model_dir),
        engine_cmd=cpu_engine.engine_cmd,
        extra_args=cpu_engine.server_args,
        env={**cpu_engine.env, "VLLM_LOG_STATS_INTERVAL": str(LOG_INTERVAL_S)},
        speculative_config=arm.speculative_config,
        served_model_name=SERVED,
        log_path=tmp_path / f"{arm.id}.log",
        ready_timeout_s=900,
    )
    server = VllmServer(spec)
    log: list[str] = []
    server.subscribe(log.append)
    started = time.monotonic()
    async with server:
        startup_s = time.monotonic() - started
        info = await Endpoint(server.base_url).info()
        version = await server_version(server.base_url)
        reset_ok = await reset_prefix_cache(server.base_url)
        before = await raw_counters(server.base_url)
        prompts = prompts_for(SETTINGS)
        events = [e async for e in measure_arm(base_url=server.base_url, model_name=SERVED, arm=arm, settings=SETTINGS, prompts=prompts)]
        after = await raw_counters(server.base_url)
        if arm.speculative_config:
            await wait_for_log_to_cover(
                log,
                counter_delta(before, after, "vllm:spec_decode_num_accepted_tokens_total"),
                counter_delta(before, after, "vllm:spec_decode_num_draft_tokens_total"),
            )
        pid = server.pid
    return {
        "startup_s": startup_s,
        "info": info,
        "version": version,
        "reset_ok": reset_ok,
        "before": before,
        "after": after,
        "events": events,
        "log": log,
        "pid": pid,
        "returncode": server.returncode,
    }


async def wait_for_log_to_cover(log: list[str], accepted: int, drafted: int) -> None:
    """vLLM logs the interval's figures every VLLM_LOG_STATS_INTERVAL s; wait for the last one."""
    deadline = time.monotonic() + LOG_INTERVAL_S + 30
    while time.monotonic() < deadline:
        lines = spec_lines(log)
        if sum(x["drafted"] for x in lines) >= drafted and sum(x["accepted"] for x in lines) >= accepted:
            return
        await asyncio.sleep(1)


def finished(events) -> ArmFinished:
    done = [e for e in events if isinstance(e, ArmFinished)]
    assert len(done) == 1, [type(e).__name__ for e in events]
    return done[0]


async def test_cpu_engine_measures_baseline_and_ngram_like_vllm_itself(cpu_engine, tmp_path):
    assert cpu_engine.model_dir.joinpath("model.safetensors").is_file()

    # ------------------------------------------------------------------ no speculation
    baseline = await serve_and_measure(cpu_engine, Arm(id="baseline", label="no speculation"), tmp_path)
    print(f"baseline: ready in {baseline['startup_s']:.0f} s")
    result = finished(baseline["events"]).result
    assert result.status.value == "ok", result.error
    assert result.completed == SETTINGS.num_prompts and result.failed == 0
    assert result.output_tokens == SETTINGS.num_prompts * SETTINGS.output_len
    assert result.output_tokens == counter_delta(baseline["before"], baseline["after"], "vllm:generation_tokens_total")
    assert result.num_drafts is None and result.per_position == []
    assert "vllm:spec_decode_num_drafts_total" not in baseline["after"]
    assert spec_lines(baseline["log"]) == []
    assert baseline["info"].served_model == SERVED and baseline["info"].max_model_len == 2048
    assert baseline["info"].version == baseline["version"] == "0.32.0"
    assert baseline["info"].server_info_available, baseline["info"].server_info_error  # a timeout says so
    assert baseline["info"].speculative_config is None
    assert baseline["reset_ok"] is True
    assert baseline["returncode"] is not None and not reaper.group_alive(baseline["pid"])

    # ------------------------------------------------------------------ n-gram, K=4
    arm = Arm(id="ngram-n4", label="n-gram K=4", method="ngram", n=K, speculative_config=NGRAM)
    ngram = await serve_and_measure(cpu_engine, arm, tmp_path)
    print(f"ngram: ready in {ngram['startup_s']:.0f} s")
    result = finished(ngram["events"]).result
    assert result.status.value == "ok", result.error
    assert result.completed == SETTINGS.num_prompts
    assert result.output_tokens == SETTINGS.num_prompts * SETTINGS.output_len
    effective = ngram["info"].speculative_config
    assert effective["method"] == "ngram" and effective["num_speculative_tokens"] == K

    # 1. specadvisor's figures == vLLM's counter deltas (parsed here independently)
    before, after = ngram["before"], ngram["after"]
    assert result.num_drafts == counter_delta(before, after, "vllm:spec_decode_num_drafts_total") > 0
    assert result.num_draft_tokens == counter_delta(before, after, "vllm:spec_decode_num_draft_tokens_total")
    assert result.num_accepted_tokens == counter_delta(before, after, "vllm:spec_decode_num_accepted_tokens_total")
    per_pos_counters = [counter_delta(before, after, f"vllm:spec_decode_num_accepted_tokens_per_pos_total[{i}]") for i in range(K)]
    assert [p.accepted for p in result.per_position] == per_pos_counters
    assert all(p.drafts == result.num_drafts for p in result.per_position)
    assert result.mean_acceptance_length == pytest.approx(1 + result.num_accepted_tokens / result.num_drafts)
    assert result.acceptance_rate == pytest.approx(result.num_accepted_tokens / result.num_draft_tokens)
    assert result.num_accepted_tokens > 0, "n-gram on code prompts should accept some tokens"

    # 2. specadvisor's figures == vLLM's own SpecDecoding log lines (no warmups: the lines cover exactly
    #    the measured traffic)
    lines = spec_lines(ngram["log"])
    assert lines, "vLLM printed no SpecDecoding metrics line"
    assert sum(x["accepted"] for x in lines) == result.num_accepted_tokens
    assert sum(x["drafted"] for x in lines) == result.num_draft_tokens
    if len(lines) == 1:  # one interval covered everything: the rounded figures must match exactly
        assert lines[0]["mal"] == round(result.mean_acceptance_length, 2)
        assert lines[0]["per_position"] == [round(p.rate, 3) for p in result.per_position]
    else:  # several intervals: each line's drafts follow from its own mean acceptance length
        drafts = [x["accepted"] / (x["mal"] - 1) if x["mal"] > 1 else None for x in lines]
        if all(d is not None for d in drafts):
            assert sum(drafts) == pytest.approx(result.num_drafts, rel=0.02, abs=1)
            for i in range(K):
                from_log = sum(x["per_position"][i] * d for x, d in zip(lines, drafts, strict=True))
                assert from_log == pytest.approx(result.per_position[i].accepted, rel=0.02, abs=1)
    assert ngram["returncode"] is not None and not reaper.group_alive(ngram["pid"])
    print(
        f"ngram K=4: drafts={result.num_drafts} drafted={result.num_draft_tokens} accepted={result.num_accepted_tokens} "
        f"MAL={result.mean_acceptance_length:.2f} per-position={[round(p.rate, 3) for p in result.per_position]} "
        f"log lines={len(lines)}; throughput baseline={finished(baseline['events']).result.output_throughput:.1f} "
        f"ngram={result.output_throughput:.1f} tok/s"
    )


PARENT = """
import asyncio, sys
from specadvisor.engine import ServerSpec, VllmServer

async def main():
    spec = ServerSpec(model=sys.argv[1], engine_cmd=sys.argv[2].split("\\x1f"), extra_args=sys.argv[3].split("\\x1f"),
                      env={"VLLM_CPU_KVCACHE_SPACE": "2"}, ready_timeout_s=900)
    server = VllmServer(spec)
    await server.start()
    await server.wait_ready()
    print(server.pid, flush=True)
    await asyncio.sleep(900)

asyncio.run(main())
"""


def test_real_server_group_dies_with_a_sigkilled_parent(cpu_engine):
    """vLLM's engine-core workers live in the server's process group; PDEATHSIG reaches the API
    server and it must take its workers down, so nothing is left when specadvisor is SIGKILLed."""
    import subprocess
    import sys

    sep = "\x1f"
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(cpu_engine.model_dir), sep.join(cpu_engine.engine_cmd), sep.join(cpu_engine.server_args)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        pid = int(parent.stdout.readline())
        assert reaper.group_alive(pid)
        members = group_members(pid)
        assert len(members) >= 2, f"expected the API server and an engine-core process, got {members}"
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 60
    while reaper.group_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.5)
    left = group_members(pid)
    if left:
        reaper.kill_groups({pid}, 1)
    assert not left, f"processes left in the server's group after the parent was SIGKILLed: {left}"


def group_members(pgid: int) -> list[int]:
    import os

    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2 :].split()
            if fields[2] == str(pgid) and fields[0] != "Z":
                found.append(int(entry))
    return found


async def test_real_invalid_speculative_config_is_diagnosed(cpu_engine, tmp_path):
    """The real CPU vLLM rejects an unknown key before the engine starts: noticed at once, one-line cause."""
    from specadvisor.engine import ServerStartError

    spec = ServerSpec(
        model=str(cpu_engine.model_dir),
        engine_cmd=cpu_engine.engine_cmd,
        extra_args=cpu_engine.server_args,
        env=cpu_engine.env,
        speculative_config={**NGRAM, "bogus_key": 1},
        log_path=tmp_path / "bad.log",
    )
    server = VllmServer(spec)
    started = time.monotonic()
    with pytest.raises(ServerStartError) as caught:
        async with server:
            pytest.fail("vLLM accepted an unknown speculative-config key")
    assert time.monotonic() - started < 120  # not the 20-minute ready timeout
    assert caught.value.diagnosis.kind == "invalid_config"
    assert "bogus_key: Unexpected keyword argument" in caught.value.one_line()
    assert server.returncode == 1
    assert "ValidationError" in (tmp_path / "bad.log").read_text()
    assert not reaper.group_alive(server.pid)
