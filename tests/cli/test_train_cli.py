"""`specadvisor train` and `drafters`: bad input is one line and a non-zero exit, before anything starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from specadvisor.cli.main import main


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["train", "--model", "m"], "no training budget given"),
        (["train", "--model", "m", "--minutes", "0"], "--minutes must be more than 0"),
        (["train", "--model", "m", "--steps", "0"], "--steps must be a whole number from 1"),
        (["train", "--model", "m", "--minutes", "1", "--steps", "3"], "not allowed with argument"),
        (["train", "--model", "m", "--steps", "3", "--heldout", "60"], "--heldout must be from 1 to 40"),
        (["train", "--model", "m", "--steps", "3", "--temperature", "3"], "--temperature must be from 0 to 2"),
        (["train", "--model", "m", "--steps", "3", "--concurrency", "0,2"], "--concurrency needs positive integers"),  # read as `sweep --concurrency` reads it
        (["train", "--model", "m", "--steps", "3", "--server-arg=--port=1"], "--server-arg --port is not allowed"),
        (["drafters", "show", "nope"], "no trained drafter matches 'nope'"),
        (["drafters", "judge", "nope"], "no trained drafter matches 'nope'"),
    ],
)
def test_bad_input_is_one_line(argv: list[str], expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--db", str(tmp_path / "x.db"), *argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and err[0].startswith("specadvisor: error:") and expected in err[0]


def test_drafters_list_is_empty_on_a_new_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--db", str(tmp_path / "x.db"), "drafters", "list"]) == 0
    assert "no trained drafters yet" in capsys.readouterr().out
    assert main(["--db", str(tmp_path / "x.db"), "drafters", "list", "--json"]) == 0
    assert capsys.readouterr().out.strip() == "[]"
