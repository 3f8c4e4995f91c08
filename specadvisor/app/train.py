"""Use case `train`: an EAGLE-3 drafter for the user's target, trained with Speculators on the
target's own answers to the user's prompts, then measured as it will serve.

Plan (`plan_training`), everything checked before a process starts: the engine and the Python that
trains (Speculators beside it), the release's hidden-state extraction and whether the target can
host an EAGLE-3 head there, the prompts (a held-out share kept apart), the memory for server and
trainer on the GPU. Run (`training_runner`): serve, regenerate, train, export (training/runner.py).
Then two sweeps through the normal sweep machinery: the drafter alone on the held-out prompts
(`heldout_check`: its acceptance per position, the drift reference and the N grid), and the sweep
that judges it (`judging_sweep`): the baseline, the best lookup method and the drafter over that
grid, at the user's concurrency, with the one verdict.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specadvisor.errors import EngineError, InputError

if TYPE_CHECKING:
    from specadvisor.analysis.trained import DrafterDrift
    from specadvisor.app.sweeps import Prepared
    from specadvisor.bench.prompts import Prompt
    from specadvisor.domain import ArmResult, HardwareProfile, ModelProfile, Session, SweepSettings, TrainedDrafter, TrainedDrafterRef
    from specadvisor.engine.cpu import CpuEngine
    from specadvisor.engine.speculators_env import TrainingPython
    from specadvisor.rulebase.schema import MethodSpec
    from specadvisor.store import Store
    from specadvisor.training.runner import TrainJob, TrainRunner

Note = Callable[[str], None]

MIN_PROMPTS = 16  # below this the held-out share and Speculators' own validation split are empty
FEW_PROMPTS = 200  # below this a drafter fits the prompts it saw and little else: said, not refused
HELDOUT_MAX = 64  # held-out prompts measured by vLLM (the rest of the share stays unseen, unmeasured)
SERVER_MEMORY_SHARE = 0.45  # --gpu-memory-utilization of the server when it shares one GPU with the trainer


@dataclass(frozen=True)
class TrainRequest:
    """What a front end asks of a training run, parsed and range-checked."""

    model: str | None = None
    prompts: str = "humaneval"
    num_prompts: int | None = None  # None: every prompt the source has
    output_len: int = 512
    temperature: float = 0.0
    minutes: float | None = None
    steps: int | None = None
    draft_vocab_size: int | None = None
    total_seq_len: int = 2048
    heldout_share: float = 0.1
    seed: int = 0
    cpu: bool = False
    engine_cmd: tuple[str, ...] | None = None
    server_args: tuple[str, ...] = ()
    train_python: str | None = None
    name: str = ""
    resume: str | None = None


@dataclass
class TrainPlan:
    """A checked job and what the front end should say before it runs."""

    job: TrainJob
    notes: list[str] = field(default_factory=list)
    cpu: CpuEngine | None = None


def default_draft_vocab(vocab_size: int | None) -> int | None:
    """A quarter of the target's vocabulary, at most 32,000 (Speculators' examples for 128k
    vocabularies), in steps of 512: the draft head then covers the tokens the data uses most."""
    if not vocab_size:
        return None
    return max(512, min(32_000, vocab_size // 4 // 512 * 512))


def aux_layers(num_layers: int) -> list[int]:
    """Speculators' default EAGLE-3 feature layers: early, middle, late."""
    if num_layers < 6:
        raise InputError(
            f"the target has {num_layers} layers: too few for an EAGLE-3 drafter's three feature layers", hint="train on a target of 6 layers or more"
        )
    return [2, num_layers // 2, num_layers - 3]


def split_heldout(prompts: list[Prompt], share: float, seed: int) -> tuple[list[Prompt], list[Prompt]]:
    """(training, held-out): a seeded share of the prompts never seen in training, at least two."""
    order = list(prompts)
    random.Random(seed).shuffle(order)
    count = max(2, math.ceil(len(order) * share))
    return order[count:], order[:count]


def plan_training(request: TrainRequest, store: Store, *, progress: Note, hardware: HardwareProfile | None = None) -> TrainPlan:
    """Resolve and check everything a run needs; raises a one-line error for each refusal."""
    if request.resume:
        return _plan_resume(request, store, progress=progress, hardware=hardware)
    if request.minutes is None and request.steps is None:
        raise InputError("no training budget given", hint="pass --minutes M (time) or --steps S (optimizer steps)")
    if request.minutes is not None and request.steps is not None:
        raise InputError("both --minutes and --steps given", hint="give one budget: --minutes for time, --steps for optimizer steps")
    from specadvisor.domain import TrainedDrafter, TrainSettings
    from specadvisor.provenance import prompt_sha256
    from specadvisor.rulebase import registry

    setup = _setup(request, progress, hardware)
    prompts, heldout = split_heldout(setup.pool, request.heldout_share, request.seed)
    settings = TrainSettings(
        method=registry.trainable().id,
        prompt_source=request.prompts,
        num_prompts=request.num_prompts or 0,
        heldout_share=request.heldout_share,
        output_len=request.output_len,
        temperature=request.temperature,
        request_format="chat" if prompts and prompts[0].messages is not None else "completions",
        minutes=request.minutes,
        steps=request.steps,
        draft_vocab_size=request.draft_vocab_size or default_draft_vocab(setup.profile.vocab_size),
        total_seq_len=request.total_seq_len,
        seed=request.seed,
    )
    from specadvisor import settings as paths

    drafter = TrainedDrafter(name=request.name, target=setup.model, settings=settings, prompt_sha256=prompt_sha256(prompts + heldout))
    work = paths.paths().drafters / drafter.id
    drafter = drafter.model_copy(
        update={
            "work_dir": str(work),
            "heldout_prompts": len(heldout),
            "heldout_ids": [p.id for p in heldout],
            "versions": {**setup.trainer.versions, "vllm": setup.vllm_version or "unknown"},
            "device": "cpu" if setup.cpu else (setup.hardware.gpus[0].name if setup.hardware.gpus else ""),
            "hardware_fingerprint": setup.hardware.fingerprint(),
        }
    )
    plan = _plan(drafter, setup, prompts, list(request.server_args))
    work.mkdir(parents=True, exist_ok=True)
    _write_heldout(work, heldout)
    store.save_drafter(drafter)
    return plan


@dataclass(frozen=True)
class Serving:
    """How the sweeps after training serve the target: its engine, and the CPU engine when it is that."""

    model: str
    engine_cmd: tuple[str, ...] | None  # None: the CPU engine's own
    server_args: tuple[str, ...]
    cpu: CpuEngine | None

    def engine(self) -> dict[str, list[str]]:
        """The sweep settings that say how to serve: the engine command (none: the CPU engine's) and server args."""
        return {"engine_cmd": list(self.engine_cmd or ()), "server_args": list(self.server_args)}


def serving_of(plan: TrainPlan) -> Serving:
    """The training run's engine, without the server share kept for the trainer."""
    args = tuple(a for a in plan.job.server_args if not a.startswith("--gpu-memory-utilization")) if plan.cpu is None else ()
    return Serving(plan.job.model, None if plan.cpu else tuple(plan.job.engine_cmd), args, plan.cpu)


def plan_judging(drafter: TrainedDrafter, *, progress: Note, engine_cmd: tuple[str, ...] | None = None, server_args: tuple[str, ...] = ()) -> Serving:
    """The engine a stored drafter is judged on: the CPU engine if it was trained there, else `vllm serve` (or `engine_cmd`)."""
    from specadvisor.app import engine_env

    if drafter.device == "cpu":
        return Serving(drafter.target, None, (), engine_env.ensure_cpu(progress))
    return Serving(drafter.target, engine_cmd or ("vllm", "serve"), server_args, None)


def training_runner(plan: TrainPlan, store: Store) -> TrainRunner:
    from specadvisor.training.runner import TrainRunner

    return TrainRunner(plan.job, save=store.save_drafter)


# ---------------------------------------------------------------------- after training


def heldout_check(drafter: TrainedDrafter, serving: Serving, *, output_len: int = 128) -> Prepared:
    """The trained drafter alone, on the prompts training never saw: vLLM's acceptance per position
    at N = the trained depth + 1 (so the decay past what it was trained for shows too)."""
    from specadvisor.app.sweeps import SweepRequest, plan_sweep
    from specadvisor.domain import SweepSettings
    from specadvisor.training import layout

    count = min(len(drafter.heldout_ids), HELDOUT_MAX)
    settings = SweepSettings.of(
        bracket=False,
        prompt_source=str(layout.heldout(Path(drafter.work_dir))),
        num_prompts=count,
        output_len=output_len,
        temperature=drafter.settings.temperature,
        trials=1,
        **serving.engine(),
    )
    request = SweepRequest(
        model=serving.model,
        methods=((drafter.settings.method, {"model": drafter.folder}),),
        n_values=(drafter.settings.ttt_steps + 1,),
        baseline=False,
        settings=settings,
        cpu=serving.cpu is not None,
        name=f"held-out check of trained drafter {drafter.id[:8]}",
        entry_point="train (held-out check)",
    )
    prepared = plan_sweep(request, serving.cpu)
    prepared.session.drafter = drafter.folder
    prepared.session.provenance.trained_drafter = drafter_ref(drafter)
    return prepared


def judging_sweep(drafter: TrainedDrafter, serving: Serving, n_grid: list[int], asked: SweepSettings | None = None) -> Prepared:
    """The sweep that answers "does it pay here": the baseline, the model-free lookup methods at their
    usual N, and the drafter over `n_grid`, at the user's concurrency, judged by the one decision rule.
    `asked`: the judging sweep's settings given (prompts: the training prompts' source unless given;
    the temperature is the one it was trained at)."""
    from specadvisor.app.sweeps import SweepRequest, plan_sweep
    from specadvisor.domain import SweepSettings
    from specadvisor.sweep.plan import SweepPlan

    asked = asked or SweepSettings()
    fill: dict[str, Any] = {"temperature": drafter.settings.temperature, **serving.engine()}
    if "prompt_source" not in asked.model_fields_set:
        fill["prompt_source"] = drafter.settings.prompt_source
    request = SweepRequest(
        model=serving.model,
        methods=((drafter.settings.method, {"model": drafter.folder}),),
        n_values=tuple(sorted(set(n_grid))),
        settings=asked.replace(**fill),  # the prompt set's own output length unless given (app.sweeps)
        cpu=serving.cpu is not None,
        name=f"judging trained drafter {drafter.id[:8]}",
        entry_point="train (judging sweep)",
    )
    prepared = plan_sweep(request, serving.cpu)
    plan = SweepPlan(session=prepared.session)
    for lookup in lookup_methods(drafter.versions.get("vllm"), "cpu" if serving.cpu else "cuda"):
        grid = lookup.default_n_grid
        plan.add_arm(lookup.id, 4 if 4 in grid else grid[len(grid) // 2], dict(lookup.default_config))
    prepared.session.drafter = drafter.folder
    prepared.session.provenance.trained_drafter = drafter_ref(drafter)
    seen = trained_on(drafter, prepared.session.settings)
    if seen:
        note = (
            f"{seen} of the {prepared.session.settings.num_prompts} judging prompts are ones the drafter was trained on: its acceptance "
            "here is optimistic (the held-out check is the unseen figure); judge it on your own traffic with --sweep-prompts"
        )
        prepared.notes.append(note)
        prepared.session.provenance.notes.append(note)
    return prepared


def trained_on(drafter: TrainedDrafter, settings: SweepSettings) -> int:
    """How many of a sweep's sampled prompts the drafter trained on (its source's prompts, less the held-out ones)."""
    from specadvisor.bench.prompts import load_prompts

    if settings.prompt_source != drafter.settings.prompt_source:
        return 0
    sampled = load_prompts(settings.prompt_source, settings.num_prompts, seed=settings.seed, request_format=settings.request_format).prompts
    held = set(drafter.heldout_ids)
    return sum(1 for p in sampled if p.id not in held)


def lookup_methods(vllm_version: str | None, platform: str) -> list[MethodSpec]:
    """The model-free methods this release serves on the platform with nothing more installed
    (n-gram; on CUDA also the GPU n-gram): what a trained drafter has to beat to be worth its training."""
    from specadvisor.rulebase import registry

    served = registry.served_methods(vllm_version if vllm_version not in (None, "unknown") else None, platform)
    return [spec for spec in served.values() if spec.drafting == "lookup" and spec.offer and not spec.requires_packages]


def drafter_ref(drafter: TrainedDrafter) -> TrainedDrafterRef:
    """What a session that measures the drafter records of it (and carries into its bundle)."""
    from specadvisor.domain import TrainedDrafterRef

    return TrainedDrafterRef(
        id=drafter.id,
        target=drafter.target,
        method=drafter.settings.method,
        prompt_source=drafter.settings.prompt_source,
        prompt_sha256=drafter.prompt_sha256,
        train_prompts=drafter.train_prompts,
        heldout_prompts=drafter.heldout_prompts,
        steps=drafter.steps,
        train_seconds=drafter.train_seconds,
        device=drafter.device,
        versions={k: v for k, v in drafter.versions.items() if k in ("speculators", "torch", "transformers", "vllm")},
        plain_kernels=drafter.plain_kernels,
    )


def link_session(store: Store, drafter_id: str, session: Session, *, heldout: bool) -> TrainedDrafter:
    """Record that `session` measured the drafter (its held-out check, or a judging sweep)."""
    current = store.get_drafter(drafter_id)
    if heldout:
        current = current.model_copy(update={"heldout_session_id": session.id, "stage": "heldout"})
    else:
        current = current.model_copy(update={"judge_session_ids": [*current.judge_session_ids, session.id], "stage": "judge"})
    store.save_drafter(current)
    return current


# ---------------------------------------------------------------------- planning pieces


@dataclass
class _Setup:
    """What both a new run and a resumed one resolve on this machine before planning the job."""

    model: str
    profile: ModelProfile
    pool: list[Prompt]
    trainer: TrainingPython
    hardware: HardwareProfile
    engine_cmd: list[str]
    server_args: list[str]
    server_env: dict[str, str]
    vllm_version: str | None
    cpu: CpuEngine | None
    notes: list[str]


def _setup(request: TrainRequest, progress: Note, hardware: HardwareProfile | None) -> _Setup:
    from specadvisor import hardware as probe
    from specadvisor.app import engine_env
    from specadvisor.engine import speculators_env

    if request.cpu:
        cpu: CpuEngine | None = engine_env.ensure_cpu(progress)
        assert cpu is not None
        trainer = speculators_env.ensure_cpu_speculators(cpu, progress)
        found = hardware or probe.detect(list(cpu.engine_cmd))
        engine_cmd, server_args, server_env = list(cpu.engine_cmd), list(cpu.server_args), dict(cpu.env)
        version: str | None = cpu.vllm_version
        notes = ["training on the CPU engine: slow (seconds per step) and for trying the pipeline; a GPU trains the drafters you serve"]
    else:
        cpu = None
        engine_cmd = list(request.engine_cmd) if request.engine_cmd else ["vllm", "serve"]
        found = hardware or probe.detect(engine_cmd)
        if not found.gpus:
            raise EngineError(
                "no GPU here: training a drafter runs the target's server and the trainer on a CUDA or ROCm GPU",
                hint="run it on a GPU machine, or `specadvisor train --cpu --minutes 5` to try the whole pipeline on the CPU engine's SmolLM2",
            )
        if not found.engine.found:
            raise EngineError(
                "no vLLM found to serve the target", hint="install vLLM or pass --engine-cmd (the Python that runs it must also have Speculators)"
            )
        python = Path(request.train_python) if request.train_python else speculators_env.python_of(engine_cmd)
        trainer = speculators_env.probe(python)
        if trainer.accelerator in ("", "cpu"):
            raise EngineError(
                f"the training Python {python} sees no GPU (torch {trainer.versions.get('torch', '?')})",
                hint="use a CUDA or ROCm build of torch there, or --cpu",
            )
        server_args, server_env, version, notes = [], {}, found.engine.version, []
    model = request.model or (str(cpu.model_dir) if cpu else None)
    if not model:
        raise InputError("no model given", hint="pass --model MODEL (or --cpu for the CPU engine's SmolLM2)")
    profile = _profile(model)
    _check_release(profile, version, "cpu" if cpu else found.engine.platform)
    pool, pool_notes = _prompts(request)
    return _Setup(model, profile, pool, trainer, found, engine_cmd, server_args, server_env, version, cpu, notes + pool_notes)


def _plan(drafter: TrainedDrafter, setup: _Setup, prompts: list[Prompt], user_server_args: list[str]) -> TrainPlan:
    from specadvisor.training.runner import TrainJob

    server_gpus, trainer_gpus, memory_notes = _placement(setup.hardware, setup.profile, drafter.settings, setup.cpu is not None, user_server_args)
    server_args = [*setup.server_args, *user_server_args]
    if setup.cpu is None and len(setup.hardware.gpus) == 1 and not any(a.startswith("--gpu-memory-utilization") for a in server_args):
        server_args += ["--gpu-memory-utilization", str(SERVER_MEMORY_SHARE)]
    job = TrainJob(
        drafter=drafter,
        model=setup.model,
        prompts=prompts,
        aux_layer_ids=aux_layers(setup.profile.num_hidden_layers or 0),
        num_layers=setup.profile.num_hidden_layers or 0,
        engine_cmd=setup.engine_cmd,
        trainer=setup.trainer,
        cpu=setup.cpu is not None,
        server_args=server_args,
        server_env=setup.server_env,
        server_gpus=server_gpus,
        trainer_gpus=trainer_gpus,
        regen_concurrency=4 if setup.cpu else 32,
    )
    return TrainPlan(job=job, notes=setup.notes + memory_notes, cpu=setup.cpu)


def _profile(model: str) -> ModelProfile:
    from specadvisor.modelinfo import inspect_model

    profile = inspect_model(model)
    if not profile.num_hidden_layers or not profile.architecture:
        raise InputError(
            f"cannot read {model}'s architecture and layer count (no config.json found)",
            hint="pass a local model folder or a Hub id whose config.json can be read (`specadvisor inspect MODEL`)",
        )
    return profile


def _check_release(profile: ModelProfile, version: str | None, platform: str) -> None:
    """Refuse where this vLLM cannot load the target, cannot extract hidden states for online
    training, or cannot host an EAGLE-3 head for this target, naming the releases that can (read
    from the release wheels: rules/vllm_contract.json)."""
    from specadvisor.advisor.gates import load_gate
    from specadvisor.advisor.validate import host_problems, validate_spec_config
    from specadvisor.rulebase import registry
    from specadvisor.rulebase.contract import load_contract

    contract = load_contract()
    gate = load_gate(profile.id, profile.architecture, version, contract)
    if gate.state == "does-not-load":
        raise EngineError(gate.message, hint=f"train with vLLM {gate.first} or newer" if gate.first else "train a model vLLM can serve")
    extraction = registry.hidden_state_extraction()
    if not registry.available(extraction, version):
        raise EngineError(
            f"vLLM {version} cannot extract hidden states for online training",
            hint=f"train with vLLM {extraction.min_version} or newer (the '{extraction.vllm_method}' method)",
        )
    method = registry.trainable()
    problems = host_problems(method.id, version, profile.architecture, profile.model_type, method.target_interface, contract)
    problems += validate_spec_config(
        {"method": method.vllm_method, "model": "trained-drafter", "num_speculative_tokens": 3},
        version,
        platform=platform if platform in ("cuda", "rocm", "cpu") else None,
        target_architecture=profile.architecture,
        speculators_type=method.trained_as,
    )
    if problems:
        raise EngineError(
            f"an {method.display_name or method.name} drafter for {profile.architecture} cannot be served here: {problems[0]}",
            hint="train where it can be served (the release named), or use n-gram/suffix, which need no drafter",
        )


def _prompts(request: TrainRequest) -> tuple[list[Prompt], list[str]]:
    """Every distinct prompt of the source (or a seeded sample of --num-prompts), checked for size."""
    from specadvisor.bench.prompts import prompt_pool

    pool = prompt_pool(request.prompts, seed=request.seed).prompts
    if request.num_prompts:
        pool = random.Random(request.seed).sample(pool, min(request.num_prompts, len(pool)))
    if len(pool) < MIN_PROMPTS:
        raise InputError(
            f"{request.prompts} holds {len(pool)} distinct prompts: too few to train on (at least {MIN_PROMPTS}; hundreds to learn well)",
            hint="pass a larger --prompts file (JSONL with 'prompt' or 'messages'), ideally from real traffic",
        )
    notes = []
    if len(pool) < FEW_PROMPTS:
        notes.append(
            f"{len(pool)} prompts: the drafter will fit these and lose acceptance on others; real traffic (1,000+ prompts) trains one that generalises"
        )
    return pool, notes


def _write_heldout(work: Path, heldout: list[Prompt]) -> None:
    """The held-out prompts as a prompt file the sweep reads (its own format: one JSON object per line)."""
    from specadvisor.training import layout

    lines = []
    for p in heldout:
        row: dict[str, Any] = {"id": p.id}
        if p.messages is not None:
            row["messages"] = p.messages
        else:
            row["prompt"] = p.text
        lines.append(json.dumps(row))
    layout.heldout(work).write_text("\n".join(lines) + "\n", encoding="utf-8")


def _placement(hardware: HardwareProfile, profile: ModelProfile, settings: Any, cpu: bool, server_args: list[str]) -> tuple[str | None, str | None, list[str]]:
    """(server GPUs, trainer GPUs, notes): the server on the first GPU and the trainer on the second
    when there are two or more; else both share one, the server held to SERVER_MEMORY_SHARE of it
    and the trainer sized from the draft head (refused when it cannot fit)."""
    if cpu:
        return None, None, []
    from specadvisor.training.memory import trainer_gib

    gpus = hardware.gpus
    need = trainer_gib(profile, settings.draft_vocab_size, settings.total_seq_len, settings.ttt_steps)
    if len(gpus) >= 2:
        return "0", "1", [f"server on GPU 0, trainer on GPU 1 (about {need:.1f} GiB for the trainer)"]
    total = (gpus[0].memory_total_mib or 0) / 1024
    share = SERVER_MEMORY_SHARE
    for arg in server_args:
        if arg.startswith("--gpu-memory-utilization="):
            share = float(arg.split("=", 1)[1])
    free_for_trainer = total * (1 - share) - 1.0  # CUDA context and allocator slack
    if total and need > free_for_trainer:
        raise EngineError(
            f"no GPU memory for server plus trainer: the server takes {share:.0%} of {total:.0f} GiB, the trainer needs about {need:.1f} GiB, {max(free_for_trainer, 0):.1f} GiB would be left",
            hint="lower --total-seq-len or --draft-vocab-size, or train on a machine with a second GPU for the trainer",
        )
    return None, None, [f"server and trainer share GPU 0: the server gets {share:.0%} of its memory, the trainer about {need:.1f} GiB"]


def _plan_resume(request: TrainRequest, store: Store, *, progress: Note, hardware: HardwareProfile | None) -> TrainPlan:
    """The stored run, planned again on this machine, continuing from its folder."""
    drafter = store.get_drafter(request.resume or "")
    if drafter.status == "complete":
        raise InputError(
            f"trained drafter {drafter.id[:8]} is complete ({drafter.folder})",
            hint="train a new one, or judge it: specadvisor drafters judge " + drafter.id[:8],
        )
    if not drafter.work_dir or not Path(drafter.work_dir).is_dir():
        raise InputError(f"the folder of trained drafter {drafter.id[:8]} is gone ({drafter.work_dir})", hint="train a new one")
    s = drafter.settings
    again = TrainRequest(
        model=drafter.target,
        prompts=s.prompt_source,
        num_prompts=s.num_prompts or None,
        heldout_share=s.heldout_share,
        seed=s.seed,
        cpu=request.cpu or drafter.device == "cpu",
        engine_cmd=request.engine_cmd,
        server_args=request.server_args,
        train_python=request.train_python,
    )
    setup = _setup(again, progress, hardware)
    prompts, heldout = split_heldout(setup.pool, s.heldout_share, s.seed)
    if [p.id for p in heldout] != drafter.heldout_ids:
        raise InputError(f"the prompts of {s.prompt_source} changed since training began", hint="train a new drafter on the prompts as they are now")
    plan = _plan(drafter, setup, prompts, list(request.server_args))
    plan.notes.append(f"resuming trained drafter {drafter.id[:8]} at step {drafter.steps} (stage {drafter.stage or 'start'})")
    return plan


def n_grid(rates: list[float]) -> tuple[list[int], str]:
    """The N grid a trained drafter's per-position acceptance suggests, and why (analysis.trained)."""
    from specadvisor.analysis.trained import n_grid as grid

    return grid(rates)


def drafter_drift(heldout: ArmResult, serving: ArmResult, *, trained_on: str, serving_on: str) -> DrafterDrift | None:
    """How much less the drafter accepts on the serving prompts than on its held-out ones (analysis.trained)."""
    from specadvisor.analysis.trained import drafter_drift as drift

    return drift(heldout, serving, trained_on=trained_on, serving_on=serving_on)
