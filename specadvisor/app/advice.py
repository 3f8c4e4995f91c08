"""Use case `advise`: ranked speculative-decoding candidates for a model, a machine and a workload,
with the evidence measured on this machine first.

Both front ends ask here: the CLI's `advise` with its flags (`AdviceRequest` -> `advise_request`),
the TUI with what Setup filled in (`advise`). "Measured on this machine" is one answer,
`app.evidence`: sessions of this model on this hardware fingerprint that were measured here (an
imported bundle never is, whatever its fingerprint says).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specadvisor.errors import InputError

if TYPE_CHECKING:
    from specadvisor.domain import Advice, HardwareProfile, ModelProfile, Session, Workload
    from specadvisor.rulebase import RuleBase
    from specadvisor.store import Store


def measured_in(store: Store, model: str, hardware: HardwareProfile) -> list[Session]:
    """`evidence.sessions_measured_here` in a store already open."""
    from specadvisor.app.evidence import measured_here

    return [s for s in store.find_sessions(model=model, hardware_fingerprint=hardware.fingerprint()) if measured_here(s)]


def advise(hardware: HardwareProfile, model: ModelProfile, workload: Workload, *, db: Path | None = None) -> Advice:
    """The advice for what the TUI's Setup filled in, with this machine's own measurements as evidence.
    As `specadvisor advise` does, a temperature or output length left at the sweep's default is not
    taken as the served workload's: the advice is for the workload's usual settings (the model card's
    temperature first), and its header says which values it assumed."""
    from specadvisor.advisor import advise as _advise
    from specadvisor.app.evidence import sessions_measured_here
    from specadvisor.app.plan import default_output_len
    from specadvisor.domain import SweepSettings

    given_len = workload.output_len if workload.output_len != default_output_len(workload.prompt_source) else None
    given_t = workload.temperature if workload.temperature != SweepSettings().temperature else None
    served, line = assumed_workload(workload, model.id, output_len=given_len, temperature=given_t)
    advice = _advise(hardware, model, served, vllm_version=hardware.engine.version, local_sessions=sessions_measured_here(db, model.id, hardware))
    measured = f"; the sweep measures at temperature {workload.temperature:g}, {workload.output_len} output tokens (Setup)"
    advice.assumed = line + (measured if (served.temperature, served.output_len) != (workload.temperature, workload.output_len) else "")
    return advice


def assumed_workload(
    workload: Workload, model_id: str, *, output_len: int | None, temperature: float | None, rulebase: RuleBase | None = None
) -> tuple[Workload, str]:
    """The workload advice is for, with what was not given filled from the workload's practice (the
    model card's temperature first: rules/workloads.toml, models.toml), and the one line both front
    ends head the advice with, naming where each value came from."""
    from specadvisor.rulebase import workload_defaults

    defaults = workload_defaults(workload.kind.value, model_id, rulebase)
    out = output_len if output_len is not None else defaults.output_len
    temp = temperature if temperature is not None else defaults.temperature
    why_out = "as you passed it" if output_len is not None else defaults.output_why
    why_t = "as you passed it" if temperature is not None else defaults.temperature_why
    levels = workload.concurrency_levels or [workload.concurrency]
    line = f"for {workload.kind.value} at concurrency {','.join(map(str, levels))}: temperature {temp:g} ({why_t}), {out} output tokens ({why_out})"
    return workload.model_copy(update={"output_len": out, "temperature": temp}), line


@dataclass(frozen=True)
class AdviceRequest:
    """What `specadvisor advise` asks, as typed (checked by `advise_request`)."""

    model: str
    workload: str = "chat"
    concurrency: int = 1
    gpu: str | None = None  # plan for this GPU instead of this machine
    vllm_version: str | None = None
    output_len: int | None = None  # None: the workload's usual
    temperature: float | None = None  # None: the model card's, else the workload's
    tensor_parallel_size: int | None = None
    params_b: float | None = None
    drafter: str | None = None
    willing_to_train: bool = False
    rules: tuple[Path, ...] = ()
    offline: bool = False
    db: Path | None = None


@dataclass
class Advised:
    """The advice and what it was for."""

    advice: Advice
    model: ModelProfile
    hardware: HardwareProfile
    notes: list[str] = field(default_factory=list)


def advise_request(request: AdviceRequest) -> Advised:
    """The advice for a request: the rule base (shipped, the user's, `rules`), the model (an unknown
    private model still gets lookup methods, with a warning), drafters discovered on the Hub, the
    workload's defaults where nothing was asked, the machine, and this machine's measurements."""
    from specadvisor.advisor import advise as _advise
    from specadvisor.app.evidence import sessions_measured_here
    from specadvisor.app.machines import for_advice
    from specadvisor.domain import Workload, WorkloadKind
    from specadvisor.rulebase import load_rulebase, parse_version, workload_defaults

    for flag, value in (("--concurrency", request.concurrency), ("--output-len", request.output_len), ("--tensor-parallel-size", request.tensor_parallel_size)):
        if value is not None and value < 1:
            raise InputError(f"{flag} must be >= 1, got {value}", hint="pass a value of at least 1")
    if request.vllm_version:
        parse_version(request.vllm_version)
    rulebase = load_rulebase(list(request.rules))
    model, notes = _model(request.model, request.offline)
    model, discovered = _discover(model, rulebase, request.offline)
    defaults = workload_defaults(request.workload, model.id, rulebase)
    workload, assumed = assumed_workload(
        Workload(kind=WorkloadKind(request.workload), concurrency=request.concurrency, willing_to_train=request.willing_to_train),
        model.id,
        output_len=request.output_len,
        temperature=request.temperature,
        rulebase=rulebase,
    )
    hardware = for_advice(request.gpu, rulebase)  # a --rules DIR GPU or alias is found too
    drafter = None
    if request.drafter:
        from specadvisor.app.models import inspect_drafter

        drafter = inspect_drafter(request.drafter, model, offline=request.offline)
    advice = _advise(
        hardware, model, workload, drafter=drafter, vllm_version=request.vllm_version, local_sessions=sessions_measured_here(request.db, model.id, hardware),
        rulebase=rulebase, tensor_parallel_size=request.tensor_parallel_size, params_b=request.params_b,
    )  # fmt: skip
    if discovered:
        advice.trace.insert(0, f"drafter discovery: {discovered}")
    described = defaults.describe(request.output_len, request.temperature)
    if described:
        advice.trace.insert(0, described)
    advice.warnings[:0] = [*notes, *model.warnings]
    advice.assumed = assumed
    return Advised(advice, model, hardware)


def _model(ref: str, offline: bool) -> tuple[ModelProfile, list[str]]:
    """Inspect the model; an unknown private model still gets advice (lookup methods) with a warning."""
    from specadvisor.app.models import inspect_model
    from specadvisor.domain import ModelProfile

    try:
        return inspect_model(ref, offline=offline), []
    except InputError as err:
        if not ref.strip():
            raise
        return ModelProfile(id=ref.strip(), source="unknown"), [f"Model not inspected ({err.message}): size and MTP heads unknown."]


def _discover(model: ModelProfile, rulebase: RuleBase, offline: bool) -> tuple[ModelProfile, str]:
    """Drafters on the Hub for a model with a known id that the catalog lacks ("discovered, unreviewed")."""
    if model.source in ("local", "unknown"):
        return model, ""
    from specadvisor.modelinfo.discover import discover_drafters
    from specadvisor.rulebase import drafters_for

    known = {d.drafter for d in drafters_for(model.id, rulebase)} | {d.drafter for d in model.drafters}
    found = discover_drafters(model, offline=True if offline else None, known=known)
    if not found.drafters:
        return model, found.note
    return model.model_copy(update={"drafters": [*model.drafters, *found.drafters]}), found.note


# ---------------------------------------------------------------------- what the advice prints


def commands(advice: Advice, model: ModelProfile, hardware: HardwareProfile, config: dict[str, Any] | None, *, width: int | None = None) -> dict[str, Any]:
    """Serve and container commands; None for both when the model's size (so its TP) is unknown or
    the plan does not fit, or the release cannot load the model. One line each for --json (scripts); `width` breaks them for people."""
    from specadvisor.advisor import container_command, serve_command

    if not advice.tensor_parallel_known or advice.fits is False or advice.target_check != "loads":
        return {"serve_command": None, "container_command": None}
    ref = model.path if model.source == "local" and model.path else model.id
    local = [ref] if model.source == "local" and model.path else []
    if config and isinstance(config.get("model"), str) and Path(config["model"]).expanduser().is_dir():
        local.append(config["model"])  # a drafter named by a folder on this machine, not a Hub id
    tp = advice.tensor_parallel_size
    extra = [*(["--max-model-len", str(advice.max_model_len)] if advice.max_model_len else []), *advice.serve_flags]
    return {
        "serve_command": serve_command(ref, config, tensor_parallel_size=tp, extra_args=extra, width=width),
        "container_command": container_command(
            ref, config, vendor=hardware.vendor, vllm_version=advice.vllm_version, tensor_parallel_size=tp, extra_args=extra, local_paths=local, width=width
        ),
    }


def advice_json(advice: Advice, model: ModelProfile, hardware: HardwareProfile) -> dict[str, Any]:
    """Advice as JSON plus the rendered commands per candidate (what scripts paste)."""
    from specadvisor.vllm_command import spec_config_json

    data = advice.model_dump(mode="json")
    for entry, candidate in zip(data["candidates"], advice.candidates, strict=True):
        entry["speculative_config_json"] = spec_config_json(candidate.speculative_config)
        entry.update(commands(advice, model, hardware, candidate.speculative_config))
    data["baseline"].update(commands(advice, model, hardware, None))
    data["model"] = model.id
    data["hardware"] = hardware.gpu_label
    data["explain"] = explain(advice)
    return data


def explain(advice: Advice) -> list[str]:
    """Every rule checked and what it changed (`advise --explain`)."""
    from specadvisor.advisor import explain as _explain

    return _explain(advice)


def newest_known_vllm() -> str:
    """The newest vLLM release the rule base knows (assumed when none was detected or asked)."""
    from specadvisor.rulebase import LATEST_KNOWN

    return LATEST_KNOWN


def workload_kinds() -> tuple[str, ...]:
    """The workloads advice knows (`--workload`)."""
    from specadvisor.domain import WorkloadKind

    return tuple(k.value for k in WorkloadKind)
