"""A bundle carries a session between databases unchanged, and importing it twice adds nothing."""

from __future__ import annotations

import hashlib
import json
import shutil

from specadvisor import __version__
from specadvisor.store import Store
from specadvisor.store.bundle import BUNDLE_FORMAT, BUNDLE_SCHEMA, export_bundle, import_bundle, read_bundle
from store_samples import make_session


def test_export_then_import_into_another_database_reproduces_the_session(tmp_path):
    session = make_session()
    with Store.open(tmp_path / "a.db") as source:
        source.save_session(session)
        bundle = export_bundle(source.get_session(session.id[:8]), tmp_path / "s.json")
    with Store.open(tmp_path / "b.db") as target:
        imported, created = import_bundle(target, bundle)
        stored = target.get_session(session.id)
    assert created is True
    assert stored.model_dump(exclude={"provenance"}) == session.model_dump(exclude={"provenance"})
    assert stored.model_dump() == imported.model_dump()
    assert stored.provenance.origin == "imported"
    assert stored.provenance.imported_from == "s.json"
    assert stored.provenance.bundle_sha256 == hashlib.sha256(bundle.read_bytes()).hexdigest()
    assert stored.provenance.specadvisor_version == __version__
    assert stored.provenance.imported_at is not None


def test_bundle_is_versioned_json_with_a_format_marker(tmp_path):
    session = make_session()
    path = export_bundle(session, tmp_path / "s.json")
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["format"] == BUNDLE_FORMAT
    assert document["bundle_schema"] == BUNDLE_SCHEMA
    assert document["specadvisor_version"] == __version__
    assert document["redacted"] == {"secrets": True, "home_paths": False}
    assert document["session"]["id"] == session.id
    assert document["session"]["results"][2]["per_position"][0] == {
        "position": 0,
        "accepted": 900,
        "drafts": 1000,
        "rate": 0.9,
        "ci_low": 0.1,
        "ci_high": 0.95,
    }


def test_read_bundle_validates_without_a_database(tmp_path):
    session = make_session()
    path = export_bundle(session, tmp_path / "s.json")
    assert read_bundle(path).model_dump() == session.model_dump()


def test_importing_twice_creates_no_duplicate(tmp_path):
    path = export_bundle(make_session(), tmp_path / "s.json")
    copy = tmp_path / "renamed.json"
    shutil.copy(path, copy)
    with Store.open(tmp_path / "b.db") as target:
        first, created_first = import_bundle(target, path)
        again, created_again = import_bundle(target, path)
        renamed, created_renamed = import_bundle(target, copy)
        assert (created_first, created_again, created_renamed) == (True, False, False)
        assert again.id == renamed.id == first.id
        assert len(target.list_sessions()) == 1


def test_importing_back_into_the_source_keeps_the_local_session(tmp_path):
    session = make_session()
    with Store.open(tmp_path / "a.db") as source:
        source.save_session(session)
        path = export_bundle(session, tmp_path / "s.json")
        existing, created = import_bundle(source, path)
        assert created is False
        assert source.get_session(session.id).provenance.origin == "local"
        assert len(source.list_sessions()) == 1
        assert existing.id == session.id


def test_export_is_atomic_and_leaves_no_temporary_files(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    export_bundle(make_session(), out / "s.json")
    export_bundle(make_session(notes="second"), out / "s.json")
    assert [p.name for p in out.iterdir()] == ["s.json"]
    assert read_bundle(out / "s.json").notes == "second"
