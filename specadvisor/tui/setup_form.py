"""The Setup form's fields as data: label, default, parser. No Textual here.

One table says what each field is called, what empty means (the default shown in the field) and how
its text is read, so the screen's labels, its inline errors and the parsed Workload cannot drift
apart (an error once said "Prompts" for the field labelled "Requests").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specadvisor import setting_specs
from specadvisor.bench.prompts import BUILTIN_SOURCES
from specadvisor.domain import Workload, WorkloadKind
from specadvisor.errors import InputError
from specadvisor.quantities import parse_count, parse_count_list, parse_duration, parse_number

DEFAULT_BUDGET = "30 min"


@dataclass(frozen=True)
class Field:
    id: str  # the Input's id
    label: str  # what the user reads next to it; errors name it
    default: str  # what empty means, shown as the placeholder
    parse: Callable[[str, str, str], Any]  # (text, label, default text) -> value; InputError when bad
    placeholder: str = ""  # shown when empty and there is no default

    @property
    def shown_placeholder(self) -> str:
        return f"{self.default} (default)" if self.default else self.placeholder


def _within(setting: str, value: int, label: str) -> int:
    """A count within its bound as declared on SweepSettings (the CLI's and a bundle's too)."""
    high = int(setting_specs.bound(setting).high)
    if value > high:
        raise InputError(f"{label}: {value} is over the {high:,} limit", hint=f"enter at most {high:,}")
    return value


def _count(setting: str) -> Callable[[str, str, str], int]:
    return lambda text, label, default: _within(setting, parse_count(text, label, default=int(default)), label)


def _levels(text: str, label: str, default: str) -> list[int]:
    return [_within("concurrency", level, label) for level in parse_count_list(text, label, default=[int(default)])]


def _temperature(text: str, label: str, default: str) -> float:
    b = setting_specs.bound("temperature")  # vLLM's own [0, 2], declared on SweepSettings
    return parse_number(text, label, default=float(default), minimum=b.low, maximum=b.high)


def _budget(text: str, label: str, default: str) -> float | None:
    return parse_duration(text, label, default=parse_duration(default, label))


def _time_limit(text: str, label: str, default: str) -> float | None:
    """The sweep's hard limit (`sweep --time-limit`, SweepSettings.time_limit_s) as a duration; empty
    or "none": no limit. NaN, infinities and 0 do not read as a duration; a limit over the bound
    declared on SweepSettings (7 days) is refused here, as the flag refuses it."""
    seconds = parse_duration(text, label, default=None)  # the field's default: no limit
    if seconds is not None and setting_specs.problem("time_limit_s", seconds):
        high = setting_specs.SPECS["time_limit_s"].cli_bound.high
        raise InputError(f"{label}: {seconds / 60:g} min is over the {high:g} min limit", hint=f"enter at most {high:g} min (7 days), or clear it for no limit")
    return seconds


def _prompt_file(text: str, label: str, default: str) -> str | None:
    text = text.strip()
    if not text:
        return None
    path = Path(text).expanduser()
    if not path.is_file():
        raise InputError(f"{label}: {path} does not exist", hint="give a JSONL or text file of prompts, or clear the field")
    return str(path)


THIS_MACHINE = ("", "this machine", "this", "here", "local")


def _gpu(text: str, label: str, default: str) -> str | None:
    """A GPU to plan for (NAME[xCOUNT] from the GPU catalog, as `--gpu` in the CLI); None: this machine."""
    text = text.strip()
    if text.lower() in THIS_MACHINE:
        return None
    from specadvisor.hardware.planning import hypothetical_profile

    try:
        hypothetical_profile(text)
    except InputError as err:
        message = err.message.replace("in --gpu", "in").replace("--gpu ", f"{label} ")
        raise InputError(f"{message}; {err.hint}" if err.hint else message, hint="clear the field to advise for this machine") from err
    return text


def _default(setting: str) -> str:
    """A setting's default as the form shows it, from its declaration on SweepSettings."""
    value = setting_specs.SPECS[setting].default
    return ",".join(map(str, value)) if isinstance(value, list) else f"{value:g}"


FIELDS: tuple[Field, ...] = (
    Field("gpu", "Plan for GPU", "", _gpu, "this machine (or a GPU to plan for, e.g. H100x8)"),
    Field("prompt_file", "Prompt file", "", _prompt_file, "optional: your own prompts"),
    Field("concurrency", "Concurrency", _default("concurrency"), _levels),
    Field("output_len", "Output tokens", _default("output_len"), _count("output_len")),
    Field("temperature", "Temperature", _default("temperature"), _temperature),
    Field("num_prompts", "Requests", _default("num_prompts"), _count("num_prompts")),
    Field("budget", "Time budget", DEFAULT_BUDGET, _budget),
    Field("time_limit", "Time limit", "", _time_limit, "none (or a hard stop for the sweep, e.g. 2 h)"),
)
BY_ID = {f.id: f for f in FIELDS}


def field_error(field_id: str, text: str) -> str | None:
    """The inline message for one field's text, or None when it reads fine (empty = its default)."""
    field = BY_ID[field_id]
    try:
        field.parse(text, field.label, field.default)
    except InputError as err:
        return err.message
    return None


@dataclass
class FormValues:
    workload: Workload
    budget_s: float | None
    gpu: str | None = None  # plan for this named GPU (hypothetical) instead of this machine
    time_limit_s: float | None = None  # the sweep's hard limit (SweepSettings.time_limit_s); None: none


def parse_form(kind: str, source: str, texts: dict[str, str]) -> tuple[FormValues | None, dict[str, str]]:
    """(values, {}) when every field reads; (None, {field id: message}) otherwise, in form order."""
    values: dict[str, Any] = {}
    errors: dict[str, str] = {}
    hints: dict[str, str] = {}
    for field in FIELDS:
        try:
            values[field.id] = field.parse(texts.get(field.id, ""), field.label, field.default)
        except InputError as err:
            errors[field.id] = err.message
            hints[field.id] = err.hint or ""
    if errors:
        return None, {k: f"{m} ({hints[k]})" if hints[k] else m for k, m in errors.items()}
    levels = values["concurrency"]
    workload = Workload(
        kind=WorkloadKind(kind),
        prompt_source=values["prompt_file"] or source,
        concurrency=levels[0],
        concurrency_levels=levels,
        output_len=values["output_len"],
        temperature=values["temperature"],
        num_prompts=values["num_prompts"],
    )
    return FormValues(workload=workload, budget_s=values["budget"], gpu=values["gpu"], time_limit_s=values["time_limit"]), {}


def initial_texts(workload: Workload, budget: str = DEFAULT_BUDGET, gpu: str | None = None, time_limit: str = "") -> dict[str, str]:
    """What the fields show on opening: the current values, as real text (not placeholders)."""
    levels = workload.concurrency_levels or [workload.concurrency]
    builtin = workload.prompt_source is None or workload.prompt_source in BUILTIN_SOURCES
    return {
        "gpu": gpu or "",
        "prompt_file": "" if builtin else str(workload.prompt_source),
        "concurrency": ",".join(str(c) for c in levels),
        "output_len": str(workload.output_len),
        "temperature": f"{workload.temperature:g}",
        "num_prompts": str(workload.num_prompts),
        "budget": budget,
        "time_limit": time_limit,
    }
