"""Training rows come from the target's own answers, as token ids it reports; a resume asks only for what is missing."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from specadvisor.bench.prompts import Prompt
from specadvisor.errors import EngineError
from specadvisor.training.regenerate import RegenerateSettings, clear_hidden_states, done_ids, regenerate, row_counts

SETTINGS = RegenerateSettings(model="m", output_len=4, temperature=0.0, seed=0, concurrency=2)


def _server(seen: list[dict]) -> httpx.MockTransport:
    """vLLM's answers to `return_token_ids`: completions carry prompt ids in the choice, chat at the top."""

    def handle(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append({"path": request.url.path, **body})
        if request.url.path == "/v1/chat/completions":
            return httpx.Response(200, json={"prompt_token_ids": [1, 2, 3], "choices": [{"token_ids": [7, 8]}]})
        return httpx.Response(200, json={"choices": [{"prompt_token_ids": [5], "token_ids": [9, 9, 9]}]})

    return httpx.MockTransport(handle)


def test_rows_are_the_served_tokens_with_the_loss_on_the_answer(tmp_path: Path) -> None:
    rows, seen = tmp_path / "rows.jsonl", []
    prompts = [Prompt(text="def f():", id="a"), Prompt(messages=[{"role": "user", "content": "hi"}], id="b")]
    written = asyncio.run(regenerate("http://server", prompts, rows, SETTINGS, transport=_server(seen)))
    assert written == 2
    by_id = {r["id"]: r for r in map(json.loads, rows.read_text().splitlines())}
    assert by_id["a"] == {"id": "a", "input_ids": [5, 9, 9, 9], "loss_mask": [0, 1, 1, 1]}
    assert by_id["b"] == {"id": "b", "input_ids": [1, 2, 3, 7, 8], "loss_mask": [0, 0, 0, 1, 1]}
    assert {s["path"] for s in seen} == {"/v1/completions", "/v1/chat/completions"}
    assert all(s["return_token_ids"] is True and s["max_tokens"] == 4 and s["temperature"] == 0.0 for s in seen)
    assert row_counts(rows) == (2, 5)


def test_a_resumed_run_asks_only_for_the_missing_prompts(tmp_path: Path) -> None:
    rows, seen = tmp_path / "rows.jsonl", []
    rows.write_text(json.dumps({"id": "a", "input_ids": [1], "loss_mask": [1]}) + "\n" + '{"id": "b", "inp')  # a torn last line
    prompts = [Prompt(text="x", id="a"), Prompt(text="y", id="b")]
    assert done_ids(rows) == {"a"}
    asyncio.run(regenerate("http://server", prompts, rows, SETTINGS, transport=_server(seen)))
    assert [s["prompt"] for s in seen] == ["y"]


def test_a_server_without_token_ids_is_refused_with_the_release_that_has_them(tmp_path: Path) -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json={"choices": [{"text": "x"}]}))
    with pytest.raises(EngineError, match="did not return token ids"):
        asyncio.run(regenerate("http://server", [Prompt(text="x", id="a")], tmp_path / "rows.jsonl", SETTINGS, transport=transport))


def test_a_refused_request_names_the_status(tmp_path: Path) -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(400, text="bad model"))
    with pytest.raises(EngineError, match="400: bad model"):
        asyncio.run(regenerate("http://server", [Prompt(text="x", id="a")], tmp_path / "rows.jsonl", SETTINGS, transport=transport))


def test_clearing_removes_only_the_extraction_files(tmp_path: Path) -> None:
    (tmp_path / "cmpl-1.safetensors").write_bytes(b"x")
    (tmp_path / "cmpl-1.safetensors.lock").write_bytes(b"")
    (tmp_path / "keep.txt").write_text("mine")
    assert clear_hidden_states(tmp_path, wait_s=0.1) == 2
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]
