"""Find the line of a table or key in a rules file: tomllib reports no line numbers for values."""

from __future__ import annotations

import re


def _headers(text: str) -> list[tuple[int, str]]:
    """(0-based line, table name) of every [[array-of-tables]] header."""
    found = []
    for number, line in enumerate(text.splitlines()):
        match = re.match(r"\s*\[\[\s*([\w.-]+)\s*\]\]", line)
        if match:
            found.append((number, match.group(1)))
    return found


def table_span(text: str, kind: str, index: int) -> tuple[int, int] | None:
    """0-based [start, end) lines of the index-th [[kind]] table, up to the next [[...]] header."""
    headers = _headers(text)
    own = [pos for pos, (_, name) in enumerate(headers) if name == kind]
    if index >= len(own):
        return None
    pos = own[index]
    start = headers[pos][0]
    end = headers[pos + 1][0] if pos + 1 < len(headers) else len(text.splitlines())
    return start, end


def table_source(text: str, kind: str, index: int) -> str:
    """The index-th [[kind]] table as written (its sub-tables and comments kept), without the blank
    and comment lines that lead into the next table: what a user copies into their rules folder."""
    span = table_span(text, kind, index)
    if not span:
        return ""
    lines = text.splitlines()[span[0] : span[1]]
    while lines and (not lines[-1].strip() or lines[-1].lstrip().startswith("#")):
        lines.pop()
    return "\n".join(lines)


def table_line(text: str, kind: str, index: int) -> int:
    span = table_span(text, kind, index)
    return span[0] + 1 if span else 1


def key_line(text: str, kind: str, index: int, keys: list[str]) -> int:
    """1-based line of the most specific of `keys` (last first) inside the table; else its header."""
    span = table_span(text, kind, index)
    if not span:
        return 1
    lines = text.splitlines()
    for key in reversed(keys):
        pattern = re.compile(rf"(?<![\w-])\"?{re.escape(key)}\"?(?![\w-])")
        for number in range(span[0], span[1]):
            code = lines[number].split("#", 1)[0]
            if pattern.search(code):
                return number + 1
    return span[0] + 1


def value_line(text: str, kind: str, index: int, value: str, key: str | None = None) -> int:
    """1-based line where the quoted `value` appears inside the table (a bad reference); else the key's."""
    span = table_span(text, kind, index)
    if not span:
        return 1
    lines = text.splitlines()
    for number in range(span[0], span[1]):
        code = lines[number].split("#", 1)[0]
        if f'"{value}"' in code or f"'{value}'" in code or re.search(rf"(?<![\w-]){re.escape(value)}\s*=", code):
            return number + 1
    return key_line(text, kind, index, [key] if key else [])


def top_key_line(text: str, key: str) -> int:
    """1-based line of a top-level key or table header named `key`."""
    for number, line in enumerate(text.splitlines()):
        if re.match(rf"\s*(\[\[?\s*{re.escape(key)}[\].]|{re.escape(key)}\s*=)", line):
            return number + 1
    return 1
