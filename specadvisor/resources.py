"""Find the shipped rules/ and assets/ from a source checkout, an editable install or a wheel.

In a checkout they sit beside the package (top-level rules/, assets/); a wheel carries them as
specadvisor/_shipped/{rules,assets} (see pyproject's force-include).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


@cache
def _shipped(name: str) -> Path:
    for candidate in (_PACKAGE_DIR / "_shipped" / name, _PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"specadvisor's {name}/ folder is missing from the installation; reinstall specadvisor")


def rules_dir() -> Path:
    return _shipped("rules")


def assets_dir() -> Path:
    return _shipped("assets")
