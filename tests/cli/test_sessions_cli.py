"""`specadvisor sessions ...` end to end on real SQLite files, in-process through cli.main."""

from __future__ import annotations

import io
import json
import sys
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "store"))
from specadvisor.cli.main import main
from specadvisor.store import Store
from store_samples import make_session


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "cli.db"
    with Store.open(path) as store:
        store.save_session(make_session(id="aaaa1111-0000-4000-8000-000000000001"))
        store.save_session(make_session(id="bbbb2222-0000-4000-8000-000000000002", vllm_version="0.31.0", notes="run with --api-key topsecret1"))
    return path


def run(db, *argv, capsys):
    code = main(["--db", str(db), "sessions", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_list_json_and_table(db, capsys):
    code, out, _ = run(db, "list", "--json", capsys=capsys)
    assert code == 0
    listed = json.loads(out)
    assert {s["id"] for s in listed} == {"aaaa1111-0000-4000-8000-000000000001", "bbbb2222-0000-4000-8000-000000000002"}
    assert listed[0]["best_arm"] == "ngram N=4 c1"
    code, out, _ = run(db, "list", capsys=capsys)
    assert code == 0 and "aaaa1111" in out and "1.73x" in out


def test_list_on_an_empty_database_says_how_to_start(tmp_path, capsys):
    code, out, err = run(tmp_path / "empty.db", "list", capsys=capsys)
    assert code == 0 and out == "" and "No sessions yet" in err  # piped: stdout has rows only
    assert not (tmp_path / "empty.db").exists()  # listing creates no database


def test_show_by_prefix(db, capsys):
    code, out, _ = run(db, "show", "aaaa", "--json", capsys=capsys)
    assert code == 0 and json.loads(out)["id"] == "aaaa1111-0000-4000-8000-000000000001"
    code, out, _ = run(db, "show", "bbbb", capsys=capsys)
    assert code == 0 and "ngram N=4 c1" in out and "900/1000" in out


def test_show_breaks_a_long_serve_command_with_continuations(db, capsys):
    """Issue 41: the command was one long line, wrapped by the terminal without `\\`."""
    code, out, _ = run(db, "show", "aaaa", capsys=capsys)
    assert code == 0
    lines = out[out.index("serve with: ") :].splitlines()
    command = [lines[0]] + [line for line in lines[1:] if line.startswith("    ")]
    assert len(command) > 1 and all(line.endswith(" \\") for line in command[:-1]) and not command[-1].endswith("\\")
    assert command[-1].strip().startswith("--speculative-config '{") and all(len(line) <= 110 for line in command)


def test_show_of_a_session_over_the_row_cap_summarises_the_table_and_says_so(tmp_path, capsys, over_the_cap_session, capped_tables):
    """Like the report: the baselines, the fastest measured arms per concurrency and the recommended
    arm, with a line saying how many arms are left out; `--json` still lists every arm."""
    session = over_the_cap_session
    with Store.open(tmp_path / "big.db") as store:
        store.save_session(session)
    code, out, _ = run(tmp_path / "big.db", "show", "cccc", capsys=capsys)
    assert code == 0
    assert "This session holds 31 arms (11 measured); the table shows 3:" in out and "Left out: 28 arm(s)" in out
    listed = [line.split("  ")[0] for line in out.splitlines() if line.startswith(("baseline", "ngram"))]
    assert listed == ["baseline c1", "ngram 24 c1", "ngram 27 c1"]  # the two fastest measured, in session order
    code, out, _ = run(tmp_path / "big.db", "show", "cccc", "--json", capsys=capsys)
    assert code == 0 and len(json.loads(out)["arms"]) == 31


def test_compare_over_the_row_cap_leaves_out_rows_measured_nowhere_and_says_so(db, tmp_path, capsys, monkeypatch):
    from specadvisor.domain import Arm
    from specadvisor.report import content

    monkeypatch.setattr(content, "MAX_REPORT_ARMS", 5)
    with Store.open(db) as store:
        session = store.get_session("bbbb")
        extra = [Arm(id=f"never-{i}", label=f"never run {i}") for i in range(6)]
        store.save_session(session.model_copy(update={"arms": [*session.arms, *extra]}))
        measured = {r.arm_id for r in session.results}
    code, out, _ = run(db, "compare", "aaaa", "bbbb", capsys=capsys)
    assert code == 0
    assert "never run 0" not in out and "are not listed; `specadvisor sessions compare aaaa1111 bbbb2222 --json` lists every arm." in out
    assert all(arm.label in out for arm in session.arms if arm.id in measured)
    code, out, _ = run(db, "compare", "aaaa", "bbbb", "--json", capsys=capsys)
    assert code == 0 and {f"never-{i}" for i in range(6)} <= {row["arm_id"] for row in json.loads(out)["arms"]}


def test_show_unknown_id_is_exit_2_with_hint(db, capsys):
    code, _, err = run(db, "show", "zzzz", capsys=capsys)
    assert code == 2
    assert err.strip().splitlines() == ["specadvisor: error: no session matches 'zzzz' (see `specadvisor sessions list` for the ids)"]


def test_compare_two_sessions(db, capsys):
    code, out, _ = run(db, "compare", "aaaa", "bbbb", "--json", capsys=capsys)
    assert code == 0
    comparison = json.loads(out)
    assert [c["short_id"] for c in comparison["sessions"]] == ["aaaa1111", "bbbb2222"]
    assert any(d.startswith("vLLM version differs") for d in comparison["differences"])
    code, out, _ = run(db, "compare", "aaaa", "bbbb", capsys=capsys)
    assert code == 0 and "vLLM version differs" in out and "best speedup" in out
    assert "1.00x (baseline)" in out and "1.00x (no interval)" not in out  # the baseline is the reference, as in the TUI's Compare


def test_compare_needs_two_distinct_sessions(db, capsys):
    assert run(db, "compare", "aaaa", capsys=capsys)[0] == 2
    assert run(db, "compare", "aaaa", "aaaa1111-0000-4000-8000-000000000001", capsys=capsys)[0] == 2


def test_delete_refuses_without_yes_when_stdin_is_not_a_terminal(db, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))
    code, _, err = run(db, "delete", "aaaa", capsys=capsys)
    assert code == 2 and "pass --yes" in err
    with Store.open(db) as store:
        assert len(store.list_sessions()) == 2


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_delete_asks_and_honours_the_answer(db, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", _Terminal())
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    assert run(db, "delete", "aaaa", capsys=capsys)[0] == 2
    monkeypatch.setattr("builtins.input", lambda prompt: "y")
    assert run(db, "delete", "aaaa", capsys=capsys)[0] == 0
    with Store.open(db) as store:
        assert [s.id[:4] for s in store.list_sessions()] == ["bbbb"]


def test_delete_with_yes(db, capsys):
    code, out, _ = run(db, "delete", "bbbb", "--yes", "--json", capsys=capsys)
    assert code == 0 and json.loads(out) == {"deleted": "bbbb2222-0000-4000-8000-000000000002"}


def test_export_import_round_trip_between_databases(db, tmp_path, capsys):
    bundle = tmp_path / "b.json"
    code, out, _ = run(db, "export", "bbbb", "-o", str(bundle), "--json", capsys=capsys)
    assert code == 0 and json.loads(out)["path"] == str(bundle)
    assert "topsecret1" not in bundle.read_text(encoding="utf-8")
    other = tmp_path / "other.db"
    code, out, _ = run(other, "import", str(bundle), "--json", capsys=capsys)
    assert code == 0 and json.loads(out) == {"session_id": "bbbb2222-0000-4000-8000-000000000002", "created": True, "origin": "imported"}
    code, out, _ = run(other, "import", str(bundle), capsys=capsys)
    assert code == 0 and "already in the database" in out
    with Store.open(db) as a, Store.open(other) as b:
        original = a.get_session("bbbb").model_dump(exclude={"provenance", "notes"})
        assert b.get_session("bbbb").model_dump(exclude={"provenance", "notes"}) == original
        assert len(b.list_sessions()) == 1


def test_export_redact_paths(db, tmp_path, capsys):
    bundle = tmp_path / "p.json"
    assert run(db, "export", "aaaa", "-o", str(bundle), "--redact-paths", capsys=capsys)[0] == 0
    assert "/home/alice" not in bundle.read_text(encoding="utf-8")


def test_bad_bundle_exits_2_and_creates_no_database(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "specadvisor-session-bundle", "bundle_schema": "9.0", "session": {}}', encoding="utf-8")
    target = tmp_path / "never.db"
    code, _, err = run(target, "import", str(bad), capsys=capsys)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "bundle schema 9.0 is newer" in err
    assert not target.exists()


def test_export_to_missing_folder_is_exit_2(db, tmp_path, capsys):
    code, _, err = run(db, "export", "aaaa", "-o", str(tmp_path / "no" / "such" / "b.json"), capsys=capsys)
    assert code == 2 and "does not exist" in err


def test_corrupt_database_is_exit_3_naming_the_file(tmp_path, capsys):
    path = tmp_path / "junk.db"
    path.write_bytes(b"junk" * 1000)
    code, _, err = run(path, "list", capsys=capsys)
    assert code == 3 and str(path) in err and len(err.strip().splitlines()) == 1


def test_hostile_strings_are_not_rich_markup(tmp_path, capsys):
    path = tmp_path / "m.db"
    with Store.open(path) as store:
        store.save_session(make_session(id=str(uuid.uuid4()), model="[red]evil[/red]", notes="[link=http://x]click[/link]"))
    code, out, _ = run(path, "show", "--", store_id(path), capsys=capsys)
    assert code == 0 and "model [red]evil[/red]" in out and "[link=http://x]click[/link]" in out


def store_id(path) -> str:
    with Store.open(path) as store:
        return store.list_sessions()[0].id
