"""Hostile or broken bundles: one-line InputError (exit 2), and nothing is written to the store."""

from __future__ import annotations

import copy
import json
import os
import sys

import pytest

from specadvisor.errors import InputError
from specadvisor.store import Store
from specadvisor.store.bundle import bundle_document, import_bundle, read_bundle
from specadvisor.store.safe_json import MAX_FILE_BYTES
from store_samples import make_session


@pytest.fixture(scope="module")
def good_document():
    return bundle_document(make_session())


def _write_json(path, document) -> None:
    path.write_text(json.dumps(document), encoding="utf-8")


def _mutated(document, mutate):
    changed = copy.deepcopy(document)
    mutate(changed)
    return changed


def _nest(depth: int):
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


def _set(path: str, value):
    def mutate(doc):
        *parents, last = path.split(".")
        node = doc
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return mutate


# (case id, mutation of a valid document, fragment the error must contain)
DOCUMENT_CASES = [
    ("wrong-format-marker", _set("format", "someone-elses-format"), "not a specadvisor session bundle"),
    ("missing-format-marker", lambda d: d.pop("format"), "not a specadvisor session bundle"),
    ("newer-major-schema", _set("bundle_schema", "2.0"), "newer than this specadvisor reads"),
    ("schema-not-major-minor", _set("bundle_schema", "one"), "is not MAJOR.MINOR"),
    ("unknown-top-level-key", _set("payload", "run me"), "unexpected top-level keys"),
    ("session-missing", lambda d: d.pop("session"), "holds no session object"),
    ("session-not-object", _set("session", [1, 2]), "holds no session object"),
    ("session-without-id", lambda d: d["session"].pop("id"), "the session lacks id"),
    ("empty-session", _set("session", {}), "the session lacks id, created_at"),
    ("wrong-type-string-for-int", _set("session.concurrency", "8"), "invalid session at concurrency"),
    ("wrong-type-bool-for-int", _set("session.results.0.completed", True), "invalid session at results.0.completed"),
    ("wrong-type-list-for-string", _set("session.model", ["a"]), "invalid session at model"),
    ("unknown-session-field", _set("session.shell", "rm -rf ~"), "invalid session at shell"),
    ("bad-enum", _set("session.workload", "mining"), "invalid session at workload"),
    ("bad-datetime", _set("session.created_at", "yesterday"), "invalid session at created_at"),
    ("non-uuid-id", _set("session.id", "../../etc/passwd"), "is not a UUID"),
    ("huge-string", _set("session.notes", "x" * 300_000), "over the 200000 limit"),
    ("huge-array", _set("session.samples", [0] * 250_000), "over the 200000 limit"),
    ("deep-nesting", _set("session.notes", _nest(100)), "nested deeper than"),
    ("terminal-escape", _set("session.name", "\x1b]0;owned\x07"), "control character"),
    ("bidi-override", _set("session.model", "good\u202eledom"), "control character"),
]


@pytest.mark.parametrize("mutate, fragment", [c[1:] for c in DOCUMENT_CASES], ids=[c[0] for c in DOCUMENT_CASES])
def test_bad_documents_are_rejected_before_anything_is_written(tmp_path, good_document, mutate, fragment):
    path = tmp_path / "bad.json"
    _write_json(path, _mutated(good_document, mutate))
    _assert_rejected(tmp_path, path, fragment)


RAW_CASES = [
    ("not-json", b"this is not json", "is not valid JSON"),
    ("empty-file", b"", "is not valid JSON"),
    ("top-level-array", b"[1, 2, 3]", "top level is not a JSON object"),
    ("non-utf8", b'{"format": "\xff\xfe"}', "is not UTF-8"),
    ("nan", b'{"format": "specadvisor-session-bundle", "x": NaN}', "NaN is not allowed"),
    ("infinity", b'{"format": "specadvisor-session-bundle", "x": -Infinity}', "-Infinity is not allowed"),
    ("overflowing-float", b'{"format": "specadvisor-session-bundle", "x": 1e400}', "non-finite number"),
    ("duplicate-keys", b'{"format": "a", "format": "specadvisor-session-bundle"}', "duplicate key"),
    ("deep-brackets", b"[" * 100_000 + b"]" * 100_000, "nested deeper than"),
    ("huge-integer", b'{"x": ' + b"9" * 5000 + b"}", "is not valid JSON"),
]


@pytest.mark.parametrize("data, fragment", [c[1:] for c in RAW_CASES], ids=[c[0] for c in RAW_CASES])
def test_malformed_files_are_rejected(tmp_path, data, fragment):
    path = tmp_path / "bad.json"
    path.write_bytes(data)
    _assert_rejected(tmp_path, path, fragment)


def test_file_over_the_size_limit_is_rejected_unread(tmp_path):
    path = tmp_path / "big.json"
    with open(path, "wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)
    _assert_rejected(tmp_path, path, "over the")


def test_symlink_is_rejected(tmp_path, good_document):
    target = tmp_path / "real.json"
    _write_json(target, good_document)
    link = tmp_path / "link.json"
    link.symlink_to(target)
    _assert_rejected(tmp_path, link, "symbolic link")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero on this platform")
def test_device_file_is_rejected(tmp_path):
    _assert_rejected(tmp_path, "/dev/zero", "not a regular file")


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs are POSIX")
def test_fifo_is_rejected_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    _assert_rejected(tmp_path, fifo, "not a regular file")


def test_folder_and_missing_file_are_rejected(tmp_path):
    _assert_rejected(tmp_path, tmp_path, "not a regular file")
    _assert_rejected(tmp_path, tmp_path / "nope.json", "no such file")


def test_newer_minor_schema_with_extra_keys_is_accepted(tmp_path, good_document):
    """Same major: a later 1.x may add top-level keys this version can ignore."""
    document = _mutated(good_document, lambda d: d.update(bundle_schema="1.7", signature="abc"))
    path = tmp_path / "newer-minor.json"
    _write_json(path, document)
    assert read_bundle(path).id == good_document["session"]["id"]


def _assert_rejected(tmp_path, path, fragment: str) -> None:
    with pytest.raises(InputError) as caught:
        read_bundle(path)
    message = str(caught.value)
    assert fragment in message
    assert "\n" not in message and len(message) < 400
    assert caught.value.exit_code == 2
    with Store.open(tmp_path / "target.db") as store:
        with pytest.raises(InputError):
            import_bundle(store, path)
        assert store.list_sessions() == []


# ----------------------------------------------------------------------------- fuzzing

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from specadvisor.store.bundle import _parse  # noqa: E402

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2000))
def test_random_bytes_only_ever_raise_input_error(data):
    with pytest.raises(InputError):
        _parse(data, "fuzz.json")


@settings(max_examples=200, deadline=None)
@given(_json_values)
def test_random_json_in_the_session_slot_only_ever_raises_input_error(value):
    document = {"format": "specadvisor-session-bundle", "bundle_schema": "1.0", "session": value}
    with pytest.raises(InputError):
        _parse(json.dumps(document).encode(), "fuzz.json")
