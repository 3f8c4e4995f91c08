"""Turn a failed server's log and exit code into a short cause, a fix and the lines that prove it.

vLLM fails in a handful of recognisable ways (see the real logs under tests/fixtures/engine/); the
rules below are tried in order, most specific first, and each quotes vLLM's own message where it
helps. Whatever no rule matches still yields the last exception line instead of a bare exit code.
"""

from __future__ import annotations

import re
import signal
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel

_MAX_EXCERPT_CHARS = 1500
_MAX_DETAIL_CHARS = 240


class Diagnosis(BaseModel):
    cause: str
    hint: str
    excerpt: str = ""
    kind: str = "unknown"  # stable id for tests and the store: invalid_config, oom, ...


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: re.Pattern
    cause: Callable[[list[str], int], str]  # (lines, index of the match) -> cause
    hint: str


def _detail(lines: list[str], i: int) -> str:
    """The matched line without its exception-class prefix, shortened."""
    text = lines[i].strip()
    text = re.sub(r"^(\(\w+ pid=\d+\)\s*)?(\w+[\w.]*(Error|Exception)):\s*", "", text)
    return text[:_MAX_DETAIL_CHARS]


def _validation_cause(lines: list[str], i: int) -> str:
    """pydantic prints `N validation error for SpeculativeConfig`, then either `field` and the
    message on the next line, or (model-level checks) `Value error, <message>` directly."""
    following = [line.strip() for line in lines[i + 1 : i + 3]]
    if following and (following[0].startswith("Value error") or "[type=" in following[0]):
        field, message = "", following[0]
    else:
        field, message = [*following, "", ""][:2]
    message = re.sub(r"\s*\[type=.*$", "", message)
    message = re.sub(r"^Value error,\s*", "", message)
    if not message:
        return "invalid speculative config: " + _detail(lines, i)
    return f"invalid speculative config: {field + ': ' if field else ''}{message}"[:_MAX_DETAIL_CHARS]


def _quoted(lines: list[str], i: int) -> str:
    found = re.findall(r"'([^']+)'", lines[i])
    return found[-1] if found else _detail(lines, i)


_RULES: tuple[_Rule, ...] = (
    _Rule(
        "missing_arctic_inference",
        re.compile(r"Arctic Inference is required|No module named 'arctic_inference'"),
        lambda lines, i: "suffix decoding needs the arctic-inference package, which is not installed in the engine's environment",
        "pip install arctic-inference into vLLM's environment, or drop the suffix arms",
    ),
    _Rule(
        "unsupported_method",
        re.compile(r"NotImplementedError: Unsupported speculative method"),
        lambda lines, i: f"this model does not support speculative method '{_quoted(lines, i)}'",
        "pick a method the model supports (mtp needs a model with MTP heads; see `specadvisor inspect`)",
    ),
    _Rule(
        "invalid_json",
        re.compile(r"error: argument --speculative-config"),
        lambda lines, i: "the speculative config is not valid JSON: " + lines[i].split("error:", 1)[1].strip()[:_MAX_DETAIL_CHARS],
        "pass a JSON object, e.g. '{\"method\": \"ngram\", \"num_speculative_tokens\": 4}'",
    ),
    _Rule(
        "vocab_mismatch",
        re.compile(r"should have the same vocabulary size|vocab(ulary)?[ _]size mismatch", re.IGNORECASE),
        lambda lines, i: "the drafter's vocabulary differs from the target's: " + _detail(lines, i),
        "use a drafter trained for this target (same tokenizer)",
    ),
    _Rule(
        "out_of_memory",
        re.compile(
            r"CUDA out of memory|HIP out of memory|OutOfMemoryError|No available memory for the cache blocks"
            r"|larger than the available KV cache memory|Not enough memory|Cannot allocate memory"
        ),
        lambda lines, i: "out of accelerator memory: " + _detail(lines, i),
        "lower --max-model-len or --max-num-seqs, raise --gpu-memory-utilization, or use more GPUs (-tp)",
    ),
    _Rule(
        "model_not_found",
        re.compile(
            r"Repository Not Found|is not a local folder and is not a valid model identifier|Repo id must be in the form"
            r"|does not appear to have a file named config\.json|Invalid repository ID|HFValidationError"
            r"|We couldn't connect to 'https://huggingface\.co'|LocalEntryNotFoundError|GatedRepoError"
            r"|Cannot find any model weights"
        ),
        lambda lines, i: f"model or drafter not found: {_quoted(lines, i)}",
        "check the model/drafter path or hub id (and HF_TOKEN for gated repos; offline machines need a local copy)",
    ),
    _Rule(
        "port_in_use",
        re.compile(r"Address already in use|\[Errno 98\]"),
        lambda lines, i: "the server's port is already in use",
        "stop whatever listens on it or let specadvisor choose a free port (omit --port)",
    ),
    _Rule(
        "invalid_config",
        re.compile(r"validation errors? for SpeculativeConfig"),
        _validation_cause,
        "fix the speculative config (keys and values vLLM accepts: see `specadvisor rules` / vLLM's SpeculativeConfig)",
    ),
    _Rule(
        "bad_arguments",
        re.compile(r"^\S+: error: (unrecognized arguments|argument)"),
        lambda lines, i: "vLLM rejected the command line: " + lines[i].split("error:", 1)[1].strip()[:_MAX_DETAIL_CHARS],
        "fix the extra server arguments / engine command for this vLLM version",
    ),
)

_ENGINE_CORE_FAILED = re.compile(r"Engine core initialization failed")
_EXCEPTION_LINE = re.compile(r"^(\(\w+ pid=\d+\)\s*)?[\w.]*(Error|Exception|Interrupt)(\[[^\]]*\])?:\s*\S")


def diagnose(log_lines: list[str], returncode: int | None, *, timed_out: bool = False) -> Diagnosis:
    """Cause, hint and excerpt for a server that exited (returncode) or never became ready."""
    lines = [line.rstrip("\n") for line in log_lines]
    for rule in _RULES:
        for i, line in enumerate(lines):
            if rule.pattern.search(line) and not _is_source_line(line):
                return Diagnosis(kind=rule.kind, cause=rule.cause(lines, i), hint=rule.hint, excerpt=_excerpt(lines, i))
    if timed_out:
        return Diagnosis(
            kind="timeout",
            cause="the vLLM server did not become ready before the timeout",
            hint="raise the ready timeout (large models need 10-20 minutes) and check the server log",
            excerpt=_excerpt(lines, len(lines) - 1),
        )
    root = _root_exception(lines)
    if any(_ENGINE_CORE_FAILED.search(line) for line in lines):
        detail = f": {_detail(lines, root)}" if root is not None else ""
        return Diagnosis(
            kind="engine_init_failed",
            cause=f"vLLM's engine core failed to initialise{detail}",
            hint="read the root cause in the server log above the engine-core error",
            excerpt=_excerpt(lines, root if root is not None else len(lines) - 1),
        )
    exit_text = _describe_exit(returncode)
    if root is not None:
        return Diagnosis(
            kind="crashed", cause=f"vLLM exited ({exit_text}): {_detail(lines, root)}",
            hint="read the server log", excerpt=_excerpt(lines, root),
        )
    hint = "the host may have run out of memory (check dmesg)" if returncode == -signal.SIGKILL else "read the server log"
    return Diagnosis(kind="exited", cause=f"vLLM exited ({exit_text})", hint=hint, excerpt=_excerpt(lines, len(lines) - 1))


def _is_source_line(line: str) -> bool:
    """Traceback lines quoting source code (`raise FooError(`) name an error without its message."""
    text = line.strip()
    return text.startswith(("raise ", 'File "', "^"))


def _root_exception(lines: list[str]) -> int | None:
    """The last exception line that is not the generic engine-core wrapper."""
    for i in range(len(lines) - 1, -1, -1):
        if _EXCEPTION_LINE.search(lines[i].strip()) and not _ENGINE_CORE_FAILED.search(lines[i]):
            return i
    return None


def _excerpt(lines: list[str], i: int, before: int = 4, after: int = 4) -> str:
    if not lines or i < 0:
        return ""
    chosen = lines[max(0, i - before) : i + after + 1]
    text = "\n".join(line[:400] for line in chosen)
    return text[-_MAX_EXCERPT_CHARS:]


def _describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "no exit code"
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit code {returncode}"
