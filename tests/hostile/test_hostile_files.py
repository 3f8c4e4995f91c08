"""Files and figures: output paths that are not regular files, hostile `import-bench` inputs, and
figures a bundle may not hold (finite is not enough: 1e308 overflowed the predictor and the charts)."""

from __future__ import annotations

import json
import os
import re

import pytest
from hostile_helpers import assert_one_line_error

from specadvisor import bounds
from specadvisor.store import Store
from specadvisor.store.bundle import bundle_document
from store_samples import make_session


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "s.db"
    session = make_session()
    with Store.open(path) as store:
        store.save_session(session)
    return path, session.id[:8]


def _special(kind: str, tmp_path):
    path = tmp_path / f"target-{kind}"
    if kind == "symlink":
        victim = tmp_path / "victim.txt"
        victim.write_text("keep me")
        path.symlink_to(victim)
    elif kind == "dangling-symlink":
        path.symlink_to(tmp_path / "nowhere" / "x")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        return "/dev/null"
    return str(path)


OUTPUTS = [
    ("report", lambda sid, out: ["report", sid, "-o", out]),
    ("export-plan", lambda sid, out: ["export-plan", sid, "--serve-params", out]),
    ("sessions-export", lambda sid, out: ["sessions", "export", sid, "-o", out]),
]


@pytest.mark.parametrize("kind", ["symlink", "dangling-symlink", "fifo", "device"])
@pytest.mark.parametrize("argv", [a for _, a in OUTPUTS], ids=[i for i, _ in OUTPUTS])
def test_an_output_that_is_not_a_regular_file_is_not_replaced(tmp_path, cli, db, kind, argv):
    path, sid = db
    target = _special(kind, tmp_path)
    before = os.lstat(target)
    code, _, err = cli(["--db", str(path), *argv(sid, target)])
    assert_one_line_error(code, err, 2)
    assert "--force" in err
    after = os.lstat(target)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)
    if kind == "symlink":
        assert (tmp_path / "victim.txt").read_text() == "keep me"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_force_replaces_a_symlink_itself_not_its_target(tmp_path, cli, db):
    path, sid = db
    target = _special("symlink", tmp_path)
    code, _, err = cli(["--db", str(path), "report", sid, "-o", target, "--force"])
    assert code == 0, err
    assert not os.path.islink(target) and (tmp_path / "victim.txt").read_text() == "keep me"


def test_a_regular_file_is_replaced_only_with_force(tmp_path, cli, db):
    path, sid = db
    out = tmp_path / "r.md"
    out.write_text("old")
    code, _, err = cli(["--db", str(path), "report", sid, "-o", str(out)])
    assert_one_line_error(code, err, 2)
    assert "already exists" in err and "--force" in err and out.read_text() == "old"
    code, _, err = cli(["--db", str(path), "report", sid, "-o", str(out), "--force"])
    assert code == 0, err
    assert out.read_text().startswith("# Speculative decoding sweep")


# ---------------------------------------------------------------- import-bench

GOOD = {"completed": 8, "output_throughput": 120.5, "duration": 10.0, "total_output_tokens": 1024, "p99_ttft_ms": 50.0, "max_concurrency": 1}


def _bench_file(tmp_path, content) -> str:
    path = tmp_path / "bench.json"
    path.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
    return str(path)


BENCH_CASES = [
    ("negative-throughput", {**GOOD, "output_throughput": -5.0}),
    ("huge-throughput", {**GOOD, "output_throughput": 1e308}),
    ("throughput-as-inf-text", {**GOOD, "output_throughput": "inf"}),
    ("throughput-as-nan-text", {**GOOD, "output_throughput": "nan"}),
    ("ttft-1e308", {**GOOD, "p99_ttft_ms": 1e308}),
    ("negative-latency", {**GOOD, "mean_tpot_ms": -1.0}),
    ("negative-completed", {**GOOD, "completed": -3}),
    ("completed-beyond-int64", {**GOOD, "completed": 2**64}),
    ("acceptance-rate-700-percent", {**GOOD, "spec_decode_num_drafts": 10, "spec_decode_acceptance_rate": 700}),
    ("position-rate-over-1", {**GOOD, "spec_decode_num_drafts": 10, "spec_decode_per_position_acceptance_rates": [1.5]}),
    ("duration-1e300", {**GOOD, "duration": 1e300}),
    ("nan-literal", b'{"completed": 1, "output_throughput": NaN}'),
    ("deep-nesting", b'{"completed": 1, "output_throughput": 1, "x": ' + b"[" * 5000 + b"]" * 5000 + b"}"),
    ("not-utf8", b'{"completed": 1, "output_throughput": "\xff"}'),
    ("top-level-list", b"[1]"),
]


@pytest.mark.parametrize("content", [c for _, c in BENCH_CASES], ids=[i for i, _ in BENCH_CASES])
def test_a_hostile_bench_file_is_one_line_and_nothing_stored(tmp_path, cli, content):
    db = tmp_path / "s.db"
    code, out, err = cli(["--db", str(db), "import-bench", _bench_file(tmp_path, content), "--model", "m"])
    assert_one_line_error(code, err, 2)
    assert out == "" and not db.exists()


@pytest.mark.parametrize("kind", ["device", "fifo", "symlink", "oversized", "directory"])
def test_a_bench_file_that_is_not_a_regular_file_is_refused_without_reading_it(tmp_path, cli, kind):
    path = tmp_path / "special.json"
    if kind == "device":
        path = "/dev/zero"  # read to the end, this was an OOM kill
    elif kind == "fifo":
        os.mkfifo(path)  # opened for reading, this hung
    elif kind == "symlink":
        (tmp_path / "real.json").write_text(json.dumps(GOOD))
        path.symlink_to(tmp_path / "real.json")
    elif kind == "oversized":
        with open(path, "wb") as handle:
            handle.truncate(25 * 1024 * 1024)
    elif kind == "directory":
        path.mkdir()
    db = tmp_path / "s.db"
    code, _, err = cli(["--db", str(db), "import-bench", str(path), "--model", "m"])
    assert_one_line_error(code, err, 2)
    assert not db.exists()


def test_a_sane_bench_file_still_imports(tmp_path, cli):
    db = tmp_path / "s.db"
    code, out, err = cli(["--db", str(db), "import-bench", _bench_file(tmp_path, GOOD), "--model", "m"])
    assert code == 0, err
    assert re.fullmatch(r"[0-9a-f-]{36}\n", out)


# ---------------------------------------------------------------- figures in a bundle


def _bundle(tmp_path, mutate) -> str:
    doc = json.loads(json.dumps(bundle_document(make_session())))
    mutate(doc["session"]["results"][1])
    path = tmp_path / "b.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


FIGURES = [
    ("throughput-1e308", lambda r: r.update(output_throughput=1e308)),
    ("throughput-1e12", lambda r: r.update(output_throughput=1e12)),
    ("interval-pm-1e308", lambda r: r.update(output_throughput_ci=[-1e308, 1e308])),
    ("interval-negative", lambda r: r.update(output_throughput_ci=[-5.0, 200.0])),
    ("interval-reversed", lambda r: r.update(output_throughput_ci=[200.0, 100.0])),
    ("ttft-p99-1e308", lambda r: r["ttft_ms"].update(p99=1e308)),
    ("tpot-negative", lambda r: r["tpot_ms"].update(median=-3.0)),
    ("trial-1e300", lambda r: r.update(trials=[1e300])),
    ("goodput-negative", lambda r: r.update(goodput_rps=-1.0)),
    ("startup-1e300", lambda r: r.update(startup_cold_s=1e300)),
]


@pytest.mark.parametrize("mutate", [m for _, m in FIGURES], ids=[i for i, _ in FIGURES])
def test_absurd_figures_are_refused_at_import(tmp_path, cli, mutate):
    db = tmp_path / "s.db"
    code, _, err = cli(["--db", str(db), "sessions", "import", _bundle(tmp_path, mutate)])
    assert_one_line_error(code, err, 2)
    assert not db.exists()


def test_figures_at_the_limits_render_everywhere(tmp_path, cli):
    """The largest figures import accepts go through the predictor, both reports, the charts and
    `sessions show` without a traceback or a 300-digit number."""

    def at_limits(r):
        r.update(output_throughput=bounds.MAX_TOKENS_PER_S, output_throughput_ci=[0.0, bounds.MAX_TOKENS_PER_S], trials=[bounds.MAX_TOKENS_PER_S])
        r["ttft_ms"].update(p99=bounds.MAX_LATENCY_MS, median=bounds.MAX_LATENCY_MS)
        r["tpot_ms"].update(p99=bounds.MAX_LATENCY_MS)

    db = tmp_path / "s.db"
    code, out, err = cli(["--db", str(db), "sessions", "import", "--json", _bundle(tmp_path, at_limits)])
    assert code == 0, err
    sid = json.loads(out)["session_id"][:8]
    for argv in (["report", sid], ["report", sid, "--format", "html"], ["sessions", "show", sid], ["sessions", "list"], ["snippet", sid]):
        code, out, err = cli(["--db", str(db), *argv])
        assert code in (0, 1), err
        assert "Traceback" not in err and not re.search(r"\d{25}", out), argv
