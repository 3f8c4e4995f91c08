"""Import `vllm bench serve --save-result` JSON files measured elsewhere as arms of a session.

Field names follow vLLM's benchmark (contract section 5, `vllm/benchmarks/serve.py`'s result_json);
acceptance rate there is a percent. A file records the model (`model_id`), the prompt count
(`num_prompts`), `max_concurrency`, the request rate, the backend (which says how prompts were sent)
and the token totals (the output length per request is their quotient); it records neither the
speculative config, the prompt set, the temperature nor the seed. What it records is read from it
(`BenchFile`); what it does not is never filled in with a default (`Provenance.unrecorded`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specadvisor import physics
from specadvisor.analysis.arms import slug
from specadvisor.domain import Arm, ArmResult, LatencyStats, Session
from specadvisor.errors import InputError
from specadvisor.figures import position_stats
from specadvisor.store.bundle_limits import check_result
from specadvisor.store.safe_json import parse_untrusted_json, read_regular_file
from specadvisor.textsafe import line

SOURCE = "imported:vllm-bench"
_HINT = "pass the JSON written by vllm bench serve --save-result"
REQUIRED = ("completed", "output_throughput")


# `vllm bench serve --backend` -> how its prompts went out (request_format.py's words)
_BACKEND_FORMAT = {"openai-chat": "chat", "vllm": "completions", "openai": "completions"}


@dataclass(frozen=True)
class BenchFile:
    """One result file: its arm's result and what the file says about how it was measured."""

    path: Path
    result: ArmResult
    sha256: str  # of the file's bytes: the same file imported twice is the same measurement
    model_id: str | None
    num_prompts: int | None
    max_concurrency: int | None
    request_rate: str | None  # "inf" or a number, as the file states it
    request_format: str | None  # chat | completions, from the file's backend; None: not recorded
    output_per_request: float | None  # total_output_tokens / completed

    @property
    def speculative(self) -> bool:
        return self.result.num_drafts is not None


def import_bench_results(paths: list[Path | str]) -> list[ArmResult]:
    """One ArmResult per file, arm_id "bench-<file stem>". A malformed file raises InputError naming it."""
    return [bench_result(Path(p)) for p in paths]


def read_bench_files(paths: list[Path | str]) -> list[BenchFile]:
    """Every file read and checked (figures, physics) with what it records; InputError naming a bad one."""
    return [bench_file(Path(p)) for p in paths]


def bench_file(path: Path) -> BenchFile:
    raw, data = _read_raw(path)
    result = _checked_result(path, data)
    model = data.get("model_id")
    rate = data.get("request_rate")
    completed = result.completed or 0
    return BenchFile(
        path=path,
        result=result,
        sha256=hashlib.sha256(raw).hexdigest(),
        model_id=line(model, 300) if isinstance(model, str) and model.strip() else None,
        num_prompts=_whole(data.get("num_prompts"), path, "num_prompts"),
        max_concurrency=_whole(data.get("max_concurrency"), path, "max_concurrency"),
        request_rate=None if rate is None else line(str(rate), 40),
        request_format=_BACKEND_FORMAT.get(str(data.get("backend") or data.get("endpoint_type") or "")),
        output_per_request=result.output_tokens / completed if completed and result.output_tokens else None,
    )


def _whole(value: Any, path: Path, key: str) -> int | None:
    """A positive whole number the file states (None when absent); anything else names the file."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10_000_000:
        raise InputError(f"{line(str(path), 200)}: {key} is {line(repr(value), 40)}, not a whole number from 1 to 10,000,000", hint=_HINT)
    return value


def bench_result(path: Path) -> ArmResult:
    return _checked_result(path, _read(path))


def _checked_result(path: Path, data: dict[str, Any]) -> ArmResult:
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise InputError(f"{path}: not a `vllm bench serve --save-result` file (missing {', '.join(missing)})", hint="pass the JSON written by --save-result")
    try:
        result = _result(arm_id_of(path), data)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputError(f"{path}: unexpected value in a bench result: {line(str(exc), 200)}", hint="pass the JSON written by --save-result") from None

    def fail(where: str, problem: str) -> None:
        raise InputError(f"{line(str(path), 200)}: {where.removeprefix('result.')} {problem}", hint=_HINT)

    check_result(result, "result", fail)  # the figures a bundle may hold, and no others
    physics.enforce(result, None)  # impossible figures become a failed arm naming them, never ok
    return result


def arm_id_of(path: Path) -> str:
    """`bench-<file stem>` (a stem that already starts with "bench" is not prefixed twice)."""
    stem = slug(path.stem) or "file"
    return stem if stem == "bench" or stem.startswith("bench-") else f"bench-{stem}"


def bench_arm(result: ArmResult, spec_config: dict[str, Any] | None, concurrency: int = 1) -> Arm:
    """The arm an imported result stands for; spec_config None means no speculation was on (a
    result with speculation counters needs the config it ran with: nothing here makes one up)."""
    if spec_config is None:
        if result.num_drafts is not None:
            raise InputError(f"{result.arm_id} was measured with speculation but no speculative config was given", hint="pass --spec-config")
        return Arm(id=result.arm_id, label=f"{result.arm_id} (imported, no speculation)", concurrency=concurrency)
    n = spec_config.get("num_speculative_tokens", len(result.per_position) or None)
    return Arm(
        id=result.arm_id,
        label=f"{result.arm_id} (imported, {spec_config.get('method')} N={n})",
        method=spec_config.get("method"),
        n=n,
        speculative_config=spec_config,
        concurrency=concurrency,
    )


def _read(path: Path) -> dict[str, Any]:
    return _read_raw(path)[1]


def _read_raw(path: Path) -> tuple[bytes, dict[str, Any]]:
    """The file read and parsed with the bundle's limits (a regular file of at most 20 MB: no
    /dev/zero, FIFO or symlink; depth, size and finiteness checked), so a hostile file is one line."""
    try:
        raw = read_regular_file(path)
        data = parse_untrusted_json(raw, str(path))
    except InputError as exc:
        raise InputError(exc.message, hint=_HINT if exc.hint and "bundle" in exc.hint else exc.hint) from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a JSON object", hint="pass the JSON written by vllm bench serve --save-result")
    return raw, data


def _latency(data: dict[str, Any], metric: str) -> LatencyStats:
    def get(prefix: str) -> float | None:
        value = data.get(f"{prefix}_{metric}")
        return float(value) if value is not None else None

    return LatencyStats(mean=get("mean"), median=get("median"), p90=get("p90"), p99=get("p99"), std=get("std"))


def _result(arm_id: str, data: dict[str, Any]) -> ArmResult:
    result = ArmResult(
        arm_id=arm_id,
        source=SOURCE,
        completed=int(data["completed"]),
        failed=int(data.get("failed") or 0),
        duration_s=_float(data.get("duration")),
        input_tokens=int(data.get("total_input_tokens") or 0),
        output_tokens=int(data.get("total_output_tokens") or 0),
        output_throughput=_float(data["output_throughput"]),
        request_throughput=_float(data.get("request_throughput")),
        ttft_ms=_latency(data, "ttft_ms"),
        tpot_ms=_latency(data, "tpot_ms"),
        itl_ms=_latency(data, "itl_ms"),
        e2el_ms=_latency(data, "e2el_ms"),
    )
    if data.get("spec_decode_num_drafts") is not None:
        drafts = _count(data, "spec_decode_num_drafts")
        result.num_drafts = drafts
        result.num_draft_tokens = _count(data, "spec_decode_draft_tokens")
        result.num_accepted_tokens = _count(data, "spec_decode_accepted_tokens")
        rate = data.get("spec_decode_acceptance_rate")
        result.acceptance_rate = float(rate) / 100.0 if rate is not None else None
        length = data.get("spec_decode_acceptance_length")
        result.mean_acceptance_length = float(length) if length is not None else None
        # The file reports vLLM's own figures (same formulas as specadvisor.figures), rounded; they are
        # kept as the source states them. Per-position counts are not in it: recovered from the rates.
        rates = data.get("spec_decode_per_position_acceptance_rates") or []
        result.per_position = [position_stats(i, float(r) * drafts, drafts, rate=float(r)) for i, r in enumerate(rates)]
    return result


def _float(value: Any) -> float | None:
    return float(value) if value is not None else None


def _count(data: dict[str, Any], key: str) -> int:
    """A counter of the file as a whole count (12.7 drafts is no count: int() would make it 12)."""
    value = data.get(key)
    try:
        return physics.count(0 if value is None else value, key)
    except physics.ImplausibleFigures:
        raise ValueError(f"{key} is {line(repr(value), 40)}, not a whole count") from None


# ---------------------------------------------------------------------- the session the files make

OUTPUT_LEN_TOLERANCE = 0.01  # output lengths per request within 1% are one length (EOS-ended runs vary a little)
NOT_RECORDED_PROMPTS = "not recorded"  # the prompt set a session of bench files names (they record none)


@dataclass
class BenchImport:
    """What a set of files becomes: the arms and results to add, the settings the files record, what
    they do not, and notes to show (a mean output length, files already in the session)."""

    arms: list[Arm]
    results: list[ArmResult]
    model: str
    levels: list[int]
    num_prompts: int | None
    output_len: int | None
    request_format: str | None
    unrecorded: list[str]
    digest: str  # the same files with the same config and model: the same import
    notes: list[str]


def same_model(a: str, b: str) -> bool:
    """Whether two names plausibly name one model: equal, or the same last path part (a Hub id and
    the local folder it was downloaded to: `Qwen/Qwen3-8B` and `/models/Qwen3-8B`)."""
    return a.strip() == b.strip() or _tail(a) == _tail(b)


def _tail(name: str) -> str:
    return name.strip().rstrip("/").rsplit("/", 1)[-1].lower()


def plan_import(
    files: list[BenchFile], *, model: str | None, spec_config: dict[str, Any] | None, concurrency: int | None, into: Session | None = None
) -> BenchImport:
    """Check the files against each other, the flags and (`into`) the session they join; refuse what
    would make a measurement up: a speculative file without its config, a file of another model, files
    of different output lengths or request formats, a concurrency the files contradict."""
    names = {f.model_id for f in files if f.model_id}
    if len(names) > 1:
        raise InputError(f"the files measured different models ({', '.join(sorted(names))})", hint="import each model's files into its own session")
    named = next(iter(names), None)
    target = into.model if into is not None else (model or named)
    if not target:
        raise InputError("the files do not name their model (no model_id) and no --model was given", hint="pass --model MODEL, the model they measured")
    if named and not same_model(named, target):
        where = f"session {into.id[:8]} is for {target}" if into is not None else f"--model is {target}"
        raise InputError(
            f"{line(str(next(f.path for f in files if f.model_id == named)), 200)} measured {named}, but {where}",
            hint="pass the model the files measured (or leave --model out: it is read from the files)",
        )
    if spec_config is not None:
        _check_spec_config(spec_config, files)
    speculative = [f for f in files if f.speculative]
    if speculative and spec_config is None:
        raise InputError(
            f"{line(str(speculative[0].path), 200)} was measured with speculation (it has spec_decode_* counts), and the file does not record the speculative config",
            hint="""pass --spec-config with the --speculative-config it was served with, e.g. --spec-config '{"method":"ngram","num_speculative_tokens":4}'""",
        )
    levels = [_level(f, concurrency) for f in files]
    output_len, notes = _output_len(files, into)
    formats = {f.request_format for f in files if f.request_format}
    if len(formats) > 1:
        raise InputError(
            "the files sent their prompts differently (some through the chat template, some as raw text): they measured different workloads",
            hint="import the chat (--backend openai-chat) and the raw-text files into separate sessions",
        )
    fmt = next(iter(formats), None)
    if into is not None and fmt and into.settings.request_format and fmt != into.settings.request_format:
        raise InputError(f"the files were sent as {fmt}, session {into.id[:8]} as {into.settings.request_format}", hint="import them into a new session")
    counts = sorted({f.num_prompts or f.result.completed + f.result.failed for f in files} - {0})
    if len(counts) > 1:
        notes.append(f"the files measured different prompt counts ({', '.join(map(str, counts))}): compared by run totals")
    unrecorded = ["prompt_source", "temperature", "seed", "workload", "warmup"]
    if fmt is None:
        unrecorded.append("request_format")
    if output_len is None:
        unrecorded.append("output_len")
    arms, results, notes = _arms(files, spec_config, levels, into, notes)
    key = "\n".join(["vllm-bench", target, json.dumps(spec_config, sort_keys=True), *sorted(f"{f.sha256}@{c}" for f, c in zip(files, levels, strict=True))])
    return BenchImport(
        arms=arms,
        results=results,
        model=target,
        levels=sorted(set(levels)),
        num_prompts=counts[-1] if counts else None,
        output_len=output_len,
        request_format=fmt,
        unrecorded=unrecorded,
        digest=hashlib.sha256(key.encode()).hexdigest(),
        notes=notes,
    )


def _check_spec_config(spec_config: dict[str, Any], files: list[BenchFile]) -> None:
    """A method vLLM knows, and an N that agrees with the positions the files measured."""
    from specadvisor.rulebase import registry

    method = str(spec_config.get("method"))
    if not registry.specs_for_vllm_name(method):
        known = ", ".join(registry.vllm_names(None))
        raise InputError(f"--spec-config names method {line(method, 40)!r}, which vLLM does not have", hint=f"use one of: {known}")
    n = spec_config.get("num_speculative_tokens")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 64):
        raise InputError(f"--spec-config num_speculative_tokens is {line(repr(n), 20)}, not a whole number from 1 to 64", hint="e.g. 4")
    for f in files:
        positions = len(f.result.per_position)
        if n is not None and positions and positions != n:
            raise InputError(
                f"{line(str(f.path), 200)} has acceptance rates for {positions} positions, but --spec-config says num_speculative_tokens {n}",
                hint=f"pass the config it was served with (num_speculative_tokens {positions}?)",
            )


def _level(f: BenchFile, asked: int | None) -> int:
    """The concurrency a file was measured at: its --max-concurrency (all prompts at once when it had
    none and no rate limit); `asked` where the file records none, refused where it contradicts it."""
    stated = f.max_concurrency
    if stated is None and f.request_rate == "inf" and f.num_prompts:
        stated = f.num_prompts  # no limit and no rate: every prompt in flight at once
    if asked is not None and stated is not None and asked != stated:
        raise InputError(
            f"{line(str(f.path), 200)} was measured at --max-concurrency {stated}, not {asked}", hint="leave --concurrency out: it is read from the file"
        )
    level = asked if asked is not None else stated
    if level is None:
        raise InputError(
            f"{line(str(f.path), 200)} does not record a --max-concurrency (request rate {f.request_rate or 'not recorded'})",
            hint="pass --concurrency N, the number of requests it kept in flight",
        )
    return level


def _output_len(files: list[BenchFile], into: Session | None) -> tuple[int | None, list[str]]:
    """The output tokens per request the files measured (one length: arms of different lengths are
    different workloads), and a note when it is a mean rather than a fixed length."""
    lengths = [f.output_per_request for f in files if f.output_per_request]
    if not lengths:
        return None, []
    low, high = min(lengths), max(lengths)
    if high > low * (1 + OUTPUT_LEN_TOLERANCE):
        raise InputError(
            f"the files measured different output lengths ({low:.1f} and {high:.1f} tokens per request): their throughputs are not comparable",
            hint="import files of one output length (--random-output-len / --ignore-eos) into one session",
        )
    mean = sum(lengths) / len(lengths)
    length = max(1, round(mean))
    notes = (
        []
        if abs(mean - length) < 0.05
        else [f"output length: a mean of {mean:.1f} tokens per request (the files do not say whether it was fixed with --ignore-eos)"]
    )
    known = into is not None and "output_len" not in into.provenance.unrecorded
    if into is not None and known and abs(into.settings.output_len - length) > into.settings.output_len * OUTPUT_LEN_TOLERANCE:
        raise InputError(
            f"the files measured {length} output tokens per request, session {into.id[:8]} {into.settings.output_len}: not comparable",
            hint="import them into a new session (leave --session out)",
        )
    return length, notes


def _arms(
    files: list[BenchFile], spec_config: dict[str, Any] | None, levels: list[int], into: Session | None, notes: list[str]
) -> tuple[list[Arm], list[ArmResult], list[str]]:
    """The files' arms, ids unique in the session; a file whose result the session already holds is left out."""
    taken = {a.id for a in into.arms} if into is not None else set()
    held = [r.model_dump(exclude={"arm_id"}) for r in into.results] if into is not None else []
    arms: list[Arm] = []
    results: list[ArmResult] = []
    for f, level in zip(files, levels, strict=True):
        result = f.result.model_copy(deep=True)
        if result.model_dump(exclude={"arm_id"}) in held:
            notes.append(f"{line(str(f.path), 200)} is already in session {into.id[:8] if into else ''}: left out")
            continue
        held.append(result.model_dump(exclude={"arm_id"}))
        while result.arm_id in taken:
            result.arm_id += "-2"
        arm = bench_arm(result, spec_config if f.speculative else None, level)
        taken.add(arm.id)
        arms.append(arm)
        results.append(result)
    return arms, results, notes
