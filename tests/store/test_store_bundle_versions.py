"""Bundles of the previous schema (1.0, before provenance) still import; 1.1 keeps the provenance."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from specadvisor.domain import HardwareProfile, Provenance
from specadvisor.store import Store
from specadvisor.store.bundle import export_bundle, import_bundle, read_bundle
from store_samples import make_session

# Fields the 1.1 schema added; a 1.0 bundle has none of them.
NEW_PROVENANCE = ("entry_point", "measured_on", "rules_sha256", "prompt_source", "prompt_sha256", "prompt_count",
                  "started_at", "finished_at", "resumed_at", "server_exposed", "notes")  # fmt: skip


def write_v10_bundle(path, session) -> None:
    """What specadvisor 0.1 with bundle schema 1.0 wrote (no provenance facts, no argv or telemetry)."""
    data = session.model_dump(mode="json")
    for key in NEW_PROVENANCE:
        data["provenance"].pop(key)
    data["hardware"].pop("unknown")
    data["hardware"]["engine"].pop("torch_version")
    for result in data["results"]:
        result.pop("serve_argv")
        result.pop("telemetry")
    document = {"format": "specadvisor-session-bundle", "bundle_schema": "1.0", "specadvisor_version": "0.1.0",
                "exported_at": "2026-11-20T10:00:00+00:00", "redacted": {"secrets": True, "home_paths": False}, "session": data}  # fmt: skip
    path.write_text(json.dumps(document))


def test_v10_bundle_of_a_demo_session_imports_with_explicit_unknowns(tmp_path):
    old = make_session(hardware=HardwareProfile(), status="finished")
    write_v10_bundle(tmp_path / "old.json", old)
    with Store.open(tmp_path / "a.db") as store:
        _, created = import_bundle(store, tmp_path / "old.json")
        stored = store.get_session(old.id)
    assert created
    assert stored.model_dump(exclude={"provenance", "hardware"}) == old.model_dump(exclude={"provenance", "hardware"})
    assert (stored.hardware.os, stored.hardware.python, stored.hardware.cpu.model) == ("unknown", "unknown", "unknown")
    assert stored.provenance.entry_point == "unknown" and stored.provenance.origin == "imported"
    assert stored.provenance.imported_from == "old.json" and stored.provenance.specadvisor_version == "0.1.0"
    assert stored.provenance.started_at == min(r.started_at for r in old.results)


def test_v10_bundle_with_recorded_hardware_keeps_it(tmp_path):
    old = make_session()
    write_v10_bundle(tmp_path / "old.json", old)
    session = read_bundle(tmp_path / "old.json")
    assert session.hardware.os == old.hardware.os and session.hardware.cpu == old.hardware.cpu and session.hardware.unknown == []


def test_import_keeps_where_the_session_was_measured(tmp_path):
    t = datetime(2026, 12, 1, 5, 0, tzinfo=UTC)
    session = make_session(provenance=Provenance(entry_point="sweep --cpu", measured_on="this machine", rules_sha256="a" * 64,
                                                 prompt_sha256="b" * 64, prompt_count=4, started_at=t, finished_at=t))  # fmt: skip
    export_bundle(session, tmp_path / "s.json")
    with Store.open(tmp_path / "b.db") as store:
        import_bundle(store, tmp_path / "s.json")
        stored = store.get_session(session.id)
    kept = ("entry_point", "measured_on", "rules_sha256", "prompt_sha256", "prompt_count", "started_at", "finished_at")
    assert {k: getattr(stored.provenance, k) for k in kept} == {k: getattr(session.provenance, k) for k in kept}
    assert stored.provenance.origin == "imported" and stored.provenance.bundle_sha256
