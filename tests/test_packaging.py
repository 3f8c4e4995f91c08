"""The shipped rules/ and assets/ are found from the editable install and from a built wheel.

A wheel carries them as specadvisor/_shipped/{rules,assets} (pyproject force-include); a missing
folder would only show up after release, on a user's machine, so the wheel is built and installed
into a fresh venv here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import specadvisor
from specadvisor import resources

REPO = Path(__file__).resolve().parent.parent


def _shipped_files(folder: str) -> set[str]:
    root = REPO / folder
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts and not p.name.endswith(".pyc")}


def test_rules_and_assets_found_from_the_editable_install():
    assert Path(specadvisor.__file__).resolve().parent == REPO / "specadvisor"
    assert resources.rules_dir() == REPO / "rules"
    assert resources.assets_dir() == REPO / "assets"
    assert any(p.suffix == ".toml" for p in resources.rules_dir().iterdir())


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(REPO)],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    (built,) = out.glob("specadvisor-*.whl")
    return built


@pytest.mark.slow
def test_wheel_contains_shipped_rules_assets_and_the_store(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for folder in ("rules", "assets"):
        expected = {f"specadvisor/_shipped/{folder}/{name}" for name in _shipped_files(folder)}
        assert expected, f"{folder}/ is empty in the checkout"
        assert expected <= names, sorted(expected - names)
    assert "specadvisor/store/migrations.py" in names
    assert "specadvisor/cli/sessions.py" in names
    assert not any(n.startswith(("tests/", ".venv/")) for n in names)


@pytest.mark.slow
def test_rules_dir_works_from_a_wheel_installed_in_a_fresh_venv(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
        timeout=180,
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    probe = (
        "import json, specadvisor; from specadvisor.resources import rules_dir, assets_dir;"
        "print(specadvisor.__file__); print(rules_dir()); print(assets_dir());"
        "print(json.dumps(sorted(p.name for p in rules_dir().iterdir())))"
    )
    done = subprocess.run([str(python), "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True, check=True, timeout=60)
    package_file, rules, assets, listing = done.stdout.strip().splitlines()
    site = Path(package_file).resolve().parent
    assert site.is_relative_to(venv.resolve())
    assert Path(rules) == site / "_shipped" / "rules"
    assert Path(assets) == site / "_shipped" / "assets"
    assert json.loads(listing) == sorted(p.name for p in (REPO / "rules").iterdir() if p.name != "__pycache__")
