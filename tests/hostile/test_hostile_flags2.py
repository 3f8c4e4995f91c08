"""Hostile flags, round two (issue 20 class 9): tracebacks and accepted nonsense become one line,
exit 2, nothing written. Every float flag is checked against specadvisor.bounds (nan, inf, 1e308)."""

from __future__ import annotations

import pytest
from hostile_helpers import assert_one_line_error, files_in

M = ["--model", "m"]

CASES = [
    ("advise-temperature-nan", ["advise", *M, "--temperature", "nan"]),
    ("advise-temperature-inf", ["advise", *M, "--temperature", "inf"]),
    ("advise-temperature-1e308", ["advise", *M, "--temperature", "1e308"]),
    ("advise-params-b-nan", ["advise", *M, "--params-b", "nan"]),
    ("advise-params-b-inf", ["advise", *M, "--params-b", "inf"]),
    ("advise-params-b-1e308", ["advise", *M, "--params-b", "1e308"]),
    ("advise-params-b-zero", ["advise", *M, "--params-b", "0"]),
    ("detect-timeout-nan", ["detect", "--timeout", "nan"]),
    ("detect-timeout-1e308", ["detect", "--timeout", "1e308"]),
    ("detect-timeout-inf", ["detect", "--timeout", "inf"]),
    ("detect-timeout-zero", ["detect", "--timeout", "0"]),
    ("probe-port-99999", ["engine", "probe", "http://127.0.0.1:99999"]),
    ("probe-unclosed-ipv6", ["engine", "probe", "http://a:b@[::1"]),
    ("probe-not-http", ["engine", "probe", "file:///etc/passwd"]),
    ("probe-no-host", ["engine", "probe", "http://"]),
    ("probe-bad-key-env", ["engine", "probe", "http://127.0.0.1:8000", "--api-key-env", "A B"]),
    ("sweep-drift-nan", ["sweep", *M, "--drift-threshold", "nan"]),
    ("sweep-drift-inf", ["sweep", *M, "--drift-threshold", "inf"]),
    ("sweep-drift-negative", ["sweep", *M, "--drift-threshold", "-1"]),
    ("sweep-ci-target-nan", ["sweep", *M, "--ci-target", "nan"]),
    ("sweep-ci-target-inf", ["sweep", *M, "--ci-target", "inf"]),
    ("sweep-time-limit-nan", ["sweep", *M, "--time-limit", "nan"]),
    ("sweep-time-limit-inf", ["sweep", *M, "--time-limit", "inf"]),
    ("sweep-time-limit-zero", ["sweep", *M, "--time-limit", "0"]),
    ("sweep-time-limit-1e308", ["sweep", *M, "--time-limit", "1e308"]),
    ("sweep-65-concurrency-levels", ["sweep", *M, "--concurrency", ",".join(str(i) for i in range(1, 66))]),
    ("sweep-resume-empty", ["sweep", "--resume", ""]),
    ("sweep-resume-blank", ["sweep", "--resume", "  "]),
    ("import-bench-concurrency-zero", ["import-bench", "x.json", *M, "--concurrency", "0"]),
    ("import-bench-concurrency-huge", ["import-bench", "x.json", *M, "--concurrency", "200000"]),
]


@pytest.mark.parametrize("argv", [a for _, a in CASES], ids=[i for i, _ in CASES])
def test_bad_flag_is_one_line_and_writes_nothing(tmp_path, cli, argv, monkeypatch):
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "s.db"
    before = files_in(tmp_path)
    code, out, err = cli(["--db", str(db), *argv])
    assert_one_line_error(code, err, 2)
    assert out == "" and not db.exists() and files_in(tmp_path) == before


def test_a_password_in_a_bad_probe_url_is_not_echoed(cli):
    code, _, err = cli(["engine", "probe", "http://user:hunter2secret@[::1"])
    assert_one_line_error(code, err, 2)
    assert "hunter2secret" not in err
