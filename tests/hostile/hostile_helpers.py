"""Helpers of the hostile-input suite: run the CLI in-process and check the three promises
(the documented exit code, one `specadvisor: error:` line, nothing written)."""

from __future__ import annotations

from pathlib import Path

from specadvisor.cli.main import main


def run_cli(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_line_error(code: int, err: str, expected_code: int) -> None:
    assert code == expected_code, err
    assert err.startswith("specadvisor: error: "), err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "\x1b" not in err and "\r" not in err and "Traceback" not in err


def files_in(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}
