"""The Setup form's fields as data: label, default, parser. No Textual here.

The sweep settings shown on the form (`form=True` on their declaration in `domain.SweepSettings`)
are generated from the settings' table (`app/setting_table.py`): label, default, bound and how the
text is read all come from the declaration, so a setting declared for the form appears here with
nothing else to write. The rest (the GPU to plan for, a prompt file, the plan's time budget) are
this form's own. One table says what each field is called, what empty means and how its text is
read, so the screen's labels, its inline errors and the parsed values cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specadvisor.app.setting_table import SETTINGS, SettingRow
from specadvisor.domain import Workload, WorkloadKind
from specadvisor.errors import InputError
from specadvisor.quantities import parse_count, parse_count_list, parse_duration, parse_number

DEFAULT_BUDGET = "30 min"


@dataclass(frozen=True)
class Field:
    id: str  # the Input's id (a setting's: its SweepSettings field name)
    label: str  # what the user reads next to it; errors name it
    default: str  # what empty means, shown as the placeholder
    parse: Callable[[str, str, str], Any]  # (text, label, default text) -> value; InputError when bad
    placeholder: str = ""  # shown when empty and there is no default
    setting: bool = False  # a SweepSettings field (its value goes to the plan's settings)
    choices: tuple[tuple[str, str], ...] = ()  # a choice of words (shown, value): the screen offers a Select

    @property
    def shown_placeholder(self) -> str:
        return f"{self.default} (default)" if self.default else self.placeholder


# ---------------------------------------------------------------------- settings, from their declarations


def _bounded(row: SettingRow, value: float, label: str) -> float:
    """A value in the flag's unit within the declared bound, said as the form says numbers."""
    b = row.bound
    if b is not None and not b.contains(value):
        unit = f" {row.unit}" if row.unit == "min" else ""
        if value > b.high or (b.high_open and value >= b.high):
            raise InputError(f"{label}: {value:g}{unit} is over the {b.high:g}{unit} limit", hint=f"enter at most {b.high:g}{unit}")
        raise InputError(f"{label}: {value:g}{unit} is under the {b.low:g}{unit} limit", hint=f"enter at least {b.low:g}{unit}")
    return value


def _reader(row: SettingRow) -> Callable[[str, str, str], Any]:
    """How the form reads a setting's text, by the kind and unit its declaration gives it."""
    if row.kind == "count":
        return lambda text, label, default: int(_bounded(row, parse_count(text, label, default=int(default)), label))
    if row.kind == "levels":
        return lambda text, label, default: [int(_bounded(row, level, label)) for level in parse_count_list(text, label, default=[int(default)])]
    if row.kind in ("int", "float") and row.unit == "min":  # a duration: "2 h", "90 min"; empty or "none": the default
        return lambda text, label, default: _duration(row, text, label, default)
    if row.kind in ("int", "float"):
        return lambda text, label, default: _number(row, text, label, default)
    if row.kind in ("switch", "negatable"):
        return lambda text, label, default: _yes_no(text or default, label)
    return lambda text, label, default: text.strip() or default


def _number(row: SettingRow, text: str, label: str, default: str) -> float | None:
    if not text.strip() and not default:
        return None
    b = row.bound
    low = b.low if b is not None else 0.0
    value = parse_number(text, label, default=float(default) if default else None, minimum=min(low, 0.0) if b is None else low)
    return row.to_model(_bounded(row, value, label))


def _duration(row: SettingRow, text: str, label: str, default: str) -> float | None:
    seconds = parse_duration(text, label, default=parse_duration(default, label) if default else None)
    if seconds is not None:
        _bounded(row, seconds * row.scale, label)  # the bound is in the flag's minutes
    return seconds


def _yes_no(text: str, label: str) -> bool:
    word = text.strip().lower()
    if word in ("yes", "y", "on", "true", "1"):
        return True
    if word in ("no", "n", "off", "false", "0"):
        return False
    raise InputError(f"{label}: cannot read {text.strip()!r} as yes or no", hint="enter yes or no")


def _default_text(row: SettingRow, model_default: Any) -> str:
    if model_default is None:
        return ""
    if isinstance(model_default, list):
        return ",".join(map(str, model_default))
    if isinstance(model_default, bool):
        return "yes" if model_default else "no"
    return f"{model_default:g}" if isinstance(model_default, float) else str(model_default)


# What each word of a choice setting means, beside the word (the Select shows both).
CHOICE_WORDS = {
    "auto": "auto: as vllm bench serve sends these prompts",
    "chat": "chat: through the chat template",
    "completions": "completions: raw text",
}


def _choice(row: SettingRow) -> Callable[[str, str, str], Any]:
    def read(text: str, label: str, default: str) -> str:
        word = text.strip() or default
        if word not in row.choices:
            raise InputError(f"{label}: {word!r} is not one of {', '.join(row.choices)}", hint=f"pick one of {', '.join(row.choices)}")
        return word

    return read


def setting_fields(rows: Iterable[SettingRow] = SETTINGS) -> tuple[Field, ...]:
    """A field for every setting declared for the form, in declaration order (a choice of words, such
    as the request format, as a Select of its words)."""
    return tuple(
        Field(
            row.name,
            row.label or row.flag,
            str(row.default or row.choices[0]),
            _choice(row),
            setting=True,
            choices=tuple((CHOICE_WORDS.get(c, c), c) for c in row.choices),
        )
        if row.kind == "choice"
        else Field(row.name, row.label or row.flag, _default_text(row, row.form_default), _reader(row), placeholder=row.form_hint, setting=True)
        for row in rows
        if row.form
    )


# ---------------------------------------------------------------------- the form's own fields


def _budget(text: str, label: str, default: str) -> float | None:
    return parse_duration(text, label, default=parse_duration(default, label))


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
    from specadvisor.app.machines import hypothetical

    try:
        hypothetical(text)
    except InputError as err:
        message = err.message.replace("in --gpu", "in").replace("--gpu ", f"{label} ")
        raise InputError(f"{message}; {err.hint}" if err.hint else message, hint="clear the field to advise for this machine") from err
    return text


def _engine_cmd(text: str, label: str, default: str) -> list[str] | None:
    """The command that starts vLLM here (`--engine-cmd`): another venv, a container; None: the one detected."""
    from specadvisor.app.engine_args import engine_cmd

    return engine_cmd(text, label) if text.strip() else None


def _endpoint(text: str, label: str, default: str) -> str | None:
    """A running server to measure as it is (`--endpoint`); None: launch servers."""
    from specadvisor.app.engine_args import endpoint_url

    return endpoint_url(text, label) if text.strip() else None


FIELDS: tuple[Field, ...] = (
    Field("gpu", "Plan for GPU", "", _gpu, "this machine (or a GPU to plan for, e.g. H100x8)"),
    Field("engine_cmd", "Engine command", "", _engine_cmd, "the vLLM detected (or e.g. ~/vllm-env/bin/vllm serve, docker run ...)"),
    Field("endpoint", "Endpoint", "", _endpoint, "none: launch servers (or a running server, e.g. http://127.0.0.1:8000)"),
    Field("prompt_file", "Prompt file", "", _prompt_file, "optional: your own prompts"),
    *setting_fields(),
    Field("budget", "Plan within", DEFAULT_BUDGET, _budget),  # sizes the plan; not the CLI's --budget (extra time to decide)
)
BY_ID = {f.id: f for f in FIELDS}
ENGINE_FIELDS = ("engine_cmd", "endpoint")  # what was typed in them is shown again on return, like the settings


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
    settings: dict[str, Any] = field(default_factory=dict)  # the form's sweep settings, in the model's units
    engine_cmd: list[str] | None = None  # the command that starts vLLM (None: the one detected)
    endpoint: str | None = None  # a running server to measure instead of launching


def parse_form(kind: str, source: str, texts: dict[str, str]) -> tuple[FormValues | None, dict[str, str]]:
    """(values, {}) when every field reads; (None, {field id: message}) otherwise, in form order."""
    values: dict[str, Any] = {}
    errors: dict[str, str] = {}
    hints: dict[str, str] = {}
    for field_ in FIELDS:
        try:
            values[field_.id] = field_.parse(texts.get(field_.id, ""), field_.label, field_.default)
        except InputError as err:
            errors[field_.id] = err.message
            hints[field_.id] = err.hint or ""
    if not errors and values["engine_cmd"] and values["endpoint"]:
        errors["endpoint"] = "Endpoint and Engine command exclude each other"
        hints["endpoint"] = "clear one: an endpoint is a server already running, nothing is launched"
    if errors:
        return None, {k: f"{m} ({hints[k]})" if hints[k] else m for k, m in errors.items()}
    settings = {f.id: values[f.id] for f in FIELDS if f.setting}
    defaults = Workload()
    levels = settings.get("concurrency", [defaults.concurrency])
    workload = Workload(
        kind=WorkloadKind(kind),
        prompt_source=values["prompt_file"] or source,
        concurrency=levels[0],
        concurrency_levels=levels,
        output_len=settings.get("output_len", defaults.output_len),
        temperature=settings.get("temperature", defaults.temperature),
        num_prompts=settings.get("num_prompts", defaults.num_prompts),
    )
    return FormValues(
        workload=workload, budget_s=values["budget"], gpu=values["gpu"], settings=settings, engine_cmd=values["engine_cmd"], endpoint=values["endpoint"]
    ), {}


def initial_texts(workload: Workload, budget: str = DEFAULT_BUDGET, gpu: str | None = None, typed: dict[str, str] | None = None) -> dict[str, str]:
    """What the fields show on opening: the workload's values, and what was typed before in the
    other setting fields, as real text (not placeholders)."""
    levels = workload.concurrency_levels or [workload.concurrency]
    from specadvisor.app.plan import builtin_prompt_sets

    builtin = workload.prompt_source is None or workload.prompt_source in builtin_prompt_sets()
    texts = {f.id: (typed or {}).get(f.id, "") for f in FIELDS if f.setting or f.id in ENGINE_FIELDS}
    texts.update(
        gpu=gpu or "",
        prompt_file="" if builtin else str(workload.prompt_source),
        concurrency=",".join(str(c) for c in levels),
        output_len=str(workload.output_len),
        temperature=f"{workload.temperature:g}",
        num_prompts=str(workload.num_prompts),
        budget=budget,
    )
    return {f.id: texts.get(f.id, "") for f in FIELDS}
