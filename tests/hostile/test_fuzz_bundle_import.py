"""Fuzz: a valid bundle with random values swapped in anywhere either imports (as read-only
evidence) or is refused with exit 2 and one line, writing nothing. Never a traceback."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hostile_helpers import assert_one_line_error, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specadvisor.store import Store
from specadvisor.store.bundle import bundle_document
from store_samples import make_session

BASE = json.loads(json.dumps(bundle_document(make_session())))

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
    | st.sampled_from(["", "-", "ngram", "[/]", "\x1b[2J", "a\rb", "../../x", "2026-01-01T00:00:00Z", "1.0"])
)
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=8)


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, (*prefix, index))


ALL_PATHS = [p for p in _paths(BASE) if p]


def _apply(doc, path, value, delete):
    node = doc
    for part in path[:-1]:
        node = node[part]
    if delete and isinstance(node, dict):
        del node[path[-1]]
    else:
        node[path[-1]] = value


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(edits=st.lists(st.tuples(st.sampled_from(ALL_PATHS), _values, st.booleans()), min_size=1, max_size=3))
def test_fuzzed_bundle_imports_or_is_refused_cleanly(capsys, edits):
    doc = json.loads(json.dumps(BASE))
    for path, value, delete in edits:
        try:
            _apply(doc, path, value, delete)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier edit removed or replaced the parent
    with tempfile.TemporaryDirectory() as tmp:
        bundle, db = Path(tmp) / "b.json", Path(tmp) / "s.db"
        bundle.write_text(json.dumps(doc), encoding="utf-8")
        code, out, err = run_cli(capsys, ["--db", str(db), "sessions", "import", str(bundle)])
        if code == 0:
            with Store.open(db) as store:
                (summary,) = store.list_sessions()
                assert summary.origin == "imported"
            assert "\x1b" not in out and "\r" not in out
        else:
            assert_one_line_error(code, err, 2)
            assert not db.exists()
