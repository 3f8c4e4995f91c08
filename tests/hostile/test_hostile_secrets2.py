"""Secrets that survived the first hostile pass (issue 20, class 3): a key echoed in a 401 body, a flag
value with spaces, URL passwords with a space or a `/`, user-only tokens, secret-named environment
values, and the server-log shapes (Cookie, ?pass=, token@host, PEM bodies, --x-auth/--auth). Each is
looked for, as bytes, everywhere the tool writes: stdout, stderr, `--json`, the database file (and its
WAL), exported bundles, server logs. The database itself is private (0600 in a 0700 folder)."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest
from hostile_helpers import assert_one_line_error
from lying_stub import LyingEndpoint

from specadvisor.redact import REDACTED, LogRedactor, forget_secrets, redact_argv, redact_text
from specadvisor.store import Store

FAST = ["--num-prompts", "2", "--output-len", "4", "--warmup", "0"]


@pytest.fixture(autouse=True)
def no_remembered_secrets():
    """Each case must find its secrets itself: none is left over from another test in this process."""
    forget_secrets()
    yield
    forget_secrets()


def leaks(secret: str, *texts: str, folders: tuple[Path, ...] = ()) -> list[str]:
    """Where `secret` still appears: in the texts given, or in any file under the folders (as bytes)."""
    found = [f"text {i}" for i, text in enumerate(texts) if secret in text]
    for folder in folders:
        for path in folder.rglob("*"):
            if path.is_file() and secret.encode() in path.read_bytes():
                found.append(str(path))
    return found


def export_of(cli, db: Path, out: Path) -> str:
    out.parent.mkdir(parents=True, exist_ok=True)
    with Store.open(db) as store:
        (summary,) = store.list_sessions()
    code, _, err = cli(["--db", str(db), "sessions", "export", summary.id[:8], "-o", str(out)])
    assert code == 0, err
    return out.read_text()


@pytest.mark.parametrize("output", ["--json", "live"])
def test_key_echoed_in_a_401_body_is_removed_everywhere(tmp_path, cli, monkeypatch, output):
    key = "plainkey not-a-known-shape 0451"  # no token prefix, spaces: only its value can find it
    monkeypatch.setenv("STUB_ENDPOINT_CREDENTIAL", key)
    db = tmp_path / "data" / "s.db"
    with LyingEndpoint(reject_key=True) as stub:
        argv = ["--db", str(db), "sweep", "--endpoint", stub.url, "--api-key-env", "STUB_ENDPOINT_CREDENTIAL", *FAST]
        code, out, err = cli(argv + (["--json"] if output == "--json" else []))
    assert_one_line_error(code, err, 4)
    assert "HTTP 401" in err and "Incorrect API key provided: " + REDACTED in err  # the honest part stays
    bundle = export_of(cli, db, tmp_path / "export" / "b.json")
    assert leaks(key, out, err, bundle, folders=(tmp_path,)) == []
    assert leaks("plainkey", out, err, bundle, folders=(tmp_path,)) == []  # not even half of it (cut at 200 characters)


def test_flag_value_with_spaces_is_removed_from_argv_logs_and_store(tmp_path, cli, monkeypatch):
    """`--server-arg=--aws-secret-access-key=plain aws spaced 24` is one item and one value; the engine
    prints its argv back (as vLLM does) into the log, the error excerpt, --json and the bundle."""
    monkeypatch.setenv("SPECADVISOR_HOME", str(tmp_path / "home"))
    db = tmp_path / "s.db"
    engine = "sh -c 'echo \"non-default args: $*\"; exit 3'"
    argv = ["--db", str(db), "sweep", "--model", "m", "--engine-cmd", engine, "--prompts", "math", *FAST, "--json"]
    code, out, err = cli([*argv, "--server-arg=--aws-secret-access-key=plain aws spaced 24"])
    assert_one_line_error(code, err, 4)
    bundle = export_of(cli, db, tmp_path / "b.json")
    assert leaks("aws spaced 24", out, err, bundle, folders=(tmp_path,)) == []
    assert "--aws-secret-access-key=" + REDACTED in bundle  # the flag is still there to read


@pytest.mark.parametrize(
    "credentials, secret",
    [("alice:pa ss-wd 9931q@", "pa ss-wd 9931q"), ("alice:pa/ss-wd9932@", "pa/ss-wd9932"), ("tok-user-only-7781@", "tok-user-only-7781")],
    ids=["password-with-space", "password-with-slash", "user-only-token"],
)
def test_url_credentials_are_never_stored_or_printed(tmp_path, cli, credentials, secret):
    db = tmp_path / "s.db"
    with LyingEndpoint() as stub:
        url = stub.url.replace("http://", "http://" + credentials)
        code, out, err = cli(["--db", str(db), "sweep", "--endpoint", url, *FAST, "--json"])
    bundle = export_of(cli, db, tmp_path / "b.json") if db.exists() else ""
    assert code in (0, 2), err  # measured through the credentials, or refused as a URL in one line
    assert leaks(secret, out, err, bundle, folders=(tmp_path,)) == []
    # nor its tail ("9931q": a letter, so a port or a figure that happens to hold the digits is no leak)
    assert leaks(secret.split("/")[-1].split(" ")[-1], out, err, bundle, folders=(tmp_path,)) == []


def test_secret_named_environment_value_printed_by_the_engine_is_removed(tmp_path, cli, monkeypatch):
    monkeypatch.setenv("SPECADVISOR_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MY_SERVICE_TOKEN", "env-secret value 5567")
    db = tmp_path / "s.db"
    engine = "sh -c 'echo \"service token is $MY_SERVICE_TOKEN\"; exit 3'"
    code, out, err = cli(["--db", str(db), "sweep", "--model", "m", "--engine-cmd", engine, "--prompts", "math", *FAST, "--json"])
    assert_one_line_error(code, err, 4)
    bundle = export_of(cli, db, tmp_path / "b.json")
    assert leaks("env-secret value 5567", out, err, bundle, folders=(tmp_path,)) == []
    log = "\n".join(p.read_text() for p in (tmp_path / "home").rglob("*.log"))
    assert "service token is " + REDACTED in log  # the line is still there to read, without the value


PEM = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\nVJTUt9Us8cKjMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDu\n-----END PRIVATE KEY-----"
# (a server-log line, the secret in it)
LOG_LINES = [
    ("Cookie: sessionid=cookie-val-0001; csrftoken=cookie-val-0002", "cookie-val-0002"),
    ("< Set-Cookie: session=set-cookie-val-0003; Path=/; HttpOnly", "set-cookie-val-0003"),
    ('headers: {"cookie": "sid=json-cookie-0004"}', "json-cookie-0004"),
    ("GET /download?file=x&pass=query-pass-0005 HTTP/1.1", "query-pass-0005"),
    ("GET /v1?password=query-pw-0006&x=1", "query-pw-0006"),
    ("GET /v1?token=query-tok-0007", "query-tok-0007"),
    ("fetching https://user-only-tok-0008@github.example/org/repo.git", "user-only-tok-0008"),
    ("args: --x-auth=x-auth-val-0009 --port 1", "x-auth-val-0009"),
    ("args: --auth auth-val-0010 --port 1", "auth-val-0010"),
    ("non-default args: {'x_auth': 'dict-auth-0011'}", "dict-auth-0011"),
    ("proxy http://bob:pw/with/slash-0013@proxy.internal:3128", "slash-0013"),
]


@pytest.mark.parametrize("line, secret", LOG_LINES, ids=[s for _, s in LOG_LINES])
def test_server_log_shapes_are_redacted(line, secret):
    assert secret not in redact_text(line)
    assert REDACTED in redact_text(line)


def test_a_url_password_with_a_space_follows_its_value():
    """No pattern can tell where `pw with space@` starts in free text; the value, once given, can."""
    from specadvisor.redact import remember_url

    line = "proxy http://bob:pw with space-0012@proxy.internal:3128 refused"
    remember_url("http://bob:pw with space-0012@proxy.internal:3128")
    assert "space-0012" not in redact_text(line) and "pw with" not in redact_text(line)
    assert redact_text("endpoint at http://127.0.0.1:8000 @c8") == "endpoint at http://127.0.0.1:8000 @c8"  # labels stay


def test_pem_body_is_redacted_in_text_and_line_by_line():
    body_lines = PEM.splitlines()[1:-1]
    text = redact_text("loading key\n" + PEM + "\nready")
    assert all(b not in text for b in body_lines) and "ready" in text and "-----END PRIVATE KEY-----" in text
    assert all(b not in redact_text("key: " + PEM[:80]) for b in body_lines[:1])  # cut off before its END line
    log = LogRedactor()
    shown = [log(line) for line in ["before", *PEM.splitlines(), "after"]]
    assert shown[0] == "before" and shown[-1] == "after"
    assert all(b not in "\n".join(shown) for b in body_lines)


def test_flag_values_with_spaces_in_argv_items():
    argv = ["vllm", "serve", "m", "--aws-secret-access-key=plain aws spaced 24", "--server-arg=--hf-token=a b c", "--port", "1"]
    out = redact_argv(argv)
    assert out == ["vllm", "serve", "m", "--aws-secret-access-key=" + REDACTED, "--server-arg=--hf-token=" + REDACTED, "--port", "1"]


def test_server_log_file_has_no_pem_cookie_or_auth(tmp_path, cli, monkeypatch):
    """A launched engine that prints these lines: the log file, the stored error excerpt and --json
    keep none of the values (the script reads them from a file, so the command line holds none)."""
    monkeypatch.setenv("SPECADVISOR_HOME", str(tmp_path / "home"))
    printed = tmp_path / "printed.txt"
    printed.write_text("\n".join(line for line, _ in LOG_LINES) + "\n" + PEM + "\n")
    db = tmp_path / "db" / "s.db"
    engine = f"sh -c 'cat {printed}; exit 3'"
    code, out, err = cli(["--db", str(db), "sweep", "--model", "m", "--engine-cmd", engine, "--prompts", "math", *FAST, "--json"])
    assert_one_line_error(code, err, 4)
    logs = tmp_path / "home"
    assert any(p.suffix == ".log" for p in logs.rglob("*")), "the engine's log was written"
    bundle = export_of(cli, db, tmp_path / "db" / "b.json")
    for _, secret in LOG_LINES:
        assert leaks(secret, out, err, bundle, folders=(logs, db.parent)) == [], secret
    for body in PEM.splitlines()[1:-1]:
        assert leaks(body, out, err, bundle, folders=(logs, db.parent)) == []


def test_database_is_private(tmp_path):
    db = tmp_path / "new" / "nested" / "s.db"
    old_umask = os.umask(0o022)
    try:
        with Store.open(db) as store:
            store.list_sessions()
            files = [db] + [Path(str(db) + suffix) for suffix in ("-wal", "-shm") if Path(str(db) + suffix).exists()]
            modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in files}
    finally:
        os.umask(old_umask)
    assert modes and set(modes.values()) == {0o600}, modes
    assert "s.db-wal" in modes  # WAL mode: the journal is private too
    assert stat.S_IMODE(db.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(db.parent.parent.stat().st_mode) == 0o700


def test_existing_folder_keeps_its_mode(tmp_path):
    """--db in a folder the user already has (say /tmp): only what specadvisor creates is made private."""
    folder = tmp_path / "shared"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    with Store.open(folder / "s.db"):
        pass
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755
    assert stat.S_IMODE((folder / "s.db").stat().st_mode) == 0o600


@pytest.mark.skipif(sys.platform != "linux", reason="O_NOFOLLOW semantics")
def test_database_path_that_is_a_dangling_symlink_is_refused(tmp_path, cli):
    db = tmp_path / "s.db"
    db.symlink_to(tmp_path / "elsewhere.db")
    code, _, err = cli(["--db", str(db), "sessions", "list"])
    assert_one_line_error(code, err, 3)
    assert not (tmp_path / "elsewhere.db").exists()


def test_settings_named_like_keys_are_not_secrets():
    """Only names that end in a secret's name hold one: PIP_KEYRING_PROVIDER=disabled is a setting,
    and "disabled" must stay readable everywhere."""
    from specadvisor.redact import remember_environment

    remember_environment({"PIP_KEYRING_PROVIDER": "disabled", "TOKENIZERS_PARALLELISM": "false", "DEPLOY_TOKEN": "deploy-env-value-77"})
    assert redact_text("speculation disabled") == "speculation disabled"
    assert redact_text("pushed with deploy-env-value-77 today") == f"pushed with {REDACTED} today"
