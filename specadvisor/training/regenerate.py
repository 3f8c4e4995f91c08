"""Training rows from the target itself: each prompt answered by the running server, as it will serve.

Seed 000's advice: a drafter learns the target's own distribution, so the responses it trains on are
the target's, regenerated on the user's prompts ("harvest hidden states from real traffic"). Each
request asks vLLM for the token ids it saw and produced (`return_token_ids`), so a row is exactly the
serving tokens: the prompt (chat template applied by the server for chat prompts) with the loss off,
then the response with the loss on. Rows are appended as they arrive: an interrupted run keeps them
and a resumed one asks only for the prompts still missing.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from specadvisor.bench.prompts import Prompt
from specadvisor.errors import EngineError

REQUEST_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class RegenerateSettings:
    model: str  # the served model name
    output_len: int
    temperature: float
    seed: int
    concurrency: int


def done_ids(rows_path: Path) -> set[str]:
    """Prompt ids already regenerated (a resumed run skips them); a torn last line is ignored."""
    found: set[str] = set()
    if not rows_path.is_file():
        return found
    for line in rows_path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and isinstance(row.get("id"), str):
            found.add(row["id"])
    return found


def row_counts(rows_path: Path) -> tuple[int, int]:
    """(rows, response tokens) in a rows file."""
    count = tokens = 0
    if rows_path.is_file():
        for line in rows_path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            count += 1
            tokens += sum(row.get("loss_mask", []))
    return count, tokens


async def regenerate(
    base_url: str,
    prompts: list[Prompt],
    rows_path: Path,
    settings: RegenerateSettings,
    *,
    on_row: Callable[[int, int], None] = lambda done, total: None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> int:
    """Answer every prompt not yet in `rows_path` and append its row; returns the rows written now."""
    todo = [p for p in prompts if p.id not in done_ids(rows_path)]
    total = len(prompts)
    finished = total - len(todo)
    written = 0
    queue: asyncio.Queue[Prompt] = asyncio.Queue()
    for prompt in todo:
        queue.put_nowait(prompt)
    rows_path.parent.mkdir(parents=True, exist_ok=True)
    with open(rows_path, "a", encoding="utf-8") as out:
        async with httpx.AsyncClient(base_url=base_url, timeout=httpx.Timeout(REQUEST_TIMEOUT_S), trust_env=False, transport=transport) as client:

            async def worker() -> None:
                nonlocal finished, written
                while not queue.empty():
                    prompt = queue.get_nowait()
                    row = await _one(client, prompt, settings)
                    out.write(json.dumps(row) + "\n")
                    out.flush()
                    written += 1
                    finished += 1
                    on_row(finished, total)

            workers = [asyncio.create_task(worker()) for _ in range(max(1, min(settings.concurrency, len(todo))))]
            try:
                await asyncio.gather(*workers)
            finally:
                for task in workers:
                    task.cancel()
        os.fsync(out.fileno())
    return written


async def _one(client: httpx.AsyncClient, prompt: Prompt, settings: RegenerateSettings) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": settings.model,
        "max_tokens": settings.output_len,
        "temperature": settings.temperature,
        "seed": settings.seed,
        "return_token_ids": True,
    }
    chat = prompt.messages is not None
    if chat:
        body["messages"] = prompt.messages
    else:
        body["prompt"] = prompt.text
    response = await client.post("/v1/chat/completions" if chat else "/v1/completions", json=body)
    if response.status_code != 200:
        raise EngineError(
            f"the target server refused a regeneration request ({response.status_code}: {response.text[:200]})",
            hint="see the server log in the training folder",
        )
    data = response.json()
    choice = (data.get("choices") or [{}])[0]
    prompt_ids = data.get("prompt_token_ids") if chat else choice.get("prompt_token_ids")
    output_ids = choice.get("token_ids")
    if not isinstance(prompt_ids, list) or not isinstance(output_ids, list):
        raise EngineError("the server did not return token ids (return_token_ids)", hint="train with a vLLM that has hidden-state extraction (0.17 or newer)")
    return {"id": prompt.id, "input_ids": prompt_ids + output_ids, "loss_mask": [0] * len(prompt_ids) + [1] * len(output_ids)}


def clear_hidden_states(folder: Path, wait_s: float = 10.0) -> int:
    """Delete what the extraction server wrote while it answered the regeneration requests (a
    file per request, which training does not read), once each file's writer has let go of its lock."""
    removed = 0
    deadline = time.monotonic() + wait_s
    for lock in sorted(folder.glob("*.safetensors.lock")):
        _wait_unlocked(lock, deadline)
    for leftover in list(folder.glob("*.safetensors")) + list(folder.glob("*.safetensors.lock")):
        try:
            leftover.unlink()
            removed += 1
        except OSError:
            pass
    return removed


def _wait_unlocked(lock: Path, deadline: float) -> None:
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return
                time.sleep(0.05)
    finally:
        os.close(fd)
