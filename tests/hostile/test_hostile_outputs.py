"""One rule for every output path (`report -o`, `export-plan --serve-params`, `sessions export -o`, the
TUI's saves; specadvisor.fileio.output_target): `-` is stdout, a folder gets the default name inside
it, an existing file is replaced only with --force, and the live database never (round three:
`report ID -o <the database>` destroyed it; `-o dir/` wrote a file named `dir`)."""

from __future__ import annotations

import json

import pytest
from hostile_helpers import assert_one_line_error, files_in

from specadvisor.store import Store
from store_samples import make_session


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "data" / "s.db"
    path.parent.mkdir()
    session = make_session()
    with Store.open(path) as store:
        store.save_session(session)
    return path, session.id[:8]


def _outputs(sid: str, target: str) -> list[list[str]]:
    return [["report", sid, "-o", target], ["export-plan", sid, "--serve-params", target], ["sessions", "export", sid, "-o", target]]


@pytest.mark.parametrize("sidecar", ["", "-wal", "-shm"])
@pytest.mark.parametrize("which", [0, 1, 2], ids=["report", "export-plan", "sessions-export"])
def test_the_live_database_is_never_an_output_even_with_force(tmp_path, cli, db, which, sidecar):
    path, sid = db
    before = path.read_bytes()
    target = str(path) + sidecar
    code, _, err = cli(["--db", str(path), *_outputs(sid, target)[which], "--force"])
    assert_one_line_error(code, err, 2)
    assert "is the sessions database" in err
    assert path.read_bytes() == before
    with Store.open(path) as store:
        assert store.get_session(sid).id.startswith(sid)


def test_a_link_to_the_database_is_refused_too(tmp_path, cli, db):
    path, sid = db
    link = tmp_path / "innocent.md"
    link.symlink_to(path)
    code, _, err = cli(["--db", str(path), "report", sid, "-o", str(link), "--force"])
    assert_one_line_error(code, err, 2)
    assert "is the sessions database" in err and link.is_symlink()


@pytest.mark.parametrize("which", [0, 1, 2], ids=["report", "export-plan", "sessions-export"])
def test_an_existing_file_is_replaced_only_with_force(tmp_path, cli, db, which):
    path, sid = db
    existing = tmp_path / "mine.txt"
    existing.write_text("my notes")
    code, _, err = cli(["--db", str(path), *_outputs(sid, str(existing))[which]])
    assert_one_line_error(code, err, 2)
    assert "already exists" in err and "--force" in err and existing.read_text() == "my notes"
    code, _, err = cli(["--db", str(path), *_outputs(sid, str(existing))[which], "--force"])
    assert code == 0, err
    assert existing.read_text() != "my notes"


@pytest.mark.parametrize("slash", ["/", ""], ids=["dir-slash", "existing-dir"])
@pytest.mark.parametrize("which, name", [(0, "specadvisor-{sid}.md"), (1, "serve_params-{sid}.json"), (2, "specadvisor-{sid}.json")])
def test_a_folder_gets_the_default_name_inside_it(tmp_path, cli, db, which, name, slash):
    path, sid = db
    folder = tmp_path / "out"
    folder.mkdir()
    code, _, err = cli(["--db", str(path), *_outputs(sid, str(folder) + slash)[which]])
    assert code == 0, err
    companions = {f"serve_params-{sid}.prompts.jsonl"} if which == 1 else set()  # export-plan writes the prompts beside it
    assert files_in(folder) == {name.format(sid=sid)} | companions


@pytest.mark.parametrize("which", [0, 1, 2], ids=["report", "export-plan", "sessions-export"])
def test_a_missing_folder_is_one_line_and_nothing_written(tmp_path, cli, db, which):
    path, sid = db
    code, _, err = cli(["--db", str(path), *_outputs(sid, str(tmp_path / "nowhere") + "/")[which]])
    assert_one_line_error(code, err, 2)
    assert "does not exist" in err and not (tmp_path / "nowhere").exists()


def test_dash_is_stdout(tmp_path, cli, db):
    path, sid = db
    code, out, err = cli(["--db", str(path), "report", sid, "-o", "-"])
    assert code == 0, err
    assert out.startswith("# Speculative decoding sweep") and not (tmp_path / "-").exists()
    code, out, err = cli(["--db", str(path), "export-plan", sid, "--serve-params", "-"])
    assert code == 0, err
    assert json.loads(out)[0] == {"_benchmark_name": "baseline"} and "vllm bench sweep serve" in err
    code, out, err = cli(["--db", str(path), "sessions", "export", sid, "-o", "-"])
    assert code == 0, err
    bundle = tmp_path / "copy.json"
    bundle.write_text(out)
    code, _, err = cli(["--db", str(tmp_path / "other.db"), "sessions", "import", str(bundle)])
    assert code == 0, err
    assert not (tmp_path / "-").exists()


def test_a_bundle_that_imported_exports_again(tmp_path, cli):
    """12,000 arms: under the 20 MB limit when imported, over it only by the export's indentation."""
    from specadvisor.domain import Arm, ArmResult
    from specadvisor.store.bundle import bundle_document

    session = make_session()
    session.samples = []
    session.recommendation = None
    base = session.results[0]
    for i in range(12_000):
        arm = Arm(id=f"ngram-n2-x{i}", label=f"ngram N=2 run {i}", method="ngram", n=2, speculative_config={"method": "ngram", "num_speculative_tokens": 2})
        session.arms.append(arm)
        session.results.append(
            ArmResult(arm_id=arm.id, output_throughput=100.0 + i % 7, completed=32, output_tokens=8192, ttft_ms=base.ttft_ms, tpot_ms=base.tpot_ms)
        )
    path = tmp_path / "big.json"
    path.write_text(json.dumps(bundle_document(session), separators=(",", ":")), encoding="utf-8")
    assert path.stat().st_size < 20_000_000
    db = tmp_path / "s.db"
    code, _, err = cli(["--db", str(db), "sessions", "import", str(path)])
    assert code == 0, err
    again = tmp_path / "again.json"
    code, _, err = cli(["--db", str(db), "sessions", "export", session.id[:8], "-o", str(again)])
    assert code == 0, err
    code, _, err = cli(["--db", str(tmp_path / "other.db"), "sessions", "import", str(again)])
    assert code == 0, err
