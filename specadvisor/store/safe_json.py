"""Read a JSON file someone else wrote, treating it as hostile until proven otherwise.

Every check here fails with an InputError (exit code 2) naming the file and the problem, before
anything is written anywhere. The limits are far above what a real session produces.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from pathlib import Path
from typing import Any

from specadvisor import bounds
from specadvisor.errors import InputError

MAX_FILE_BYTES = 20 * 1024 * 1024
MAX_DEPTH = 32
MAX_STRING_CHARS = 200_000
MAX_ARRAY_ITEMS = 200_000
MAX_OBJECT_KEYS = 2_000
MIN_INT, MAX_INT = -(2**63), 2**63 - 1  # what SQLite's INTEGER holds
MAX_FIGURE = bounds.MAX_FIGURE  # 1e308 is finite, and overflows the first sum it reaches
# Terminal control characters (and bidi overrides) would let a bundle rewrite or disguise what the
# screen of whoever lists it shows.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")  # \r too: it hides a line's start


def read_regular_file(path: Path, *, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a plain file no larger than max_bytes: no symlinks, devices, FIFOs or folders."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file", hint="check the path") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror})", hint="check the path and its permissions") from None
    if stat.S_ISLNK(info.st_mode):
        raise InputError(f"{path} is a symbolic link", hint="pass the bundle file itself, not a link to it")
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"{path} is not a regular file", hint="pass a bundle written by `specadvisor sessions export`")
    if info.st_size > max_bytes:
        raise InputError(f"{path} is {info.st_size} bytes, over the {max_bytes}-byte limit", hint="bundles are much smaller; check the file")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise InputError(f"{path}: cannot be opened ({exc.strerror})", hint="check the path and its permissions") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise InputError(f"{path} is not a regular file", hint="pass a bundle written by `specadvisor sessions export`")
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise InputError(f"{path} is over the {max_bytes}-byte limit", hint="bundles are much smaller; check the file")
    return data


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed")


def parse_untrusted_json(data: bytes, source: str) -> Any:
    """Strict UTF-8 JSON without NaN/Infinity, then a walk enforcing depth, size and character limits."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{source} is not UTF-8 text (bad byte at offset {exc.start})", hint="pass a bundle written by `specadvisor sessions export`"
        ) from None
    try:
        value = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_no_duplicate_keys)
    except RecursionError:
        # json's C scanner stops itself at the interpreter's recursion limit (about 1,000 levels);
        # anything shallower is parsed and then measured against MAX_DEPTH below.
        raise InputError(f"{source}: JSON nested deeper than {MAX_DEPTH} levels", hint="the file is not a specadvisor bundle") from None
    except ValueError as exc:
        raise InputError(f"{source} is not valid JSON: {_one_line(str(exc))}", hint="pass a bundle written by `specadvisor sessions export`") from None
    if not _within_limits(value):
        _check_value(value, source, "$", 0)  # walks again, tracking where, to name the first problem
    return value


def _within_limits(document: Any) -> bool:
    """The same limits as _check_value, decided in one pass without building a path per value: a
    20 MB bundle holds about a million values, and naming where each one sits cost seconds. Strings
    and numbers are gathered and checked in bulk."""
    strings: list[str] = []
    floats: list[float] = []
    ints: list[int] = []
    stack = [(document, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            return False
        kind = type(value)
        if kind is dict:
            if len(value) > MAX_OBJECT_KEYS:
                return False
            strings.extend(value)
            items = value.values()
        elif kind is list:
            if len(value) > MAX_ARRAY_ITEMS:
                return False
            items = value
        else:
            items = (value,)
            depth -= 1  # a scalar at the top: checked at its own depth below
        if depth >= MAX_DEPTH and items:
            return False  # its children would sit deeper than the limit
        for item in items:
            item_kind = type(item)
            if item_kind is str:
                strings.append(item)
            elif item_kind is float:
                floats.append(item)
            elif item_kind is int:
                ints.append(item)
            elif item_kind is dict or item_kind is list:
                stack.append((item, depth + 1))
            elif item_kind is not bool and item is not None:
                return False  # not a JSON value: let the walk say so
    if max(map(len, strings), default=0) > MAX_STRING_CHARS or _CONTROL.search("".join(strings)):
        return False
    if floats and not (all(map(math.isfinite, floats)) and max(map(abs, floats)) <= MAX_FIGURE):
        return False
    return not ints or (min(ints) >= MIN_INT and max(ints) <= MAX_INT)


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)  # built in C: a bundle holds 200,000 objects; only a duplicate is looked for by hand
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {key[:40]!r}")
            seen.add(key)
    return result


def _check_value(value: Any, source: str, where: str, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise InputError(f"{source}: JSON nested deeper than {MAX_DEPTH} levels at {where}", hint="the file is not a specadvisor bundle")
    if isinstance(value, str):
        _check_string(value, source, where)
    elif isinstance(value, float) and not math.isfinite(value):
        raise InputError(f"{source}: non-finite number at {where}", hint="the file is not a specadvisor bundle")
    elif isinstance(value, float) and abs(value) > MAX_FIGURE:
        raise InputError(
            f"{source}: number {value:g} at {where} is beyond any real measurement (limit {MAX_FIGURE:g})", hint="the file was edited or corrupted"
        )
    elif isinstance(value, int) and not isinstance(value, bool) and not MIN_INT <= value <= MAX_INT:
        raise InputError(f"{source}: integer at {where} does not fit in 64 bits", hint="the file is not a specadvisor bundle")
    elif isinstance(value, list):
        if len(value) > MAX_ARRAY_ITEMS:
            raise InputError(f"{source}: array of {len(value)} items at {where}, over the {MAX_ARRAY_ITEMS} limit", hint="the file is not a specadvisor bundle")
        for index, item in enumerate(value):
            _check_value(item, source, f"{where}[{index}]", depth + 1)
    elif isinstance(value, dict):
        if len(value) > MAX_OBJECT_KEYS:
            raise InputError(
                f"{source}: object with {len(value)} keys at {where}, over the {MAX_OBJECT_KEYS} limit", hint="the file is not a specadvisor bundle"
            )
        for key, item in value.items():
            _check_string(key, source, f"{where} (a key)")
            _check_value(item, source, f"{where}.{key[:40]}", depth + 1)


def _check_string(value: str, source: str, where: str) -> None:
    if len(value) > MAX_STRING_CHARS:
        raise InputError(
            f"{source}: string of {len(value)} characters at {where}, over the {MAX_STRING_CHARS} limit", hint="the file is not a specadvisor bundle"
        )
    match = _CONTROL.search(value)
    if match:
        raise InputError(f"{source}: control character {match.group()!r} in a string at {where}", hint="the file is not a specadvisor bundle")


def _one_line(text: str) -> str:
    return " ".join(text.split())[:200]
