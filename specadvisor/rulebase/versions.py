"""vLLM version strings compared as numbers, so "0.9" < "0.16" < "0.20.1rc1".

The rule base names versions like "0.20" or "0.33.0"; probes report "0.32.0+cpu" or "v0.20.1rc1".
"""

from __future__ import annotations

import re

from specadvisor.errors import InputError

LATEST_KNOWN = "0.33.0"
"""Assumed when nobody says which vLLM will serve: the newest release the rule base was written for."""

_VERSION = re.compile(r"^\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?")


def parse_version(text: str) -> tuple[int, int, int]:
    match = _VERSION.match(str(text))
    if not match:
        raise InputError(f"not a vLLM version: {text!r}", hint="write it as X.Y or X.Y.Z, e.g. 0.32.0")
    return tuple(int(part or 0) for part in match.groups())  # type: ignore[return-value]


def is_version(text: str) -> bool:
    return bool(_VERSION.match(str(text)))


def effective_version(version: str | None) -> str:
    return version or LATEST_KNOWN


def in_range(version: str | None, min_version: str | None, removed_in: str | None) -> bool:
    """True when `version` (None = latest known) is >= min_version and < removed_in."""
    v = parse_version(effective_version(version))
    if min_version and v < parse_version(min_version):
        return False
    if removed_in and v >= parse_version(removed_in):
        return False
    return True
