"""How a prompt set is sent (the request format), and why: part of the workload, like the prompts.

The same prompts are a different workload as raw text on /v1/completions than through the model's
chat template on /v1/chat/completions: on the H200, n-gram N=4 gained 2.03x on one editing set with
the template and 1.08x without, on the same servers. So the format is a setting
(`sweep --request-format`), recorded on the session and shown with the workload, and by default
(`auto`) it is what `vllm bench serve` does with the same prompts (vLLM 0.32,
`vllm/benchmarks/datasets/datasets.py`, default backend `openai`, chat template not skipped):

| prompts | vllm bench serve | auto |
|---|---|---|
| a JSONL file | `--dataset-name custom`: each row's `prompt` through the chat template as one user turn (its `messages` are not read) | chat |
| HumanEval | `--dataset-name hf --dataset-path openai/openai_humaneval`: the chat template | chat |
| ShareGPT (a JSON file of conversations, or `sharegpt`) | `--dataset-name sharegpt`: the first human turn as raw text | completions |
| `random` | `--dataset-name random`: raw text | completions |
| the project's sets (math, rag, edit, rename) | written as one-turn prompts; as a custom JSONL: the chat template | chat |
| a text file, a JSON array of rows | no loader; as its custom JSONL | chat |

`vllm bench serve` renders the template on its side and posts the text to /v1/completions;
specadvisor posts the messages to /v1/chat/completions and the server renders the same template:
the same tokens, unless the tokenizer adds a BOS token to completion prompts (vLLM's tool then
sends one more). Rows with `messages` never go to /v1/completions: `completions` needs a `prompt`.
"""

from __future__ import annotations

from typing import Literal

Format = Literal["chat", "completions"]
ASKED = ("auto", "chat", "completions")
# What `vllm bench serve` does with each kind of prompt source (the table above).
SourceKind = Literal["custom", "humaneval", "sharegpt", "random", "project", "text", "rows"]
_AUTO: dict[str, Format] = {
    "custom": "chat",
    "humaneval": "chat",
    "sharegpt": "completions",
    "random": "completions",
    "project": "chat",
    "text": "chat",
    "rows": "chat",
}
_VLLM_BENCH: dict[str, str] = {
    "custom": "`vllm bench serve --dataset-name custom` sends each row's `prompt` through the chat template",
    "humaneval": "`vllm bench serve --dataset-name hf --dataset-path openai/openai_humaneval` sends HumanEval through the chat template",
    "sharegpt": "`vllm bench serve --dataset-name sharegpt` sends the first human turn as raw text to /v1/completions",
    "random": "`vllm bench serve --dataset-name random` sends raw text to /v1/completions",
    "project": "`vllm bench serve --dataset-name custom` would send these prompts through the chat template",
    "text": "`vllm bench serve` has no loader for a text file; its custom JSONL sends each prompt through the chat template",
    "rows": "`vllm bench serve` has no loader for a JSON array of rows; its custom JSONL sends each `prompt` through the chat template",
}
# How sessions recorded before the format was (request_format None) sent the built-in sets.
_BEFORE: dict[str, Format] = {
    "humaneval": "completions",
    "random": "completions",
    "sharegpt": "chat",
    "math": "chat",
    "rag": "chat",
    "edit": "chat",
    "rename": "chat",
}
_FILE_BEFORE = "a file's rows with a `prompt` went as raw text to /v1/completions, rows with only `messages` as chat"


def auto_format(kind: SourceKind) -> Format:
    """What `auto` means for a source of this kind: what `vllm bench serve` does with it."""
    return _AUTO[kind]


def resolve(kind: SourceKind, asked: str | None) -> tuple[Format, list[str]]:
    """The format to send with and the notes that say where it differs from `vllm bench serve`."""
    auto = auto_format(kind)
    if asked in (None, "auto"):
        return auto, ([f"{_VLLM_BENCH[kind]}: so does this sweep"] if kind in ("text", "rows") else [])
    fmt: Format = "chat" if asked == "chat" else "completions"
    if fmt == auto:
        return fmt, []
    return fmt, [f"--request-format {fmt}: sent as {describe(fmt)}; {_VLLM_BENCH[kind]} (--request-format auto does the same)"]


def describe(fmt: str | None) -> str:
    """One phrase for a format, as every view shows it."""
    if fmt == "chat":
        return "chat: /v1/chat/completions, through the model's chat template"
    if fmt == "completions":
        return "completions: /v1/completions, raw text (no chat template)"
    if fmt == "auto":
        return "auto: what `vllm bench serve` does with these prompts"
    return "not recorded"


def recorded(request_format: str | None, prompt_source: str) -> str:
    """The format a stored session's prompts went out in, in words; a session from before the format
    was recorded says how those were sent (the built-in sets' format is known, a file's is not)."""
    if request_format is not None:
        return describe(request_format)
    source = prompt_source.strip().lower()
    if source in _BEFORE:
        return f"{describe(_BEFORE[source])} (not recorded: how {source} was sent then)"
    return f"not recorded (before it was, {_FILE_BEFORE})"


def short(request_format: str | None, prompt_source: str) -> str:
    """`chat`, `completions` or `not recorded`: the word the tables and comparisons use."""
    if request_format is not None:
        return request_format
    return _BEFORE.get(prompt_source.strip().lower(), "not recorded")


def legacy_builtin(source: str) -> Format:
    """How a built-in set was sent before the format was recorded (resuming such a session)."""
    return _BEFORE.get(source, "chat")
