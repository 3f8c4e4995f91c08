"""The methods and config keys a vLLM version serves, remembered between runs.

Answering them loads and validates the whole rule base (pydantic schemas for every rules file): on
a quiet machine that is a quarter of what `specadvisor detect` spends. The answer changes only with
the rules files (shipped and the user's), the rule-base code, specadvisor's version, the vLLM
version and platform; all are in the key, so a changed input misses and is answered afresh.

Imports nothing from the rule base (its package imports pydantic): a hit costs a hash of the rules
files and one small JSON read. Any problem with the file (absent, corrupt, unwritable) is a miss.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path

CACHE_FILE = "served-methods.json"
MAX_ENTRIES = 16  # one per (vLLM version, platform, rules) seen recently: a handful in practice
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")

Answer = tuple[list[str], list[str]]


def rules_folders() -> list[Path]:
    """The folders `load_rulebase()` reads by default (the shipped rules, then the user's), in order."""
    from specadvisor.resources import rules_dir
    from specadvisor.settings import paths

    folders = [rules_dir()]
    if paths().user_rules.is_dir():
        folders.append(paths().user_rules)
    return folders


def _rulebase_code() -> list[Path]:
    """The rule base's own modules: an edited registry (an editable install) must not be answered
    from a cache its old code wrote."""
    return sorted((Path(__file__).resolve().parent.parent / "rulebase").glob("*.py"))


def cache_key(version: str, platform: str | None) -> str:
    from specadvisor import __version__

    digest = hashlib.sha256(f"{__version__}\0{version}\0{platform}\0".encode())
    for folder in rules_folders():
        for path in sorted(p for p in folder.iterdir() if p.suffix in {".toml", ".json"}):
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    for path in _rulebase_code():
        stat = path.stat()
        digest.update(f"{path.name}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    return digest.hexdigest()


def _cache_path() -> Path:
    from specadvisor.settings import paths

    return paths().cache / CACHE_FILE


def _read(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _names(value: object) -> list[str] | None:
    """A cached list, only when it is what this module writes (the file is outside our control)."""
    if isinstance(value, list) and all(isinstance(v, str) and _NAME.fullmatch(v) for v in value):
        return list(value)
    return None


def served(version: str, platform: str | None, compute: Callable[[], Answer]) -> Answer:
    """compute()'s answer for this key, from the cache file when it holds it; stored there otherwise."""
    try:
        key = cache_key(version, platform)
    except OSError:  # a rules file vanished or is unreadable: no key, so no cache
        return compute()
    path = _cache_path()
    entries = _read(path)
    entry = entries.get(key)
    if isinstance(entry, dict):
        methods, keys = _names(entry.get("methods")), _names(entry.get("keys"))
        if methods is not None and keys is not None:
            return methods, keys
    answer = compute()
    _store(path, entries, key, answer)
    return answer


def _store(path: Path, entries: dict[str, object], key: str, answer: Answer) -> None:
    from specadvisor.errors import InputError
    from specadvisor.fileio import make_private_dirs, write_atomic

    entries.pop(key, None)
    entries[key] = {"methods": answer[0], "keys": answer[1]}
    kept = dict(list(entries.items())[-MAX_ENTRIES:])
    try:
        make_private_dirs(path.parent)
        write_atomic(path, json.dumps(kept, indent=1) + "\n")
    except (InputError, OSError):  # a read-only home: answer anyway, just slower next time
        pass
