"""Turn a failed server's log and exit code into a short cause, a fix and the lines that prove it.

vLLM fails in a handful of recognisable ways (see the logs under tests/fixtures/engine/: captured
from the real CPU engine, or taken from public vLLM issues). The WHOLE log is read and the FIRST
causal line wins: a worker's or the engine core's exception comes before the wrappers that report
it ("WorkerProc initialization failed", "Engine core initialization failed. See root cause
above."), so those are never the answer while a cause is in the log. On one line, the rules are
tried most specific first; each quotes vLLM's own message where it helps. Whatever no rule matches
still yields the first real exception instead of a bare exit code.
"""

from __future__ import annotations

import re
import signal
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel

_MAX_EXCERPT_CHARS = 1500
_MAX_CAUSE_CHARS = 280
_STOPPED_BY_US = re.compile(r"^\[specadvisor\] not ready after")
_MAX_DETAIL_CHARS = 240


class Diagnosis(BaseModel):
    cause: str
    hint: str
    excerpt: str = ""
    kind: str = "unknown"  # stable id for tests and the store: invalid_config, oom, ...


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    cause: Callable[[list[str], int], str]  # (lines, index of the match) -> cause
    hint: str


# What vLLM and its workers put before a message: "(EngineCore_DP0 pid=7) ", "(Worker_TP1 pid=9) ",
# "ERROR 11-05 12:19:32 [core.py:708] ", "[rank0]: ".
_PREFIX = re.compile(
    r"^(\([\w.-]+(?: rank=\d+)? pid=\d+(?:, ip=[\d.]+)?\)\s*)?"
    r"((?:ERROR|WARNING|INFO|DEBUG|CRITICAL)\s+(?:\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?\s+)?(?:\[[^\]]*\]\s*)?)?"
    r"(\[rank\d+\]:\s*)?"
)


def _bare(line: str) -> str:
    """A log line without the process, level and rank prefixes."""
    return _PREFIX.sub("", line.strip(), count=1).strip()


def _detail(lines: list[str], i: int) -> str:
    """The matched line without its prefixes and exception class, shortened."""
    text = re.sub(r"^([\w.]+(Error|Exception)):\s*", "", _bare(lines[i]))
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


def _cpu_memory(lines: list[str], i: int) -> str:
    m = re.search(r"node (\d+) \(([\d.]+)/([\d.]+) GiB\).*utilization \(([\d.]+), ([\d.]+) GiB\)", lines[i])
    if not m:
        return "the CPU backend wants more memory than is free: " + _detail(lines, i)
    node, free, total, util, want = m.groups()
    return (
        f"vLLM's CPU backend wants {util} of node {node}'s memory ({want} GiB) but only {free} of {total} GiB are free "
        "(on the CPU build --gpu-memory-utilization is a share of RAM)"
    )


def _cpu_kv_space(lines: list[str], i: int) -> str:
    m = re.search(r"node (\d+) \(([\d.]+)/([\d.]+) GiB\).*requested memory for kv \(([\d.]+) GiB\)", lines[i])
    if not m:
        return "the KV cache asked for more memory than is free: " + _detail(lines, i)
    node, free, total, want = m.groups()
    return f"the KV cache asks for {want} GiB (VLLM_CPU_KVCACHE_SPACE / --kv-cache-memory-bytes) but node {node} has {free} of {total} GiB free"


def _gpu_busy(lines: list[str], i: int) -> str:
    m = re.search(r"\(([\d.]+)/([\d.]+) GiB\).*utilization \(([\d.]+), ([\d.]+) GiB\)", lines[i])
    if not m:
        return "the GPU has less free memory than --gpu-memory-utilization asks: " + _detail(lines, i)
    free, total, util, want = m.groups()
    return f"the GPU has {free} of {total} GiB free but --gpu-memory-utilization {util} asks for {want} GiB (another process holds GPU memory)"


def _max_len(lines: list[str], i: int) -> str:
    text = lines[i]
    m = re.search(r"max seq len \((\d+)\) is larger than the maximum number of tokens that can be stored in KV cache \((\d+)\)", text)
    if m:
        return f"max_model_len {m.group(1)} does not fit the KV cache (room for {m.group(2)} tokens)"
    m = re.search(r"max seq len \((\d+)\).*?([\d.]+ GiB) KV cache is needed, which is (larger than the available KV cache memory \([\d.]+ GiB\))", text)
    est = re.search(r"estimated maximum model length is (\d+)", text)
    if m:
        return f"max_model_len {m.group(1)} needs {m.group(2)} of KV cache, {m.group(3)}" + (f"; about {est.group(1)} tokens would fit" if est else "")
    return "max_model_len does not fit the KV cache: " + _detail(lines, i)


_OOM_PHASES = (  # (kind, markers in the trace or log before the error, what failed, fix)
    (
        "oom_cuda_graph",
        re.compile(r"capture_model|Capturing CUDA graph|cudagraph|cuda_graph|graph capturing", re.IGNORECASE),
        "while capturing CUDA graphs",
        "launch with --enforce-eager, or lower --max-num-seqs (fewer graphs) or --gpu-memory-utilization (more headroom for capture)",
    ),
    (
        "oom_kv_cache",
        re.compile(
            r"initialize_kv_cache|_initialize_kv_caches|initialize_from_config|determine_available_memory|profile_run|_dummy_run|kv_cache", re.IGNORECASE
        ),
        "while profiling memory or allocating the KV cache",
        "lower --max-model-len or --max-num-seqs, or raise --gpu-memory-utilization; and let no other process allocate on the "
        "same GPU while vLLM starts (its memory profile assumes it is alone there)",
    ),
    (
        "oom_weights",
        re.compile(r"load_model|get_model|Loading weights|load_weights|Loading model|model_loader|make_layers|_initialize_model", re.IGNORECASE),
        "while loading the weights",
        "the weights do not fit: use more GPUs (--tensor-parallel-size), a quantized checkpoint or a larger GPU",
    ),
)


def _oom_phase(lines: list[str], i: int) -> tuple[str, str, str]:
    """Which start-up phase ran out of memory: the closest phase marker in the 200 lines before."""
    for line in reversed(lines[max(0, i - 200) : i + 1]):
        for kind, marker, what, fix in _OOM_PHASES:
            if marker.search(line):
                return kind, what, fix
    return "out_of_memory", "", "lower --max-model-len or --max-num-seqs, raise --gpu-memory-utilization, or use more GPUs (-tp)"


_RULES: tuple[_Rule, ...] = (
    _Rule(
        "missing_arctic_inference",
        re.compile(r"Arctic Inference is required|No module named 'arctic_inference'"),
        lambda lines, i: "suffix decoding needs the arctic-inference package, which is not installed in the engine's environment",
        "pip install arctic-inference into vLLM's environment, or drop the suffix arms",
    ),
    _Rule(
        "cpu_memory",
        re.compile(r"Available memory on node \d+ .* is less than desired CPU memory utilization"),
        _cpu_memory,
        "set VLLM_CPU_KVCACHE_SPACE=<GiB> (e.g. 2) to size the KV cache directly, or lower --gpu-memory-utilization",
    ),
    _Rule(
        "cpu_kv_cache_space",
        re.compile(r"Available memory on node \d+ .* is less than requested memory for kv"),
        _cpu_kv_space,
        "lower VLLM_CPU_KVCACHE_SPACE (GiB) or --kv-cache-memory-bytes to what is free (2 GiB suits SmolLM2)",
    ),
    _Rule(
        "gpu_memory_busy",
        re.compile(r"Free memory on device .* is less than desired GPU memory utilization"),
        _gpu_busy,
        "free the GPU (nvidia-smi shows who holds it) or lower --gpu-memory-utilization to what is free",
    ),
    _Rule(
        "unsupported_method",
        re.compile(r"NotImplementedError: Unsupported speculative method"),
        lambda lines, i: f"this model does not support speculative method '{_quoted(lines, i)}'",
        "pick a method the model supports (mtp needs a model with MTP heads; see `specadvisor inspect`)",
    ),
    _Rule(
        "platform_unsupported",
        re.compile(
            r"(Speculative decoding|speculative method|spec(ulative)? decod\w*).{0,80}(not (yet )?supported|does not (yet )?support)"
            r"|does not (yet )?support:? .{0,40}(speculative|ngram|draft_model|drafting)"
            r"|Model Runner V2 does not yet support"
            r"|requires a CUDA or other accelerator backend|Torch not compiled with CUDA enabled",
            re.IGNORECASE,
        ),
        lambda lines, i: "this vLLM build or platform cannot run the speculative method: " + _detail(lines, i),
        "pick a method this platform supports (on CPU: ngram, suffix, draft_model; see `specadvisor detect`) or another vLLM build",
    ),
    _Rule(
        "invalid_json",
        re.compile(r"error: argument --speculative-config"),
        lambda lines, i: "the speculative config is not valid JSON: " + lines[i].split("error:", 1)[1].strip()[:_MAX_DETAIL_CHARS],
        'pass a JSON object, e.g. \'{"method": "ngram", "num_speculative_tokens": 4}\'',
    ),
    _Rule(
        "vocab_mismatch",
        re.compile(r"should have the same vocabulary size|vocab(ulary)?[ _]size mismatch", re.IGNORECASE),
        lambda lines, i: "the drafter's vocabulary differs from the target's: " + _detail(lines, i),
        "use a drafter trained for this target (same tokenizer)",
    ),
    _Rule(
        "drafter_architecture",
        re.compile(
            r"Model architectures \[.*\] are not supported|Eagle3? is only supported for|is only supported for \[.*\] models"
            r"|There is no module or parameter named '[^']*' in \w+"
        ),
        lambda lines, i: "the drafter (or model) checkpoint does not fit the architecture vLLM builds for it: " + _detail(lines, i),
        "use a drafter in a format this vLLM version supports for this target (see `specadvisor inspect MODEL --drafter D`)",
    ),
    _Rule(
        "max_model_len_too_large",
        re.compile(r"max seq len \(\d+\) is larger than the maximum number of tokens|larger than the available KV cache memory"),
        _max_len,
        "lower --max-model-len to what fits, or give the KV cache more memory (--gpu-memory-utilization; VLLM_CPU_KVCACHE_SPACE on CPU)",
    ),
    _Rule(
        "out_of_memory",
        re.compile(
            r"CUDA out of memory|HIP out of memory|OutOfMemoryError|No available memory for the cache blocks"
            r"|Not enough memory|Cannot allocate memory"
        ),
        lambda lines, i: "out of accelerator memory" + (f" {_oom_phase(lines, i)[1]}" if _oom_phase(lines, i)[1] else "") + ": " + _detail(lines, i),
        "",  # per phase: see _oom_phase
    ),
    _Rule(
        "nccl",
        re.compile(r"NCCL error|nccl\w*Error|ncclUnhandledCudaError|ncclSystemError|ncclInternalError|ncclInvalidUsage|DistBackendError"),
        lambda lines, i: "multi-GPU start-up failed in NCCL: " + _detail(lines, i),
        "check that every GPU for -tp is visible and idle (CUDA_VISIBLE_DEVICES), give a container --ipc=host or a large --shm-size, "
        "try NCCL_P2P_DISABLE=1 or --disable-custom-all-reduce; NCCL_DEBUG=INFO shows more",
    ),
    _Rule(
        "tensor_parallel",
        re.compile(r"must be divisible by tensor parallel size|is not divisible by tensor_parallel_size"),
        lambda lines, i: "the model cannot be split over this many GPUs: " + _detail(lines, i),
        "pick a --tensor-parallel-size that divides the attention heads (often 1, 2, 4 or 8)",
    ),
    _Rule(
        "gated_model",
        re.compile(r"GatedRepoError|Cannot access gated repo|Access to model \S+ is restricted|trying to access a gated repo"),
        lambda lines, i: "the Hugging Face repository is gated" + (f": {m.group(1)}" if (m := _gated_repo(lines, i)) else ""),
        "accept the model's license on huggingface.co with your account and export HF_TOKEN=<read token> before launching",
    ),
    _Rule(
        "model_not_found",
        re.compile(
            r"Repository Not Found|is not a local folder and is not a valid model identifier|Repo id must be in the form"
            r"|does not appear to have a file named config\.json|Invalid repository ID|HFValidationError"
            r"|We couldn't connect to 'https://huggingface\.co'|LocalEntryNotFoundError|404 Client Error|RepositoryNotFoundError"
            r"|Cannot find any model weights"
        ),
        lambda lines, i: "model or drafter not found: " + (m.group(1) if "'" not in lines[i] and (m := _gated_repo(lines, i)) else _quoted(lines, i)),
        "check the model/drafter path or hub id (and HF_TOKEN for gated repos; offline machines need a local copy)",
    ),
    _Rule(
        "compile_failed",
        re.compile(r"BackendCompilerFailed|torch\._dynamo\.exc\.\w+|torch\._inductor\.exc\.\w+|InductorError|CppCompileError"),
        lambda lines, i: "torch.compile failed while vLLM compiled the model: " + _detail(lines, i),
        "launch with --enforce-eager (no compilation and no CUDA graphs) or -O0; check the C++ compiler (CPU) or Triton (GPU) install",
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


def _gated_repo(lines: list[str], i: int) -> re.Match[str] | None:
    """The repository's id, from the lines around the error (huggingface_hub prints it below)."""
    window = lines[max(0, i - 3) : i + 8]
    for pattern in (r"Access to model (\S+) is restricted", r"Repo model (\S+) is gated", r"huggingface\.co/(?:api/models/)?([\w.-]+/[\w.-]+)"):
        for line in window:
            m = re.search(pattern, line)
            if m:
                return m
    return None


# Wrappers that report a failure elsewhere: never the cause while a real one is in the log.
_WRAPPERS = re.compile(
    r"Engine core initialization failed|WorkerProc initialization failed|WorkerProc failed to start|Worker failed with error"
    r"|See root cause above|See stack trace for the root cause|Engine process failed to start|EngineDeadError"
    r"|Exception in worker|The above exception was the direct cause"
)
_EXCEPTION_LINE = re.compile(r"^[\w.]*(Error|Exception|Interrupt)(\[[^\]]*\])?:\s*\S")
_ENGINE_CORE_FAILED = re.compile(r"Engine core initialization failed|WorkerProc initialization failed")


def diagnose(log_lines: list[str], returncode: int | None, *, timed_out: bool = False) -> Diagnosis:
    """Cause, hint and excerpt for a server that exited (returncode) or never became ready.

    Give it the whole log: the first line a rule recognises is the cause (a worker's exception
    precedes the engine core's report of it); without one, the first real exception."""
    lines = [line.rstrip("\n") for line in log_lines]
    stopped_at = next((i for i, line in enumerate(lines) if _STOPPED_BY_US.search(line)), None) if timed_out else None
    if stopped_at is not None:
        lines = lines[: stopped_at + 1]  # what follows is the server's reaction to being stopped
    found = _first_match(lines)
    if found is not None:
        rule, i = found
        kind, hint = rule.kind, rule.hint
        if kind == "out_of_memory":
            kind, _, hint = _oom_phase(lines, i)
        return Diagnosis(kind=kind, cause=rule.cause(lines, i)[:_MAX_CAUSE_CHARS], hint=hint, excerpt=_excerpt(lines, i))
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
            kind="crashed",
            cause=f"vLLM exited ({exit_text}): {_detail(lines, root)}",
            hint="read the server log",
            excerpt=_excerpt(lines, root),
        )
    hint = "the host may have run out of memory (check dmesg)" if returncode == -signal.SIGKILL else "read the server log"
    return Diagnosis(kind="exited", cause=f"vLLM exited ({exit_text})", hint=hint, excerpt=_excerpt(lines, len(lines) - 1))


def _first_match(lines: list[str]) -> tuple[_Rule, int] | None:
    """The first line a rule recognises. An error's message may continue on the next two lines
    (pydantic prints its header, then the message): a more specific rule there wins."""
    for i, line in enumerate(lines):
        rank = _rank(line)
        if rank is None:
            continue
        best = (rank, i)
        for j in range(i + 1, min(i + 3, len(lines))):
            nxt = _rank(lines[j])
            if nxt is not None and nxt < best[0]:
                best = (nxt, j)
        return _RULES[best[0]], best[1]
    return None


# INFO/DEBUG/WARNING lines report what vLLM carries on with ("Model Runner V2 does not yet support
# ngram ...; using the V1 model runner instead"): they are never the cause of a failure.
_NOTICE = re.compile(r"^(\([\w.-]+(?: rank=\d+)? pid=\d+(?:, ip=[\d.]+)?\)\s*)?(INFO|DEBUG|WARNING)\s")


def _rank(line: str) -> int | None:
    if _is_source_line(line) or _WRAPPERS.search(line) or _NOTICE.search(line.strip()):
        return None
    return next((k for k, rule in enumerate(_RULES) if rule.pattern.search(line)), None)


def _is_source_line(line: str) -> bool:
    """Traceback lines quoting source code (`raise FooError(`) name an error without its message."""
    text = _bare(line)
    return text.startswith(("raise ", 'File "', "^"))


def _root_exception(lines: list[str]) -> int | None:
    """The first exception line that is not a wrapper (the root of a chained traceback comes first)."""
    for i, line in enumerate(lines):
        if _EXCEPTION_LINE.search(_bare(line)) and not _WRAPPERS.search(line) and not _is_source_line(line):
            return i
    return None


def first_exception(log_lines: list[str]) -> str | None:
    """vLLM's own words for a failure: the first exception line that is not a wrapper, verbatim but
    for the process and level prefixes; a pydantic error's header gets the field and message that
    follow it. What a launch table quotes beside `diagnose`'s cause; None when the log has none."""
    lines = [line.rstrip("\n") for line in log_lines]
    i = _root_exception(lines)
    if i is None:
        return None
    text = _bare(lines[i])
    if re.search(r"validation errors? for \w+$", text):
        text = " | ".join([text, *(_bare(line) for line in lines[i + 1 : i + 3] if _bare(line))])
    return text[:_MAX_EXCERPT_CHARS]


def _excerpt(lines: list[str], i: int, before: int = 6, after: int = 3) -> str:
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
