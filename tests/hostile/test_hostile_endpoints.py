"""A misbehaving endpoint (a real local HTTP stub): 500s with terminal escapes, garbage SSE, streams
cut off or stalled, hostile names. The sweep exits 4 with one line, never hangs, never leaves the
session `running`, and nothing the server sent reaches the terminal raw."""

from __future__ import annotations

import json
import socket

import pytest
from hostile_helpers import assert_one_line_error
from hostile_stub import Stub

from specadvisor.store import Store

FAST = ["--num-prompts", "2", "--output-len", "4", "--warmup", "0"]

# Failures while reading the server's identity: nothing is written (exit 4).
INFO_CASES = [
    ("models-500-escapes", dict(models_status=500, models_body=b"\x1b]52;c;ZXZpbA==\x07boom")),
    ("models-not-json", dict(models_body=b"<html>\x1b[2J</html>")),
    ("models-list-not-object", dict(models_body=b"[1, 2, 3]")),
    ("models-empty", dict(models_body=b'{"data": []}')),
    ("models-id-number", dict(models_body=b'{"data": [{"id": 42}]}')),
    ("models-401", dict(models_status=401)),
    ("server-info-n-text", dict(server_info={"speculative_config": {"method": "ngram", "num_speculative_tokens": "many"}})),
    ("server-info-n-huge", dict(server_info={"speculative_config": {"method": "ngram", "num_speculative_tokens": 10**20}})),
    ("server-info-method-number", dict(server_info={"speculative_config": {"method": 42, "num_speculative_tokens": 2}})),
]


@pytest.mark.parametrize("kwargs", [k for _, k in INFO_CASES], ids=[i for i, _ in INFO_CASES])
def test_endpoint_identity_failure(tmp_path, cli, kwargs):
    db = tmp_path / "s.db"
    with Stub("500", **kwargs) as stub:
        code, out, err = cli(["--db", str(db), "sweep", "--endpoint", stub.url, *FAST])
    assert_one_line_error(code, err, 4)
    assert "\x1b" not in out and not db.exists()


def test_endpoint_refusing_connections(tmp_path, cli):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again before the sweep: nothing listens there
    db = tmp_path / "s.db"
    code, _, err = cli(["--db", str(db), "sweep", "--endpoint", f"http://u:pw-secret@127.0.0.1:{port}/?token=t0k", *FAST])
    assert_one_line_error(code, err, 4)
    assert "pw-secret" not in err and "t0k" not in err and not db.exists()


# Failures while measuring: the arm fails, the sweep ends (exit 4) and the session is finished.
@pytest.mark.parametrize("mode", ["500", "garbage", "close", "stall"])
@pytest.mark.parametrize("output", ["--json", "live"])
def test_endpoint_failing_mid_measurement(tmp_path, cli, monkeypatch, mode, output):
    monkeypatch.setenv("SPECADVISOR_STALL_TIMEOUT_S", "1")
    db = tmp_path / "s.db"
    model = "\x1b]52;c;ZXZpbA==\x07[link=https://evil.example]m[/link]"
    with Stub(mode, model=model) as stub:
        argv = ["--db", str(db), "sweep", "--endpoint", stub.url, "--model", "m", *FAST]
        code, out, err = cli(argv + (["--json"] if output == "--json" else []))
    assert_one_line_error(code, err, 4)
    assert "no arm" in err and "produced a measurement" in err
    assert "\x1b" not in out and "\x07" not in out
    if output == "--json":
        json.loads(out)  # still valid JSON for scripts
    with Store.open(db) as store:
        (summary,) = store.list_sessions()
        assert summary.status == "finished"  # never left `running`


def test_hostile_served_name_is_shown_escaped(tmp_path, cli, monkeypatch):
    monkeypatch.setenv("SPECADVISOR_STALL_TIMEOUT_S", "1")
    db = tmp_path / "s.db"
    with Stub("500", model="[bold]\x1b[2Jname\r") as stub:
        code, out, _err = cli(["--db", str(db), "sweep", "--endpoint", stub.url, *FAST])
    assert code == 4
    with Store.open(db) as store:
        (summary,) = store.list_sessions()
    code, out, _err = cli(["--db", str(db), "sessions", "show", summary.id[:8]])
    assert code == 0 and "\x1b" not in out and "\r" not in out


def test_engine_probe_shows_server_strings_escaped(cli):
    with Stub("500", model="\x1b]52;c;ZXZpbA==\x07model\rforged") as stub:
        code, out, err = cli(["engine", "probe", stub.url])
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out and "\r" not in out
    assert "\\x1b" in out  # shown, visibly


@pytest.mark.parametrize("engine", ["false", "sh -c 'echo \x1b[2Jboom; exit 3'"])
def test_engine_that_dies_fails_the_sweep_with_4(tmp_path, cli, engine):
    """A launched engine that exits at once: every arm fails, exit 4, the session is finished."""
    db = tmp_path / "s.db"
    code, _out, err = cli(["--db", str(db), "sweep", "--model", "m", "--engine-cmd", engine, "--prompts", "math", *FAST, "--json"])
    assert_one_line_error(code, err, 4)
    with Store.open(db) as store:
        (summary,) = store.list_sessions()
        assert summary.status == "finished"
