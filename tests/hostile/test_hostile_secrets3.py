"""Secrets that survived round two (round three): a key echoed across the 4096-byte cut of an error
body or written `\\/`-escaped, shapes the patterns missed (YAML `token:`, `pwd=`, `passphrase=`,
`DB_PASS=`, `AccountKey=`, `sk_live_`, `ya29.`, `?passphrase=`, `?code=`, `#token=`,
`--ssl-keyfile-passphrase=`), and the live sweep view, which showed a failure's text before the store
ever redacted it."""

from __future__ import annotations

import pytest
from hostile_helpers import assert_one_line_error
from lying_stub import LyingEndpoint

from specadvisor.app.live import SweepState
from specadvisor.domain import Arm, ArmFailed, ArmResult, ArmStatus, MeasurementWarning, ServerLog, ServerStarting
from specadvisor.redact import REDACTED, forget_secrets, redact_argv, redact_text, remember_secret

FAST = ["--num-prompts", "2", "--output-len", "4", "--warmup", "0"]
SECRET = "Zq7xK29pLmN4vB8sQ"


@pytest.fixture(autouse=True)
def no_remembered_secrets():
    forget_secrets()
    yield
    forget_secrets()


SHAPES = [
    f"token: {SECRET}",
    f"  - password: '{SECRET}'",
    f"settings:\n  secret: {SECRET}\n",
    f"pwd={SECRET}",
    f"pass={SECRET}",
    f"passphrase={SECRET}",
    f"DB_PASS={SECRET}",
    f"export MYSQL_PWD={SECRET}",
    f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={SECRET}==;EndpointSuffix=core.windows.net",
    f"AccountKey={SECRET}==",
    f"AccountKey: {SECRET}",
    f"charged with sk_live_{SECRET}",
    f"rk_test_{SECRET}",
    f"Authorization failed for ya29.{SECRET}-abcdef",
    f"GET https://h.example/x?passphrase={SECRET}",
    f"redirect https://h.example/cb?code={SECRET}&state=1",
    f"https://h.example/app#token={SECRET}",
    f"vllm serve m --ssl-keyfile-passphrase={SECRET}",
    f"vllm serve m --ssl-keyfile-passphrase {SECRET}",
]


@pytest.mark.parametrize("text", SHAPES)
def test_secret_shapes_are_redacted(text):
    shown = redact_text(text)
    assert SECRET not in shown and REDACTED in shown


def test_a_passphrase_flag_in_argv_is_redacted():
    assert redact_argv(["vllm", "serve", "m", "--ssl-keyfile-passphrase", SECRET]) == ["vllm", "serve", "m", "--ssl-keyfile-passphrase", REDACTED]


@pytest.mark.parametrize(
    "prose",
    ["per token: 0.7 ms", "trial 1, pass 3", "num_speculative_tokens=4", "the first pass: 12 requests", "max_tokens=256", "zipcode=1", "workload code"],
)
def test_prose_that_looks_close_is_kept(prose):
    assert redact_text(prose) == prose


def test_a_remembered_value_written_json_escaped_is_removed():
    remember_secret("ab/cd/ef/gh-9931")
    assert redact_text('{"error": "bad key ab\\/cd\\/ef\\/gh-9931"}') == '{"error": "bad key ' + REDACTED + '"}'


CUT = 4096
PREFIX = "Incorrect API key provided: "


@pytest.mark.parametrize(
    "template",
    [
        " " * (CUT - len(PREFIX) - 9) + PREFIX + "{key} and more",  # the key straddles the 4096-byte cut
        '{{"error": {{"message": "' + PREFIX + '{escaped_key}", "type": "invalid_request_error"}}}}',  # JSON's \/
    ],
    ids=["straddles-the-cut", "slash-escaped"],
)
@pytest.mark.parametrize("output", ["--json", "live"])
def test_an_echoed_key_is_removed_however_it_is_cut_or_written(tmp_path, cli, monkeypatch, template, output):
    key = "plain/key-not-a-shape 0452x"
    monkeypatch.setenv("STUB_ENDPOINT_CREDENTIAL", key)
    db = tmp_path / "s.db"
    with LyingEndpoint(reject_key=True, reject_template=template) as stub:
        argv = ["--db", str(db), "sweep", "--endpoint", stub.url, "--api-key-env", "STUB_ENDPOINT_CREDENTIAL", *FAST]
        code, out, err = cli(argv + (["--json"] if output == "--json" else []))
    assert_one_line_error(code, err, 4)
    stored = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    for piece in ("plain", "key-not-a-shape", "0452x", "plain\\/key"):
        assert piece not in out + err and piece.encode() not in stored, piece


def test_the_live_sweep_view_shows_no_secret():
    """What the live table and its warnings show comes from the event, before any store: redacted there."""
    remember_secret(SECRET)
    arm = Arm(id="a", label="ngram N=2", method="ngram", n=2, speculative_config={"method": "ngram", "num_speculative_tokens": 2})
    state = SweepState()
    state.add_arms([arm])
    state.apply(ServerStarting(arm_id="a", command=["vllm", "serve", "m", "--api-key", "argv-secret-0001"]))
    state.apply(ServerLog(arm_id="a", line=f"loaded with token {SECRET}"))
    state.apply(MeasurementWarning(arm_id="a", message=f"the endpoint said: Incorrect API key provided: {SECRET}"))
    failed = ArmResult(arm_id="a", status=ArmStatus.failed, error=f"http://bob:pw-0002@h.example refused: {SECRET}", warnings=[f"token: {SECRET}"])
    state.apply(ArmFailed(result=failed))
    shown = "\n".join([*state.warnings, *(line for _, line in state.log), state.arms["a"].last_line, state.arms["a"].result.error or ""])
    for secret in (SECRET, "argv-secret-0001", "pw-0002"):
        assert secret not in shown, secret
    assert failed.error and SECRET in failed.error  # the event itself is untouched: the store scrubs its own copy
