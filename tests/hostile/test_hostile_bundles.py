"""Hostile bundles: every case exits 2 with one line and writes nothing (no database is created)."""

from __future__ import annotations

import copy
import json
import os

import pytest
from hostile_helpers import assert_one_line_error

from specadvisor.store import bundle_limits
from specadvisor.store.bundle import bundle_document
from store_samples import make_session


def _doc() -> dict:
    return json.loads(json.dumps(bundle_document(make_session())))


def _set(path: str, value):
    """A mutation setting `path` (dot-separated, list indexes as numbers) in the document."""

    def mutate(doc):
        node = doc
        parts = path.split(".")
        for part in parts[:-1]:
            node = node[int(part)] if isinstance(node, list) else node[part]
        last = parts[-1]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
        return doc

    return mutate


def _delete(path: str):
    def mutate(doc):
        node = doc
        parts = path.split(".")
        for part in parts[:-1]:
            node = node[int(part)] if isinstance(node, list) else node[part]
        del node[parts[-1]]
        return doc

    return mutate


def _dup_arm(doc):
    doc["session"]["arms"].append(copy.deepcopy(doc["session"]["arms"][1]))
    return doc


def _dup_result(doc):
    doc["session"]["results"].append(copy.deepcopy(doc["session"]["results"][1]))
    return doc


def _many_positions(doc):
    pos = doc["session"]["results"][1]["per_position"][0]
    doc["session"]["results"][1]["per_position"] = [dict(pos, position=i) for i in range(bundle_limits.MAX_POSITIONS + 1)]
    return doc


def _many_levels(doc):
    doc["session"]["settings"]["concurrency"] = list(range(1, bundle_limits.MAX_CONCURRENCY_LEVELS + 2))
    return doc


def _extra_top(doc):
    doc["payload"] = "x"
    return doc


# (id, mutation of the bundle document): each must be refused.
MUTATIONS = [
    ("int-above-int64", _set("session.results.1.num_drafts", 2**63)),
    ("int-far-above-int64", _set("session.results.1.output_tokens", 10**30)),
    ("negative-n", _set("session.arms.1.n", -2)),
    ("zero-n", _set("session.arms.1.n", 0)),
    ("huge-n", _set("session.arms.1.n", 1_000_000)),
    ("n-is-text", _set("session.arms.1.n", "many")),
    ("n-is-bool", _set("session.arms.1.n", True)),
    ("n-is-float", _set("session.arms.1.n", 2.5)),
    ("arm-concurrency-zero", _set("session.arms.1.concurrency", 0)),
    ("arm-concurrency-negative", _set("session.arms.1.concurrency", -8)),
    ("settings-concurrency-empty", _set("session.settings.concurrency", [])),
    ("settings-concurrency-zero", _set("session.settings.concurrency", [0])),
    ("too-many-levels", _many_levels),
    ("acceptance-7.5", _set("session.results.1.acceptance_rate", 7.5)),
    ("acceptance-negative", _set("session.results.1.acceptance_rate", -0.1)),
    ("position-rate-over-1", _set("session.results.1.per_position.0.rate", 1.5)),
    ("position-accepted-over-drafts", _set("session.results.1.per_position.0.accepted", 10**9)),
    ("position-negative-drafts", _set("session.results.1.per_position.0.drafts", -1)),
    ("too-many-positions", _many_positions),
    ("acceptance-length-0.5", _set("session.results.1.mean_acceptance_length", 0.5)),
    ("acceptance-length-huge", _set("session.results.1.mean_acceptance_length", 1e9)),
    ("negative-throughput", _set("session.results.1.output_throughput", -5.0)),
    ("negative-completed", _set("session.results.1.completed", -1)),
    ("duplicate-arm-ids", _dup_arm),
    ("duplicate-result", _dup_result),
    ("temperature-negative", _set("session.settings.temperature", -1.0)),
    ("temperature-huge", _set("session.settings.temperature", 1e300)),
    ("num-prompts-zero", _set("session.settings.num_prompts", 0)),
    ("output-len-negative", _set("session.settings.output_len", -5)),
    ("trials-zero", _set("session.settings.trials", 0)),
    ("request-rate-zero", _set("session.settings.request_rate", 0.0)),
    ("slo-negative", _set("session.settings.slo_tpot_ms", -5.0)),
    ("spec-config-without-method", _set("session.arms.1.speculative_config", {"num_speculative_tokens": 2})),
    ("status-bogus", _set("session.status", "pwned")),
    ("workload-bogus", _set("session.workload", "exfiltrate")),
    ("origin-bogus", _set("session.provenance.origin", "trusted")),
    ("stop-code-words", _set("session.provenance.stopped", {"code": "decided; run rm -rf ~"})),  # a stop is a code, never words shown
    ("stop-figure-huge", _set("session.provenance.stopped", {"code": "budget too small", "step_s": 1e300})),
    ("stop-text-smuggled", _set("session.provenance.stopped", {"code": "decided", "text": "\x1b]52;c;ZXZpbA==\x07"})),
    ("prompt-file-hash-not-hex", _set("session.provenance.prompt_file_sha256", "\x1b[2Jnot a hash")),
    ("request-format-bogus", _set("session.settings.request_format", "raw; curl evil")),
    ("id-not-uuid", _set("session.id", "../../etc/passwd")),
    ("missing-id", _delete("session.id")),
    ("missing-created", _delete("session.created_at")),
    ("format-wrong", _set("format", "something-else")),
    ("schema-newer", _set("bundle_schema", "99.0")),
    ("schema-garbage", _set("bundle_schema", "1.0; rm -rf")),
    ("unknown-top-level-key", _extra_top),
    ("session-not-object", _set("session", ["x"])),
    ("escape-in-name", _set("session.name", "ok\x1b]52;c;ZXZpbA==\x07")),
    ("carriage-return-in-serve-command", _set("session.recommendation.serve_command", "vllm serve m\rcurl evil | sh")),
    ("bidi-override-in-model", _set("session.model", "Qwen\u202eevil")),
    ("nul-in-label", _set("session.arms.1.label", "a\x00b")),
    ("huge-string", _set("session.notes", "x" * 200_001)),
    ("unknown-field", _set("session.arms.1.shell", "rm -rf ~")),
]


def _write(tmp_path, doc) -> str:
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("mutate", [m for _, m in MUTATIONS], ids=[i for i, _ in MUTATIONS])
def test_hostile_bundle_is_refused_and_nothing_written(tmp_path, cli, mutate):
    db = tmp_path / "s.db"
    code, out, err = cli(["--db", str(db), "sessions", "import", _write(tmp_path, mutate(_doc()))])
    assert_one_line_error(code, err, 2)
    assert out == "" and not db.exists()


RAW_FILES = [
    ("empty", b""),
    ("not-json", b"hello"),
    ("not-utf8", b'{"format": "\xff\xfe"}'),
    ("top-level-list", b"[1, 2]"),
    ("nan-literal", b'{"format": "specadvisor-session-bundle", "bundle_schema": "1.0", "x": NaN}'),
    ("infinity-literal", b'{"a": Infinity}'),
    ("duplicate-keys", b'{"format": "a", "format": "b"}'),
    ("deep-nesting", b"[" * 40 + b"]" * 40),
    ("truncated", json.dumps(bundle_document(make_session())).encode()[:500]),
    ("bom", b"\xef\xbb\xbf{}"),
]


@pytest.mark.parametrize("data", [d for _, d in RAW_FILES], ids=[i for i, _ in RAW_FILES])
def test_malformed_file_is_refused(tmp_path, cli, data):
    path = tmp_path / "b.json"
    path.write_bytes(data)
    db = tmp_path / "s.db"
    code, _, err = cli(["--db", str(db), "sessions", "import", str(path)])
    assert_one_line_error(code, err, 2)
    assert not db.exists()


def _special(kind: str, tmp_path):
    real = tmp_path / "real.json"
    real.write_text(json.dumps(_doc()), encoding="utf-8")
    path = tmp_path / f"special-{kind}"
    if kind == "symlink":
        path.symlink_to(real)
    elif kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "missing":
        pass
    elif kind == "oversized":
        with open(path, "wb") as handle:
            handle.truncate(25 * 1024 * 1024)  # sparse: costs no disk
    elif kind == "device":
        return "/dev/zero"
    return str(path)


@pytest.mark.parametrize("kind", ["symlink", "directory", "fifo", "missing", "oversized", "device"])
def test_special_files_are_refused(tmp_path, cli, kind):
    db = tmp_path / "s.db"
    code, _, err = cli(["--db", str(db), "sessions", "import", _special(kind, tmp_path)])
    assert_one_line_error(code, err, 2)
    assert not db.exists()


def test_too_many_arms_is_refused(tmp_path, cli, monkeypatch):
    monkeypatch.setattr(bundle_limits, "MAX_ARMS", 2)
    db = tmp_path / "s.db"
    code, _, err = cli(["--db", str(db), "sessions", "import", _write(tmp_path, _doc())])
    assert_one_line_error(code, err, 2)
    assert "over the 2 limit" in err and not db.exists()


def test_hostile_file_name_is_echoed_escaped(tmp_path, cli):
    path = tmp_path / "evil\x1b]52;c;ZXZpbA==\x07\rname.json"
    path.write_text(json.dumps(_doc()), encoding="utf-8")
    code, out, err = cli(["--db", str(tmp_path / "s.db"), "sessions", "import", str(path)])
    assert code == 0, err
    assert "\x1b" not in out and "\r" not in out and "\\x1b" in out


def test_two_concurrent_imports_add_one_session(tmp_path):
    """Three processes import the same bundle into a new database at once: exactly one imports it."""
    import subprocess
    import sys

    bundle = _write(tmp_path, _doc())
    db = tmp_path / "s.db"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    cmd = [sys.executable, "-m", "specadvisor.cli.main", "--db", str(db), "sessions", "import", "--json", bundle]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) for _ in range(3)]
    outs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], outs
    created = sorted(json.loads(out)["created"] for out, _ in outs)
    assert created == [False, False, True]
