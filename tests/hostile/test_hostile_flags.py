"""Hostile or nonsensical command-line values: exit 2, one line, no database, nothing launched."""

from __future__ import annotations

import pytest
from hostile_helpers import assert_one_line_error, files_in

M = ["--model", "m"]
NG = ["--method", "ngram", "--n", "2"]

SWEEP_CASES = [
    ("temperature-nan", [*M, "--temperature", "nan"]),
    ("temperature-inf", [*M, "--temperature", "inf"]),
    ("temperature-negative", [*M, "--temperature", "-1"]),
    ("temperature-huge", [*M, "--temperature", "1e9"]),
    ("temperature-text", [*M, "--temperature", "warm"]),
    ("request-rate-zero", [*M, "--request-rate", "0"]),
    ("request-rate-negative", [*M, "--request-rate", "-1"]),
    ("request-rate-nan", [*M, "--request-rate", "nan"]),
    ("request-rate-inf", [*M, "--request-rate", "inf"]),
    ("slo-tpot-negative", [*M, "--slo-tpot-ms", "-5"]),
    ("slo-tpot-zero", [*M, "--slo-tpot-ms", "0"]),
    ("slo-ttft-nan", [*M, "--slo-ttft-ms", "nan"]),
    ("slo-ttft-inf", [*M, "--slo-ttft-ms", "inf"]),
    ("output-len-zero", [*M, "--output-len", "0"]),
    ("output-len-negative", [*M, "--output-len", "-1"]),
    ("output-len-huge", [*M, "--output-len", "10000000"]),
    ("output-len-text", [*M, "--output-len", "lots"]),
    ("output-len-20-digits", [*M, "--output-len", "99999999999999999999"]),
    ("num-prompts-zero", [*M, "--num-prompts", "0"]),
    ("num-prompts-huge", [*M, "--num-prompts", "5000000"]),
    ("n-empty-item", [*M, "--method", "ngram", "--n", "1,,2"]),
    ("n-zero", [*M, "--method", "ngram", "--n", "0"]),
    ("n-negative", [*M, "--method", "ngram", "--n", "-1"]),
    ("n-20-digits", [*M, "--method", "ngram", "--n", "99999999999999999999"]),
    ("n-text", [*M, "--method", "ngram", "--n", "three"]),
    ("n-empty", [*M, "--method", "ngram", "--n", ""]),
    ("n-over-limit", [*M, "--method", "ngram", "--n", "65"]),
    ("n-without-method", [*M, "--n", "2"]),
    ("method-without-n", [*M, "--method", "ngram"]),
    ("method-bogus", [*M, "--method", "bogus", "--n", "2"]),
    ("method-empty-item", [*M, "--method", "ngram,", "--n", "2"]),
    ("method-escape", [*M, "--method", "\x1b[2Jngram", "--n", "2"]),
    ("concurrency-zero", [*M, "--concurrency", "0"]),
    ("concurrency-negative", [*M, "--concurrency", "-1"]),
    ("concurrency-huge", [*M, "--concurrency", "200000"]),
    ("concurrency-text", [*M, "--concurrency", "many"]),
    ("trials-zero", [*M, "--trials", "0"]),
    ("warmup-negative", [*M, "--warmup", "-1"]),
    ("seed-negative", [*M, "--seed", "-1"]),
    ("spec-extra-sets-method", [*M, *NG, "--spec-extra", '{"method":"eagle3"}']),
    ("spec-extra-sets-n", [*M, *NG, "--spec-extra", '{"num_speculative_tokens":9}']),
    ("spec-extra-not-object", [*M, *NG, "--spec-extra", "[1]"]),
    ("spec-extra-bad-json", [*M, *NG, "--spec-extra", "{bad"]),
    ("spec-extra-unknown-method", [*M, *NG, "--spec-extra", 'eagle3:{"x":1}']),
    ("server-arg-port", [*M, "--server-arg=--port=1"]),
    ("server-arg-host", [*M, "--server-arg=--host", "--server-arg=0.0.0.0"]),
    ("server-arg-disable-log-stats", [*M, "--server-arg=--disable-log-stats"]),
    ("server-arg-speculative-config", [*M, "--server-arg=--speculative-config={}"]),
    ("engine-cmd-unbalanced-quote", [*M, "--engine-cmd", "vllm 'serve"]),
    ("engine-cmd-empty", [*M, "--engine-cmd", ""]),
    ("engine-cmd-port", [*M, "--engine-cmd", "vllm serve --port 1"]),
    ("engine-cmd-host", [*M, "--engine-cmd", "vllm serve --host=0.0.0.0"]),
    ("endpoint-port-out-of-range", ["--endpoint", "http://127.0.0.1:99999"]),
    ("endpoint-not-http", ["--endpoint", "ftp://127.0.0.1/x"]),
    ("endpoint-no-host", ["--endpoint", "http://"]),
    ("endpoint-garbage", ["--endpoint", "not a url"]),
    ("endpoint-and-engine", ["--endpoint", "http://127.0.0.1:8000", "--engine-cmd", "vllm serve"]),
    ("api-key-env-bad-name", ["--endpoint", "http://127.0.0.1:8000", "--api-key-env", "A B"]),
    ("name-multiline", [*M, "--name", "a\nforged line"]),
    ("name-escape", [*M, "--name", "\x1b]52;c;ZXZpbA==\x07"]),
    ("rebuild-without-resume", [*M, "--rebuild"]),
    ("resume-missing-db", ["--resume", "abc123"]),
    ("unknown-flag", [*M, "--bogus"]),
    ("no-model", [*NG]),
    ("drafter-method-without-drafter", [*M, "--method", "eagle3", "--n", "2"]),
    ("prompts-missing-file", [*M, "--prompts", "/nonexistent/prompts.jsonl"]),
]


@pytest.mark.parametrize("argv", [a for _, a in SWEEP_CASES], ids=[i for i, _ in SWEEP_CASES])
def test_bad_sweep_flag(tmp_path, cli, argv):
    db = tmp_path / "s.db"
    before = files_in(tmp_path)
    code, _out, err = cli(["--db", str(db), "sweep", *argv])
    assert_one_line_error(code, err, 2)
    assert not db.exists() and files_in(tmp_path) == before


OTHER_CASES = [
    ("gpu-negative-count", ["detect", "--gpu", "H100x-1"]),
    ("gpu-zero-count", ["detect", "--gpu", "H100x0"]),
    ("gpu-huge-count", ["detect", "--gpu", "H100x99999999999999999999"]),
    ("gpu-unknown", ["detect", "--gpu", "x8"]),
    ("sessions-bad-action", ["sessions", "explode"]),
    ("compare-one-id", ["sessions", "compare", "abc"]),
    ("unknown-command", ["frobnicate"]),
    ("advise-bad-concurrency", ["advise", "--model", "m", "--workload", "chat", "--concurrency", "zero"]),
    ("advise-bad-workload", ["advise", "--model", "m", "--workload", "mining", "--concurrency", "1"]),
]


@pytest.mark.parametrize("argv", [a for _, a in OTHER_CASES], ids=[i for i, _ in OTHER_CASES])
def test_bad_flag_of_other_commands(tmp_path, cli, argv):
    db = tmp_path / "s.db"
    code, _, err = cli(["--db", str(db), *argv])
    assert_one_line_error(code, err, 2)
    assert not db.exists()
