"""The core stays free of the UI: only specadvisor/tui imports Textual (harlequin's rule)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "specadvisor"


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _modules_importing(prefix: str) -> list[str]:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE.parent)
        if relative.parts[:2] == ("specadvisor", "tui"):
            continue
        if any(name == prefix or name.startswith(prefix + ".") for name in _imported_modules(path)):
            offenders.append(str(relative))
    return offenders


def test_only_the_tui_imports_textual():
    assert _modules_importing("textual") == []


def test_scan_sees_real_imports():
    """Guard against a scan that passes because it reads nothing."""
    assert "pydantic" in _imported_modules(PACKAGE / "domain.py")


def test_layer_contracts_hold():
    """The import-linter contracts in pyproject.toml (also run by .ci/run as `lint-imports`)."""
    from importlinter.cli import lint_imports

    assert lint_imports() == 0
