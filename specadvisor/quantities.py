"""Numbers as people type them: `2k` tokens, `1,8` concurrency levels, `0,7` temperature, `about 30 min`.

Shared by the TUI's forms and the CLI, so a value means the same wherever it is typed. Every parser
takes the field's label (errors name the field the user sees) and a default (empty text means the
default, never an error). Errors are InputErrors whose message starts with the label.
"""

from __future__ import annotations

import re

from specadvisor.errors import InputError

_SUFFIX = {"": 1, "k": 1_000, "m": 1_000_000}
_COUNT = re.compile(r"^(\d+(?:\.\d+)?)\s*([km]?)$", re.IGNORECASE)
_THOUSANDS = re.compile(r"^\d{1,3}(,\d{3})+$")
_DURATION_PART = re.compile(r"(\d+(?:[.,]\d+)?)\s*(hours|hour|hrs|hr|h|minutes|minute|mins|min|m|seconds|second|secs|sec|s)?\b", re.IGNORECASE)
_FILLER = re.compile(r"\b(about|around|roughly|approx\.?|at most|max|up to|~)\s*", re.IGNORECASE)


def _blank(text: str | None) -> bool:
    return text is None or not str(text).strip()


def parse_count(text: str | None, label: str, default: int | None = None, minimum: int = 1) -> int:
    """A whole count: `256`, `2k` (2000), `1.5k`, `2,048`, `4_096`. Empty means `default`."""
    if _blank(text):
        if default is None:
            raise InputError(f"{label} is empty", hint=f"enter a whole number >= {minimum}, e.g. 256 or 2k")
        return default
    raw = str(text).strip().replace("_", "").replace(" ", "")
    if _THOUSANDS.match(raw):
        raw = raw.replace(",", "")
    match = _COUNT.match(raw)
    if not match:
        raise InputError(f"{label}: {str(text).strip()!r} is not a whole number", hint=f"enter a number >= {minimum}, e.g. 256 or 2k")
    value = float(match.group(1)) * _SUFFIX[match.group(2).lower()]
    if value != int(value):
        raise InputError(f"{label}: {str(text).strip()!r} is not a whole number", hint=f"enter a number >= {minimum}, e.g. 256 or 2k")
    if value < minimum:
        raise InputError(f"{label} must be at least {minimum}, got {int(value)}", hint=f"enter a number >= {minimum}")
    return int(value)


def parse_count_list(text: str | None, label: str, default: list[int] | None = None, minimum: int = 1) -> list[int]:
    """Levels such as concurrency: `1,8`, `1 8`, `1, 4, 16`, `1;8` -> sorted, without repeats."""
    if _blank(text):
        if not default:
            raise InputError(f"{label} is empty", hint="enter one or more whole numbers, e.g. 1,8")
        return list(default)
    parts = [p for p in re.split(r"[,;\s]+", str(text).strip()) if p]
    values = []
    for part in parts:
        try:
            values.append(parse_count(part, label, minimum=minimum))
        except InputError as err:
            wanted = "positive integers" if minimum == 1 else f"whole numbers >= {minimum}"
            raise InputError(f"{label} needs {wanted}: {part!r} is not one", hint="enter whole numbers separated by commas, e.g. 1,8") from err
    return sorted(set(values))


def parse_number(text: str | None, label: str, default: float | None = None, minimum: float = 0.0, maximum: float | None = None) -> float:
    """A decimal such as a temperature: `0.7`, `0,7` (decimal comma), `1`. Empty means `default`."""
    if _blank(text):
        if default is None:
            raise InputError(f"{label} is empty", hint=f"enter a number >= {minimum:g}")
        return default
    raw = str(text).strip()
    if raw.count(",") == 1 and "." not in raw:
        raw = raw.replace(",", ".")
    try:
        value = float(raw)
    except ValueError:
        raise InputError(f"{label}: {str(text).strip()!r} is not a number", hint=f"enter a number >= {minimum:g}, e.g. 0 or 0.7") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise InputError(f"{label}: {raw!r} is not a finite number", hint=f"enter a number >= {minimum:g}")
    if value < minimum or (maximum is not None and value > maximum):
        bounds = f"between {minimum:g} and {maximum:g}" if maximum is not None else f"at least {minimum:g}"
        raise InputError(f"{label} must be {bounds}, got {value:g}", hint=f"enter a number {bounds}")
    return value


def parse_duration(text: str | None, label: str, default: float | None = None) -> float | None:
    """A time budget in seconds: `30 min`, `about 30 min`, `1h`, `1 h 30 min`, `90s`, `45` (minutes).
    Empty means `default` (None: no budget)."""
    if _blank(text):
        return default
    raw = _FILLER.sub("", str(text).strip().lower()).strip()
    if raw in ("none", "no", "unlimited", "-", "all"):
        return None
    total, pos = 0.0, 0
    for match in _DURATION_PART.finditer(raw):
        if raw[pos : match.start()].strip(" ,and"):
            break
        number = float(match.group(1).replace(",", "."))
        unit = (match.group(2) or "min").lower()
        total += number * (3600 if unit.startswith("h") else 1 if unit.startswith("s") else 60)
        pos = match.end()
    if pos == 0 or raw[pos:].strip():
        raise InputError(f"{label}: cannot read {str(text).strip()!r} as a duration", hint="e.g. 30 min, 1 h, 1 h 30 min, 90 s")
    if total <= 0:
        raise InputError(f"{label} must be more than zero", hint="e.g. 30 min")
    return total
