"""Every parse of endpoint data is linear and every identification has a total deadline (round three,
high 4): a 400 KB `python_info{...}` line once took minutes in a backtracking regex, an 800,000-item
/server_info 41 s in a list used as a queue, all before the sweep's watchdog started; `engine probe`
had no limit at all. Timings are asserted with room to spare for a loaded 2-core machine (the old
code took 60 s and more on these inputs)."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from hostile_helpers import assert_one_line_error
from lying_stub import LyingEndpoint

from specadvisor.engine import Endpoint
from specadvisor.engine.attach import _find_key, metric_labels
from specadvisor.sweep.time_limit import Watchdog

HUGE_LABEL_LINES = {
    "word-no-equals": "python_info{" + "a" * 400_000 + "} 1\n",
    "unterminated-values": "python_info{" + 'a="' * 130_000 + "} 1\n",
    "escaped-quotes": 'python_info{version="' + '\\"' * 200_000 + "} 1\n",
    "many-labels": "python_info{" + 'a="b",' * 70_000 + "} 1\n",
}


@pytest.mark.parametrize("text", list(HUGE_LABEL_LINES.values()), ids=list(HUGE_LABEL_LINES))
def test_metric_labels_reads_a_hostile_line_in_linear_time(text):
    started = time.perf_counter()
    labels = metric_labels(text * 4, "python_info")
    assert time.perf_counter() - started < 2.0
    assert all(len(v) <= 256 for v in labels.values())


def test_metric_labels_still_reads_vllms_lines():
    text = 'python_info{implementation="CPython",major="3",minor="12",patchlevel="1",version="3.12.1"} 1.0\n'
    text += 'vllm:cache_config_info{block_size="16",cache_dtype="auto",quoted="a\\"b\\\\c"} 1.0\n'
    assert metric_labels(text, "python_info")["version"] == "3.12.1"
    assert metric_labels(text, "vllm:cache_config_info") == {"block_size": "16", "cache_dtype": "auto", "quoted": 'a"b\\c'}


def test_find_key_walks_a_huge_server_info_in_linear_time():
    tree = {"a": [[0] * 800_000], "b": [{"x": {"device_type": "cuda"}}]}  # found only after the 800,000 items
    started = time.perf_counter()
    assert _find_key(tree, ("device_type",)) == "cuda"
    assert time.perf_counter() - started < 3.0


def test_identifying_a_hostile_endpoint_is_fast():
    """The whole identification, over HTTP, of a server whose /metrics and /server_info are built to be slow to parse."""
    info = {"vllm_config": {"speculative_config": {"method": "ngram", "num_speculative_tokens": 3}}, "pad": [[0] * 800_000]}
    with LyingEndpoint(server_info=info, metrics_text=HUGE_LABEL_LINES["word-no-equals"]) as stub:
        started = time.perf_counter()
        found = asyncio.run(Endpoint(stub.url).info())
    assert time.perf_counter() - started < 10.0
    assert found.speculative_config == {"method": "ngram", "num_speculative_tokens": 3} and found.python is None


@pytest.mark.parametrize("path", ["/server_info", "/metrics"])
def test_sweep_identification_counts_inside_the_time_limit(tmp_path, cli, path):
    """A server that never finishes answering one of its identity calls: the sweep stops at its
    --time-limit (here 3 s) in one line instead of waiting out each call's own 30 s."""
    db = tmp_path / "s.db"
    with LyingEndpoint(get_forever=(path,)) as stub:
        started = time.perf_counter()
        code, _, err = cli(["--db", str(db), "sweep", "--endpoint", stub.url, "--time-limit", "0.05", "--num-prompts", "2", "--output-len", "4"])
        elapsed = time.perf_counter() - started
    assert_one_line_error(code, err, 4)
    assert "did not identify itself within 3 s" in err and elapsed < 20 and not db.exists()


def test_engine_probe_has_a_total_limit(cli):
    with LyingEndpoint(get_forever=("/server_info",)) as stub:
        started = time.perf_counter()
        code, _, err = cli(["engine", "probe", stub.url, "--timeout", "2"])
        elapsed = time.perf_counter() - started
    assert_one_line_error(code, err, 4)
    assert "did not identify itself within 2 s" in err and elapsed < 15


@pytest.mark.parametrize("bad", ["nan", "0", "-1", "1e308"])
def test_engine_probe_timeout_is_checked(cli, bad):
    code, _, err = cli(["engine", "probe", "http://127.0.0.1:9", "--timeout", bad])
    assert_one_line_error(code, err, 2)
    assert "--timeout" in err


async def test_the_time_limit_counts_from_before_the_runner():
    """Identification happens before the runner starts: the runner's watchdog counts from then."""
    loop = asyncio.get_running_loop()
    watchdog = Watchdog(10.0, started_at=loop.time() - 4.0)
    assert 5.5 < watchdog.seconds_left() <= 6.0
    assert Watchdog(10.0).seconds_left() > 9.5


def test_an_endpoint_sweep_hands_its_start_to_the_runner(tmp_path, monkeypatch):
    from specadvisor.app import running, sweeps
    from specadvisor.domain import SweepSettings
    from specadvisor.store import Store

    with LyingEndpoint() as stub:
        before = time.monotonic()
        prepared = sweeps.attach_endpoint(sweeps.SweepRequest(settings=SweepSettings.of(endpoint=stub.url, time_limit_s=60.0)))
    assert prepared.started_at is not None and before <= prepared.started_at <= time.monotonic()
    with Store.open(tmp_path / "s.db") as store:
        runner = running.runner_for(prepared, store)
    assert runner._limit.started_at == prepared.started_at  # the time limit counts from the identification
    json.dumps(prepared.session.model_dump(mode="json"))  # nothing unserialisable added to the session
