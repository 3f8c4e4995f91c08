"""An imported bundle is evidence from elsewhere, whatever hardware fingerprint it carries (round
three): `advise` in the CLI counted it as measured on this machine ("Measured on this machine:
9.00x") while the TUI did not. Both now ask one function (specadvisor.app.evidence)."""

from __future__ import annotations

import json

import pytest

from specadvisor.app.evidence import sessions_measured_here
from specadvisor.cli.main import main
from specadvisor.domain import Arm, ArmResult, ArmStatus, Session
from specadvisor.hardware import hypothetical
from specadvisor.store import Store
from specadvisor.store.bundle import bundle_document

MODEL = "acme/support-bot-ft"


def _session(speedup: float) -> Session:
    hw = hypothetical("L40S")  # the fingerprint `advise --gpu L40S` computes: copied into the bundle
    return Session(
        model=MODEL,
        hardware=hw,
        hardware_fingerprint=hw.fingerprint(),
        vllm_version="0.32.0",
        status="finished",
        arms=[
            Arm(id="baseline", label="no speculation"),
            Arm(id="suffix-n8", label="suffix N=8", method="suffix", n=8, speculative_config={"method": "suffix", "num_speculative_tokens": 8}),
        ],
        results=[ArmResult(arm_id="baseline", output_throughput=50.0), ArmResult(arm_id="suffix-n8", status=ArmStatus.ok, output_throughput=50.0 * speedup)],
    )


def _advise(capsys, db) -> dict:
    argv = ["--db", str(db), "advise", "--model", MODEL, "--gpu", "L40S", "--vllm-version", "0.32.0", "--offline", "--json"]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def _local_evidence(data: dict) -> list[dict]:
    return [e for c in data["candidates"] for e in c["evidence"] if e["local"]]


@pytest.mark.parametrize("origin", ["bundle", "import-bench"])
def test_advise_never_counts_evidence_from_elsewhere_as_measured_here(tmp_path, capsys, origin):
    db = tmp_path / "s.db"
    session = _session(9.0)
    if origin == "bundle":
        path = tmp_path / "b.json"
        path.write_text(json.dumps(bundle_document(session)), encoding="utf-8")
        assert main(["--db", str(db), "sessions", "import", str(path)]) == 0
    else:
        session.provenance.measured_on = "elsewhere"
        session.provenance.entry_point = "import-bench"
        with Store.open(db) as store:
            store.save_session(session)
    capsys.readouterr()
    data = _advise(capsys, db)
    assert _local_evidence(data) == []
    assert "9.00x" not in json.dumps(data)
    assert sessions_measured_here(db, MODEL, hypothetical("L40S")) == []  # the TUI's answer (tui/services binds it)


def test_the_cli_and_the_tui_agree_on_a_session_measured_here(tmp_path, capsys):
    db = tmp_path / "s.db"
    session = _session(1.8)
    with Store.open(db) as store:
        store.save_session(session)
    data = _advise(capsys, db)
    assert len(_local_evidence(data)) == 1
    assert [s.id for s in sessions_measured_here(db, MODEL, hypothetical("L40S"))] == [session.id]  # the TUI's answer
