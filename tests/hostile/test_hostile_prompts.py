"""Hostile prompt files: refused with one line before any database exists or any server starts."""

from __future__ import annotations

import os

import pytest
from hostile_helpers import assert_one_line_error, files_in

PROMPT_FILES = [
    ("empty-jsonl", "p.jsonl", b""),
    ("blank-lines-only", "p.txt", b"\n\n  \n"),
    ("jsonl-not-json", "p.jsonl", b"{not json}\n"),
    ("jsonl-no-prompt-key", "p.jsonl", b'{"text": "hi"}\n'),
    ("jsonl-prompt-not-string", "p.jsonl", b'{"prompt": 42}\n'),
    ("jsonl-messages-not-list", "p.jsonl", b'{"messages": "hi"}\n'),
    ("json-not-list", "p.json", b'{"a": 1}'),
    ("json-sharegpt-no-human-turn", "p.json", b'[{"conversations": [{"from": "gpt", "value": "x"}]}]'),
    ("json-truncated", "p.json", b'[{"conversations": ['),
    ("not-utf8", "p.txt", b"\xff\xfe\x00bad"),
    ("jsonl-nan", "p.jsonl", b'{"prompt": NaN}\n'),
]


@pytest.mark.parametrize("name, data", [(n, d) for _, n, d in PROMPT_FILES], ids=[i for i, _, _ in PROMPT_FILES])
def test_bad_prompt_file(tmp_path, cli, name, data):
    prompts = tmp_path / name
    prompts.write_bytes(data)
    db = tmp_path / "s.db"
    before = files_in(tmp_path)
    code, _, err = cli(["--db", str(db), "sweep", "--model", "m", "--prompts", str(prompts)])
    assert_one_line_error(code, err, 2)
    assert not db.exists() and files_in(tmp_path) == before


@pytest.mark.parametrize("kind", ["directory", "fifo", "dev-zero", "dangling-symlink"])
def test_prompt_source_that_is_not_a_file(tmp_path, cli, kind):
    path = tmp_path / "prompts"
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)  # reading it would block forever
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")  # reading it would never end
    else:
        path.symlink_to(tmp_path / "nowhere.jsonl")
    db = tmp_path / "s.db"
    code, _, err = cli(["--db", str(db), "sweep", "--model", "m", "--prompts", str(path)])
    assert_one_line_error(code, err, 2)
    assert not db.exists()
