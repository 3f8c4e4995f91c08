"""One redaction function for logs, stdout, --json, errors, the store and exports; private logs."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest

from specadvisor.cli.main import main
from specadvisor.engine import ServerSpec, VllmServer
from specadvisor.redact import REDACTED, redact, redact_argv, redact_text

FAKE_VLLM = Path(__file__).resolve().parent.parent / "engine" / "fake_vllm.py"

# (text holding a secret, the secret): each must disappear, the rest must stay readable.
SECRET_TEXTS = [
    ("--aws-secret-access-key=AbCdEf0123456789secretvalue", "AbCdEf0123456789secretvalue"),
    ("--secret-access-key=wJalrXUtnFEMIK7MDENG", "wJalrXUtnFEMIK7MDENG"),
    ("--access-key=AKIDEXAMPLEVALUE", "AKIDEXAMPLEVALUE"),
    ("--access-key AKIDEXAMPLEVALUE2", "AKIDEXAMPLEVALUE2"),
    ("cache at redis://:hunter2pass@cache.internal:6379/0", "hunter2pass"),
    ("http://alice:s3cretpw@10.0.0.1:8000/v1", "s3cretpw"),
    ("http://10.0.0.1:8000/v1/models?token=tok123456&x=1", "tok123456"),
    ("https://h/x?api_key=k-998877", "k-998877"),
    ("auth eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U done", "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    ("gitlab glpat-abcdefghij0123456789XY", "glpat-abcdefghij0123456789XY"),
    ("google AIzaSyA1234567890abcdefghijklmnopqrstuv", "AIzaSyA1234567890abcdefghijklmnopqrstuv"),
    ("npm npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm_abcdefghijklmnopqrstuvwxyz0123456789"),
    ('--api-key "correct horse battery staple" --port 1', "horse battery"),
    ("--api-key='two words' --x", "two words"),
    ('OPENAI_API_KEY="quoted secret value" vllm serve', "quoted secret value"),
    ("env OPENAI_API_KEY=sk-abc vllm serve m", "sk-abc"),
    ("env HF_TOKEN=plainvalue123 vllm", "plainvalue123"),
    ("model hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123 loaded", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123"),
    ("key sk-proj-0123456789abcdefghij used", "sk-proj-0123456789abcdefghij"),
    ("non-default args: {'api_key': ['sk-zzz-not-long'], 'port': 8000}", "sk-zzz-not-long"),
    ("Authorization: Bearer abc.def.ghi", "abc.def.ghi"),
    ("export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG", "wJalrXUtnFEMI/K7MDENG"),
]


@pytest.mark.parametrize("text, secret", SECRET_TEXTS, ids=[t[:30] for t, _ in SECRET_TEXTS])
def test_redact_text_removes_the_secret(text, secret):
    out = redact_text(text)
    assert secret not in out
    assert REDACTED in out


@pytest.mark.parametrize(
    "text",
    [
        "--num-speculative-tokens 5",
        "--max-num-batched-tokens=8192",
        "per token: 0.7 ms",
        "--api-key-env OPENAI_API_KEY",
        "vllm serve Qwen/Qwen3-8B --port 8000",
        # issue 41: "-token request" read as a flag and its value in the plan's memory message
        "each GPU needs about 81 GiB (weights 78, KV cache for one 4096-token request 1.2)",
        "a 64-key table",
    ],
)
def test_redact_text_leaves_ordinary_text_alone(text):
    assert redact_text(text) == text


def test_redact_paths_strips_only_a_home_folder_a_path_starts_with():
    """Issue 41: the pattern was not anchored, so /data/home/bob/models became /data~/models."""
    text = '/home/alice/m and /data/home/bob/models "/Users/carol/x" file:///home/dan/y /srv/Users/eve/z'
    assert redact_text(text, redact_paths=True) == '~/m and /data/home/bob/models "~/x" file://~/y /srv/Users/eve/z'


def test_redact_dict_keys_and_argv():
    data = {"AWS_SECRET_ACCESS_KEY": "v1", "aws_access_key_id": "v2", "nested": {"hf_token": "v3"}, "n": 3, "method": "ngram"}
    assert redact(data) == {"AWS_SECRET_ACCESS_KEY": REDACTED, "aws_access_key_id": REDACTED, "nested": {"hf_token": REDACTED}, "n": 3, "method": "ngram"}
    assert redact_argv(["--aws-secret-access-key", "v", "--x", "1"]) == ["--aws-secret-access-key", REDACTED, "--x", "1"]


async def test_server_log_is_private_and_redacted(tmp_path):
    log = tmp_path / "data" / "logs" / "session" / "arm.log"
    spec = ServerSpec(
        model="m",
        engine_cmd=["env", "OPENAI_API_KEY=sk-live-0123456789abcdefXYZ", sys.executable, str(FAKE_VLLM), "--mode", "ok"],
        extra_args=["--api-key", "plain-secret-value", "--hf-token=hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123"],
        log_path=log,
        ready_timeout_s=30,
    )
    async with VllmServer(spec):
        pass
    text = log.read_text()
    first = text.splitlines()[0]
    assert first.startswith("$ env ") and "OPENAI_API_KEY=<redacted>" in first
    for secret in ("sk-live-0123456789abcdefXYZ", "plain-secret-value", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123"):
        assert secret not in text  # neither the argv line nor the server's own echo of its args
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert stat.S_IMODE(log.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(log.parent.parent.stat().st_mode) == 0o700


def test_endpoint_error_does_not_print_credentials(tmp_path, capsys):
    db = tmp_path / "s.db"
    code = main(["--db", str(db), "sweep", "--endpoint", "http://alice:pw-s3cret@127.0.0.1:1/?token=tok-abc123", "--model", "m"])
    err = capsys.readouterr().err
    assert code == 4 and err.count("\n") == 1
    assert "pw-s3cret" not in err and "tok-abc123" not in err
    assert not db.exists()


def test_json_output_is_redacted(tmp_path, capsys):
    from specadvisor.cli.output import print_json

    print_json({"engine_cmd": ["vllm", "serve", "--api-key", "abc-secret"], "endpoint": "http://u:p4ss@h:1/?token=zz9"})
    out = capsys.readouterr().out
    assert "abc-secret" not in out and "p4ss" not in out and "zz9" not in out
