"""Pydantic models every layer shares: probes, inspection, advice, sweep plan, results, sessions, events.

Kept in one module so the store, the bundle format, the CLI's --json and the TUI agree on one shape
(the machine's description is defined in `machine` and re-exported here).
Add fields with defaults so that older stored sessions and bundles still validate.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from datetime import UTC, datetime
from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from specadvisor.errors import InputError

# The machine's description lives in `machine` as plain dataclasses (so that `detect` imports no
# pydantic); re-exported so that the rest of the code keeps one import path.
from specadvisor.machine import CpuInfo as CpuInfo
from specadvisor.machine import EngineInfo as EngineInfo
from specadvisor.machine import GpuInfo as GpuInfo
from specadvisor.machine import GpuReading as GpuReading
from specadvisor.machine import GpuState as GpuState
from specadvisor.machine import HardwareProfile as HardwareProfile
from specadvisor.machine import ProbeNote as ProbeNote

DEFAULT_OUTPUT_LEN = 256  # output tokens per request unless a prompt set has its own (bench.prompts.default_output_len)


class Model(BaseModel):
    """Base: reject unknown keys so that a typo in a bundle or a rule is an error, not a silent drop."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)


def complete_models() -> None:
    """Build every deferred domain model's schema now. defer_build keeps importing the models cheap,
    but a model validated only inside another (an Arm in a Session read from disk or a bundle) keeps a
    placeholder serializer until its own class is built, and pydantic 2.13 (what vLLM 0.26 installs)
    then refuses to serialize it on its own ("'MockValSer' object is not an instance of
    'SchemaSerializer'"): `sessions export` failed so on the H200. Called where sessions are read and
    written (the store, bundles, --json output); 60 ms once, a flag check after."""
    pending = [Model]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls is not Model and not cls.__pydantic_complete__:
            cls.model_rebuild()


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    return str(uuid.uuid4())


# --------------------------------------------------------------------------- model and drafter


class MtpInfo(Model):
    """Native multi-token-prediction heads served with method "mtp"."""

    present: bool = False
    layers: int = 0
    config_key: str | None = None  # num_nextn_predict_layers | mtp_num_hidden_layers | ...
    confirmed_by_weights: bool | None = None  # None: no weight index to check
    needs_assistant_checkpoint: bool = False  # Gemma 4: MTP via a separate assistant model
    detail: str = ""


class DrafterRef(Model):
    """A drafter known for a target: from the published catalog or a local directory."""

    drafter: str
    method: str  # vLLM method the drafter is served with (eagle3, dflash, draft_model, mtp, dspark)
    parallel_drafting: bool = False
    source: str = ""  # citation or "local"
    date: str = ""
    reviewed: bool = True  # False: found on the Hub by discovery, nobody has checked it


class DrafterProfile(Model):
    """An inspected drafter checkpoint (speculators format, EAGLE, DFlash or a plain small model)."""

    id: str
    path: str | None = None
    algorithm: str | None = None  # speculators_model_type: eagle3 | peagle | dflash | dspark | ...
    method: str | None = None  # the vLLM method it is served with
    parallel_drafting: bool = False
    verifier: str | None = None
    default_k: int | None = None
    block_size: int | None = None
    vocab_size: int | None = None
    params_b: float | None = None  # from its config.json shapes: sizes it in the memory plan
    quantization: str | None = None  # its config's quantization_config, as ModelProfile.quantization
    servable: bool = True
    compatible: bool | None = None  # None: could not tell
    warnings: list[str] = Field(default_factory=list)


class ModelProfile(Model):
    id: str
    source: Literal["local", "hf-cache", "hub", "catalog", "unknown"] = "unknown"
    path: str | None = None
    family: str | None = None
    architecture: str | None = None
    model_type: str | None = None
    text_model_type: str | None = None  # text_config.model_type where the config nests one (gemma3_text)
    params_b: float | None = None
    active_params_b: float | None = None
    is_moe: bool = False
    num_experts: int | None = None
    experts_per_token: int | None = None
    num_hidden_layers: int | None = None
    vocab_size: int | None = None
    context_length: int | None = None
    kv_bytes_per_token: int | None = None  # KV cache per token over all layers at 16-bit, from config.json shapes
    kv_heads: int | None = None  # num_key_value_heads (None under MLA or unknown): vLLM replicates them when TP exceeds the count
    mla: bool = False  # multi-head latent attention (kv_lora_rank): vLLM keeps the whole compressed KV cache on every TP rank
    quantization: str | None = None
    dtype: str | None = None
    mtp: MtpInfo = Field(default_factory=MtpInfo)
    drafters: list[DrafterRef] = Field(default_factory=list)  # published / known drafters
    warnings: list[str] = Field(default_factory=list)


# --------------------------------------------------------------------------- workload and advice


class WorkloadKind(str, Enum):
    chat = "chat"
    code = "code"
    math = "math"
    rag = "rag"
    agentic = "agentic"
    edit = "edit"  # copy code back with a change: the output repeats the prompt


class Workload(Model):
    kind: WorkloadKind = WorkloadKind.chat
    concurrency: int = Field(1, ge=1)
    concurrency_levels: list[int] = Field(default_factory=list)  # levels to sweep; empty = [concurrency]
    output_len: int = Field(DEFAULT_OUTPUT_LEN, ge=1)
    temperature: float = Field(0.0, ge=0.0)
    prompt_source: str | None = None  # humaneval | sharegpt | math | rag | a file path
    num_prompts: int = Field(32, ge=1)
    willing_to_train: bool = False


class EvidenceRef(Model):
    """A result cited for a candidate: published, or measured locally (which outweighs published)."""

    id: str
    summary: str
    source: str
    date: str = ""
    speedup_low: float | None = None
    speedup_high: float | None = None
    conditions: str = ""
    local: bool = False
    stale: bool = False  # a local result measured with another vLLM version or drafter


class Candidate(Model):
    id: str  # method id from rules/methods (eagle3, peagle, dflash, mtp, ngram, suffix, draft_model, ...)
    method: str  # the vLLM `method` value
    drafter: str | None = None
    speculative_config: dict[str, Any]  # template with num_speculative_tokens at the N the evidence expects best
    n_grid: list[int]
    score: float
    reasons: list[str] = Field(default_factory=list)
    evidence: list[EvidenceRef] = Field(default_factory=list)
    expected_speedup: tuple[float, float] | None = None
    warnings: list[str] = Field(default_factory=list)
    parallel_drafting: bool = False


class Advice(Model):
    candidates: list[Candidate] = Field(default_factory=list)
    baseline: dict[str, Any] = Field(default_factory=lambda: {"label": "no speculation", "speculative_config": None})
    warnings: list[str] = Field(default_factory=list)
    verdict: str = ""  # one plain sentence: speculate / try carefully / unlikely to pay
    speculation_unlikely: bool = False
    fired_rules: list[str] = Field(default_factory=list)
    tensor_parallel_size: int = 1
    tensor_parallel_known: bool = True  # False: the model's size is unknown; serve commands would be a guess
    missing_inputs: list[str] = Field(default_factory=list)  # what the user must give first (--tensor-parallel-size or --params-b)
    max_model_len: int | None = None  # suggested --max-model-len when the full context does not fit
    fits: bool | None = None  # False: weights, drafter and KV cache do not fit these GPUs; no serve command is given
    vllm_version: str | None = None
    trace: list[str] = Field(default_factory=list)  # every rule checked and what it changed (advise --explain)
    verdict_level: Literal["speculate", "careful", "unlikely", ""] = ""
    suggest_training: bool = False  # no drafter fits: training one (Speculators, EAGLE-3 first) is the way up
    # The workload the advice is for and where each value came from ("for chat at concurrency 1: temperature
    # 0.7 (the chat workload's usual settings), 512 output tokens (...)"): the header of both front ends.
    assumed: str = ""
    # whether this vLLM release's model registry loads the target: "unverified" when its architecture
    # is unknown (no config.json read, not in the catalog); either way other than "loads", no command
    target_check: Literal["loads", "unverified", "does-not-load"] = "loads"
    serve_flags: list[str] = Field(default_factory=list)  # flags every serve line of this target needs (--trust-remote-code)
    memory: list[str] = Field(
        default_factory=list
    )  # the memory plan's assumptions (bytes per parameter, KV dtype and layout per rank, what each arm is charged)


# --------------------------------------------------------------------------- sweep plan and results


class Arm(Model):
    """One server configuration to measure. The baseline arm has speculative_config None."""

    id: str  # stable within a session: "baseline", "ngram-n4", "ngram-n4-c8"
    label: str
    method: str | None = None
    n: int | None = None
    speculative_config: dict[str, Any] | None = None
    parallel_drafting: bool = False
    concurrency: int = 1
    server_args: list[str] = Field(default_factory=list)

    @property
    def is_baseline(self) -> bool:
        return self.speculative_config is None


class LatencyStats(Model):
    """Milliseconds over the measured requests."""

    mean: float | None = None
    median: float | None = None
    p90: float | None = None
    p99: float | None = None
    std: float | None = None


class PositionStats(Model):
    """Acceptance at draft position i: accepted[i] / drafts, with a Wilson interval. Raw counts kept."""

    position: int
    accepted: int
    drafts: int
    rate: float
    ci_low: float | None = None
    ci_high: float | None = None


class AchievedLoad(Model):
    """The load a measurement really applied, checked against what was asked.

    Closed loop: `asked` is the concurrency, `achieved` the mean number of requests in flight (sum
    of request times / duration). Poisson: `asked` is the request rate (req/s) and `achieved` the
    rate requests were really sent at. `per_trial` keeps each trial's figure.
    """

    mode: Literal["closed", "poisson"] = "closed"
    asked: float
    achieved: float
    per_trial: list[float] = Field(default_factory=list)
    mean_in_flight: float | None = None  # also recorded in Poisson mode

    @property
    def ratio(self) -> float | None:
        return self.achieved / self.asked if self.asked > 0 else None

    @property
    def unit(self) -> str:
        return "in flight" if self.mode == "closed" else "req/s"

    def short(self) -> str:
        """ "3.9/4 in flight" or "1.8/2 req/s": achieved over asked, for tables."""
        return f"{self.achieved:.1f}/{self.asked:g} {self.unit}"


class ArmStatus(str, Enum):
    pending = "pending"
    running = "running"
    ok = "ok"
    failed = "failed"
    stopped_early = "stopped_early"
    skipped = "skipped"


class RequestRecord(Model):
    """One measured request of a run, kept so that arms can be compared prompt by prompt (at T=0 every
    arm serves the same prompts in the same order) and so a verdict can be recomputed anywhere."""

    index: int = Field(ge=0)  # position in the prompt set: the same prompt has the same index in every arm
    prompt_id: str = ""  # short hash of the prompt text (tells a changed prompt set apart)
    ttft_ms: float | None = None
    latency_ms: float  # end to end
    output_tokens: int = 0


RunRole = Literal["trial", "bracket", "confirm"]  # a trial, the baseline's end-of-sweep bracket, the confirmation wave


class RunRecord(Model):
    """One measurement of an arm on its own server launch: a trial, the end-of-sweep bracket of the
    baseline, or the confirmation wave. Where and when it ran is what drift and fairness checks need."""

    trial: int = 1
    role: RunRole = "trial"
    wave: int | None = None  # runs of one wave ran side by side (parallel) or back to back (serial)
    placement: str = ""  # "GPU 0,1", "cores 0-0", "" = the whole host
    status: str = "ok"
    started_at: datetime | None = None
    finished_at: datetime | None = None
    startup_s: float | None = None
    startup_cache: Literal["cold", "warm"] | None = None  # vLLM's compile/graph caches at launch (engine.caches)
    completed: int = 0
    planned: int = 0  # requests the run would have sent without early stopping
    duration_s: float | None = None
    output_throughput: float | None = None
    output_throughput_ci: tuple[float, float] | None = None
    seconds_saved: float = 0.0  # estimated measuring time saved by stopping early
    requests: list[RequestRecord] = Field(default_factory=list)  # per request (empty before schema 1.2)
    repeat: int = 1  # 1: the launch's first pass over the prompts; 2..: more requests on the same running server


class RatePoint(Model):
    """One Poisson rate of a goodput search: the load asked, what it achieved, the p99 latencies."""

    rate: float  # offered requests/s
    achieved_rate: float | None = None
    completed: int = 0
    failed: int = 0
    output_throughput: float | None = None
    tpot_p50_ms: float | None = None
    tpot_p99_ms: float | None = None
    ttft_p50_ms: float | None = None
    ttft_p99_ms: float | None = None
    meets_slo: bool = False


class GpuTelemetry(Model):
    """What the GPUs of one arm did while it ran, and the energy it cost."""

    source: str = ""  # nvml | amdsmi
    gpus: list[int] = Field(default_factory=list)  # physical indices sampled
    interval_s: float = 1.0
    start: list[GpuState] = Field(default_factory=list)
    end: list[GpuState] = Field(default_factory=list)
    samples: list[GpuReading] = Field(default_factory=list)
    energy_j: float | None = None  # integral of board power over the arm, all its GPUs
    mean_power_w: float | None = None
    energy_per_output_token_j: float | None = None  # mean power x measured duration / output tokens
    warnings: list[str] = Field(default_factory=list)


class ArmResult(Model):
    arm_id: str
    status: ArmStatus = ArmStatus.ok
    started_at: datetime | None = None
    finished_at: datetime | None = None
    vllm_version: str | None = None
    # load
    completed: int = 0
    failed: int = 0
    duration_s: float | None = None
    output_tokens: int = 0
    input_tokens: int = 0
    output_throughput: float | None = None  # output tokens / s over the measured window
    output_throughput_ci: tuple[float, float] | None = None  # None: no honest interval (see the basis)
    output_throughput_ci_basis: str = ""  # "3 trials", "batch means over 12 windows of 1.4 s", "one trial: no interval (...)"
    request_throughput: float | None = None
    achieved_request_rate: float | None = None
    achieved_load: AchievedLoad | None = None  # the load really applied vs the load asked
    trials: list[float] = Field(default_factory=list)  # output throughput per trial
    ttft_ms: LatencyStats = Field(default_factory=LatencyStats)
    tpot_ms: LatencyStats = Field(default_factory=LatencyStats)
    itl_ms: LatencyStats = Field(default_factory=LatencyStats)
    e2el_ms: LatencyStats = Field(default_factory=LatencyStats)
    # speculation (None on the baseline)
    num_drafts: int | None = None
    num_draft_tokens: int | None = None
    num_accepted_tokens: int | None = None
    mean_acceptance_length: float | None = None
    acceptance_rate: float | None = None
    per_position: list[PositionStats] = Field(default_factory=list)
    # quality of the measurement
    warnings: list[str] = Field(default_factory=list)
    error: str | None = None  # diagnosed cause when failed
    error_excerpt: str | None = None
    log_path: str | None = None
    source: str = "measured"  # measured | imported:vllm-bench | predicted
    # scheduling: every run of this arm (trials, bracket, confirmation), and where the last one ran
    runs: list[RunRecord] = Field(default_factory=list)
    # capacity (a rate sweep inside one launch): the highest Poisson rate meeting the latency target
    goodput_rps: float | None = None
    rate_points: list[RatePoint] = Field(default_factory=list)
    wave: int | None = None
    placement: str | None = None
    # server start-up: the first cold launch and the mean of warm ones (compile caches shared across arms)
    startup_cold_s: float | None = None
    startup_warm_s: float | None = None
    serve_argv: list[str] = Field(default_factory=list)  # the exact (redacted) server command line of this arm
    telemetry: GpuTelemetry | None = None  # GPU readings while the arm ran (None: no GPU or not sampled)

    @property
    def per_position_acceptance(self) -> list[float]:
        return [p.rate for p in self.per_position]


class MetricsSample(Model):
    """One live scrape of /metrics during an arm, as cumulative deltas since the arm's start."""

    arm_id: str
    t: float  # seconds since the arm's measurement began
    generation_tokens: float = 0
    num_drafts: float = 0
    num_draft_tokens: float = 0
    num_accepted_tokens: float = 0
    accepted_per_position: list[float] = Field(default_factory=list)
    requests_running: float | None = None
    requests_waiting: float | None = None
    kv_cache_usage: float | None = None


class DriftReport(Model):
    """How far the reference arm (the baseline) moved between its first and last measurement."""

    arm_id: str
    first: float  # output tok/s
    last: float
    change: float  # (last - first) / first
    seconds_apart: float | None = None
    measurements: int = 2
    threshold: float = 0.05
    noise: float | None = None  # a change two runs' noise alone reaches (95%), when repeats measured it
    machine: str | None = None  # what the GPUs' own readings say changed (clocks, temperature, throttling)
    exceeded: bool = False


class ConcurrencyPick(Model):
    """The answer at one measured concurrency level (a sweep over several levels gets one each)."""

    concurrency: int
    arm_id: str | None  # None: do not speculate at this level
    do_not_speculate: bool = False
    speculative_config: dict[str, Any] | None = None
    speedup: float | None = None  # the chosen arm's; not speculating: the best speculative arm's (what the verdict rests on)
    speedup_ci: tuple[float, float] | None = None
    summary: str = ""  # one line: the pick and its figures, or why not to speculate
    # the decision (analysis.decision); empty on answers stored before it existed
    decision: Literal["speculate", "do not speculate", "undecided", ""] = ""
    verdict: str = ""  # "speculate: n-gram N=4" | "do not speculate" | "undecided after ...: measuring ... would decide it"
    comparison: Literal["paired", "unpaired", ""] = ""  # prompt by prompt, or by run totals (no per-request records)
    limited_by: Literal["launch-to-launch", "within-run", ""] = ""  # the noise component that kept it undecided
    reasons: list[str] = Field(default_factory=list)  # every one consistent with the verdict


class Recommendation(Model):
    arm_id: str | None  # None: do not speculate (or, with withheld, no verdict)
    do_not_speculate: bool = False
    speculative_config: dict[str, Any] | None = None
    speedup: float | None = None
    speedup_ci: tuple[float, float] | None = None
    reasons: list[str] = Field(default_factory=list)
    serve_command: str | None = None
    batch_size_schedule: list[list[int]] | None = None  # num_speculative_tokens_per_batch_size
    drift: DriftReport | None = None
    withheld: bool = False  # answers stored before the decision rule: "no verdict" (drift); never set now (undecided says why)
    per_concurrency: list[ConcurrencyPick] = Field(default_factory=list)  # one per measured level
    # the one verdict (analysis.decision), derived from per_concurrency; empty on answers stored before it
    decision: Literal["speculate", "do not speculate", "undecided", "depends on concurrency", ""] = ""
    verdict: str = ""
    confidence: float | None = None
    looks: int = 1  # decisions taken during the sweep (sequential measuring); error is controlled over all of them

    @property
    def headline(self) -> str:
        """The one-line answer every view prints. Answers stored before the decision rule (no
        `verdict`) are described from their old flags and point to `sessions show --recompute`."""
        if self.verdict:
            return self.verdict
        if self.withheld:
            return "no verdict stored (an answer from before the decision rule): sessions show ID --recompute re-judges it"
        if self.do_not_speculate:
            return "do not speculate"
        return f"speculate: {self.arm_id}" if self.arm_id else "no recommendation"


StopCode = Literal[
    "decided",
    "planned runs measured",
    "budget too small",
    "step exceeds time left",
    "time limit",
    "looks taken",
    "no deciding step",
    "measured nothing",
    "cancelled",
]


class SweepStop(Model):
    """Why the sweep's last run stopped measuring, as its runner saw it: a code and the figures behind
    it, never words (analysis/stops.py words it), so a bundle's record is data and every view,
    recomputed or not, says the same. Seconds are wall-clock."""

    code: StopCode
    looks: int = Field(0, ge=0, le=1_000)  # looks at the decision taken (sequential measuring)
    budget_s: float | None = Field(None, ge=0, le=1e9, allow_inf_nan=False)  # --budget, as asked
    spent_s: float | None = Field(None, ge=0, le=1e9, allow_inf_nan=False)  # of the budget, when it stopped
    time_limit_s: float | None = Field(None, ge=0, le=1e9, allow_inf_nan=False)  # --time-limit, as asked
    time_left_s: float | None = Field(None, ge=0, le=1e9, allow_inf_nan=False)  # of the limit, when a step was refused
    step_s: float | None = Field(None, ge=0, le=1e9, allow_inf_nan=False)  # what the step not taken would have cost
    arms_stopped: int = Field(0, ge=0, le=10**9)  # the time limit: arms cut before any measurement
    passes_cut: int = Field(0, ge=0, le=10**9)  # the time limit: passes of measured arms cut
    unlaunched: int = Field(0, ge=0, le=10**9)  # the time limit: arms never launched

    def text(self, decided: bool) -> str:
        """Why measuring stopped, in one line (`decided`: every level has an answer)."""
        spent = f"{_min(self.spent_s or 0.0)} of the {_asked(self.budget_s)} budget spent" if self.budget_s is not None else ""
        at = f"stopped at look {self.looks}" if self.looks else "stopped"
        if self.code == "decided":
            return f"decided at look {self.looks}" + (f", {spent}" if spent else "")
        if self.code == "planned runs measured":
            if decided:
                return "decided on the planned runs" + (f", within the {_asked(self.time_limit_s)} time limit" if self.time_limit_s else "")
            return "stopped after the planned runs: no --budget was given to measure the step that would decide it"
        if self.code == "budget too small":
            left = max(0.0, (self.budget_s or 0.0) - (self.spent_s or 0.0))
            return f"{at}: the next step needs about {_min(self.step_s or 0.0)}, more than the {_min(left)} left of the {_asked(self.budget_s)} budget ({_min(self.spent_s or 0.0)} spent)"
        if self.code == "step exceeds time left":
            tail = f" ({spent})" if spent else ""
            return (
                f"{at}: the next step needs about {_min(self.step_s or 0.0)}, more than the {_min(self.time_left_s or 0.0)} "
                f"the {_asked(self.time_limit_s)} time limit leaves, so it was not started{tail}"
            )
        if self.code == "time limit":
            parts = (
                f"{self.arms_stopped} arm(s) stopped mid-run" if self.arms_stopped else "",
                f"{self.passes_cut} pass(es) of measured arms cut, stored as stopped and not counted" if self.passes_cut else "",
                f"{self.unlaunched} not launched" if self.unlaunched else "",
            )
            cut = ", ".join(part for part in parts if part)
            limit = f"the sweep stopped at its time limit of {_asked(self.time_limit_s)}" + (f" ({cut})" if cut else "")
            return f"{limit}: the verdict uses only what was measured before it"
        if self.code == "looks taken":
            return f"stopped after the plan's {self.looks} looks" + (f" ({spent})" if spent else "")
        if self.code == "no deciding step":
            return f"{at}: no step within reach would decide it" + (f" ({spent})" if spent else "")
        if self.code == "measured nothing":
            return f"{at}: the added launches measured nothing" + (f" ({spent})" if spent else "")
        return "cancelled by the user" + (f" at look {self.looks}" if self.looks else "") + (f" ({spent})" if spent else "")


def _min(seconds: float) -> str:
    """A duration as the verdicts give it: minutes with one decimal."""
    return f"{seconds / 60:.1f} min"


def _asked(seconds: float | None) -> str:
    """A limit as the user gave it (`--budget 8`: 8 min)."""
    minutes = (seconds or 0.0) / 60
    return f"{minutes:g} min" if minutes >= 1 else f"{seconds or 0.0:g} s"


class TrainedDrafterRef(Model):
    """What a session measuring a drafter `specadvisor train` made records of it, so a bundle says
    how the drafter came to be (its folder stays on the machine that trained it)."""

    id: str = Field(max_length=64)
    target: str = Field("", max_length=4096)
    method: str = Field("", max_length=64)
    prompt_source: str = Field("", max_length=4096)
    prompt_sha256: str = Field("", max_length=64)
    train_prompts: int = Field(0, ge=0, le=1_000_000_000)
    heldout_prompts: int = Field(0, ge=0, le=1_000_000_000)
    steps: int = Field(0, ge=0, le=1_000_000_000)
    train_seconds: float = Field(0.0, ge=0.0, le=1e9)
    device: str = Field("", max_length=256)
    versions: dict[str, str] = Field(default_factory=dict, max_length=16)
    plain_kernels: bool = False


Unrecorded = Literal["prompt_source", "temperature", "workload", "request_format", "seed", "output_len", "warmup"]


class Provenance(Model):
    """Where, when and with what a session was measured (the hardware itself is Session.hardware)."""

    origin: Literal["local", "imported"] = "local"
    specadvisor_version: str = ""
    imported_from: str | None = None  # bundle file name
    imported_at: datetime | None = None
    bundle_sha256: str | None = None
    entry_point: str = ""  # tui | sweep | sweep --cpu | sweep --endpoint | demo | import-bench; "unknown" before 0.2
    measured_on: Literal["this machine", "endpoint on this machine", "remote endpoint", "elsewhere", "unknown"] = "unknown"
    rules_sha256: str | None = None  # the rule base (shipped + user files) the advice came from
    prompt_source: str | None = None
    prompt_sha256: str | None = None  # of the sampled prompts as sent (text or chat messages, in order): not a file's hash
    prompt_file_sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")  # the prompt file's own bytes (a file source only)
    prompt_count: int | None = None
    started_at: datetime | None = None  # the first arm's start
    finished_at: datetime | None = None  # the sweep's end (last run, when resumed)
    resumed_at: list[datetime] = Field(default_factory=list)
    server_exposed: dict[str, str] = Field(default_factory=dict)  # endpoint mode: what /version, /server_info, /metrics told
    notes: list[str] = Field(default_factory=list)  # e.g. resumed on other hardware, prompt file changed
    trained_drafter: TrainedDrafterRef | None = None  # the session's drafter is one `specadvisor train` made
    stopped: SweepStop | None = None  # why the last run stopped measuring (None: before stops were recorded, or not run)
    # What the session's source did not record (an import-bench session: `vllm bench serve` result files
    # hold no prompt set, temperature or workload): every view says "not recorded" there, never a default.
    unrecorded: list[Unrecorded] = Field(default_factory=list)


def setting(
    default: Any,
    help: str,
    *,
    flag: str,
    unit: str = "",
    cli_scale: float = 1.0,
    counts: bool = False,
    cli_default: Any = ...,
    reads: str = "",
    label: str = "",
    form: bool | str = False,
    resumable: bool = False,
    exclusive: str = "",
    metavar: str = "",
    **bounds: Any,
) -> Any:
    """A sweep setting declared once: default, bounds (`ge`/`gt`/`le`/`lt`, enforced by the model),
    help text, unit and the command-line flag it is read from. The `sweep` command's flags, their
    parsing and range checks, the TUI form, bundle import and the README's CLI table are derived
    from these (`specadvisor.setting_specs`); a new setting is a new field here plus its behaviour.
    `cli_scale`: the flag's value is the field's times this (percent on the command line, a fraction
    here); `counts`: the flag reads counts as people type them ("1k"); `cli_default`: the flag's
    default when it differs from the model's (None: decided later, e.g. by the prompt set);
    `reads`: how the flag's text becomes the value where the field's type does not say (`command`:
    one shell line split into words, `url`, `args`: a repeated flag, `parallel`: auto or K);
    `label`: its name for people (errors, the TUI form), `form`: shown on the TUI's Setup form (a
    string: also the hint the empty field shows);
    `resumable`: `sweep --resume` may change it (this run's limit, where arms run), while the others
    are part of what the finished arms measured; `exclusive`: flags of one group exclude each other."""
    extra: dict[str, Any] = {"flag": flag, "unit": unit, "cli_scale": cli_scale, "counts": counts}
    if cli_default is not ...:
        extra["cli_default"] = cli_default
    extra.update(
        {k: v for k, v in {"reads": reads, "label": label, "form": form, "resumable": resumable, "exclusive": exclusive, "metavar": metavar}.items() if v}
    )
    return Field(default, description=help, json_schema_extra=extra, **bounds)


def internal(default: Any, why: str, **bounds: Any) -> Any:
    """A settings field no one sets: the runner's own record, stored with the session (`why` says whose)."""
    return Field(default, description=why, json_schema_extra={"internal": True}, **bounds)


MAX_INT64 = 2**63 - 1  # SQLite's INTEGER
# How prompts are sent (specadvisor.request_format): "auto" is resolved when a session is planned.
RequestFormat = Literal["auto", "chat", "completions"]
# One concurrency level (each level of `concurrency`, and the level a recommendation is for).
ConcurrencyLevel = Annotated[int, Field(ge=1, le=100_000, description="client concurrency level", json_schema_extra={"unit": "streams"})]


class SweepSettings(Model):
    """How the arms are measured: shared by every arm of a session.

    Each field is a setting declared once (`setting`) or the runner's own record (`internal`).
    Generous but finite bounds keep NaN, infinities, zero rates and integers SQLite cannot hold out
    of a session, whether it comes from the CLI, the TUI or a bundle. Temperature follows vLLM's own
    SamplingParams check, [0, 2]. Frozen: a change is a new value from `replace`, validated like the
    first (`of`), so no path can store what the declarations refuse."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True, frozen=True)

    prompt_source: str = setting(
        "humaneval", "prompt source: humaneval, sharegpt, math, rag, edit, rename, or a file", flag="--prompts", label="prompt set", metavar="SOURCE"
    )
    # How each prompt is sent (specadvisor/request_format.py): part of the workload. None: a session recorded
    # before the format was, sent as then (a row's `prompt` as raw text before its `messages`).
    request_format: RequestFormat | None = setting(
        None,
        "how each prompt is sent: chat (/v1/chat/completions, through the model's chat template), completions "
        "(/v1/completions, raw text) or auto: what `vllm bench serve` does for the same prompts (the chat template "
        "for a JSONL file, HumanEval and the project's sets; raw text for ShareGPT and random)",
        flag="--request-format",
        cli_default="auto",
        label="Request format",
        form=True,
    )
    num_prompts: int = setting(
        32, "measured requests per arm, e.g. 32 or 1k", flag="--num-prompts", unit="requests", counts=True, label="Requests", form=True, ge=1, le=1_000_000
    )
    output_len: int = setting(
        DEFAULT_OUTPUT_LEN,
        "output tokens per request, fixed (ignore_eos), e.g. 256 or 2k (default: 256; 128 for --prompts edit, 320 for rename)",
        flag="--output-len",
        unit="tokens",
        counts=True,
        cli_default=None,  # the prompt set's own (bench.prompts.default_output_len)
        label="Output tokens",
        form=True,
        ge=1,
        le=1_048_576,
    )
    temperature: float = setting(
        0.0,
        "sampling temperature of every request; acceptance drops as it rises",
        flag="--temperature",
        label="Temperature",
        form=True,
        ge=0.0,
        le=2.0,
        allow_inf_nan=False,
    )
    seed: int = setting(0, "seed of every request and of the prompt sample, so runs repeat", flag="--seed", ge=0, le=MAX_INT64)
    warmup: int = setting(2, "warmup requests per arm, excluded from results", flag="--warmup", unit="requests", ge=0, le=100_000)
    trials: int = setting(
        1,
        "measured trials per arm, each on a fresh server; trial k of every arm runs before trial k+1 of any",
        flag="--trials",
        ge=1,
        le=1_000,
    )
    concurrency: list[ConcurrencyLevel] = setting(
        [1], "client concurrency level(s), e.g. 1 or 1,8", flag="--concurrency", unit="streams", counts=True, label="Concurrency", form=True
    )
    request_rate: float | None = setting(
        None, "Poisson request rate (default: as fast as concurrency allows)", flag="--request-rate", unit="req/s", gt=0.0, le=1_000_000.0, allow_inf_nan=False
    )
    endpoint: str | None = setting(
        None, "measure a running server at URL as one arm (nothing is launched)", flag="--endpoint", reads="url", exclusive="engine", metavar="URL"
    )  # attach mode: measure a server someone else runs
    engine_cmd: list[str] = setting(
        [], "command that launches vLLM (default 'vllm serve')", flag="--engine-cmd", reads="command", exclusive="engine", metavar="CMD"
    )
    server_args: list[str] = setting(
        [], "extra vllm serve argument (repeat; e.g. --server-arg=--max-model-len=4096)", flag="--server-arg", reads="args", metavar="ARG"
    )
    max_model_len: int | None = internal(None, "a limit the prompts were fitted to (the runner reads --max-model-len from the server arguments)")
    adaptive: bool = setting(False, "measure the largest N first, predict the rest, launch only promising N", flag="--adaptive")
    slo_tpot_ms: float | None = setting(
        None, "latency target on p99 TPOT (ms)", flag="--slo-tpot-ms", unit="ms", label="p99 TPOT target", gt=0.0, le=86_400_000.0, allow_inf_nan=False
    )
    slo_ttft_ms: float | None = setting(
        None, "latency target on p99 TTFT (ms)", flag="--slo-ttft-ms", unit="ms", label="p99 TTFT target", gt=0.0, le=86_400_000.0, allow_inf_nan=False
    )
    goodput: bool = setting(
        False,
        "capacity instead of fixed concurrency: per configuration, one launch and a Poisson rate sweep "
        "that binary-searches the highest req/s whose p99 TPOT/TTFT meets --slo-tpot-ms/--slo-ttft-ms",
        flag="--goodput",
    )  # measure capacity: a rate sweep per arm against the latency target
    # scheduling (specadvisor.sweep.scheduler)
    bracket: bool = setting(
        True, "measure the baseline again at the end to measure drift", flag="--bracket"
    )  # re-measure the baseline at the end (and, in parallel, the top arms with it)
    drift_threshold: float = setting(
        0.05,
        "baseline drift (%) flagged in the output; the verdict counts drift as launch-to-launch spread",
        flag="--drift-threshold",
        unit="%",
        cli_scale=100,
        ge=0.0,
        le=10.0,
        allow_inf_nan=False,
    )  # above this baseline drift the verdict is widened or withheld
    parallel: int = internal(1, "server slots the runner used at once (1 = serial)", ge=1, le=MAX_INT64)
    parallel_choice: str = setting(
        "auto",
        "servers at once: auto = one per free GPU group (serial without GPUs); K on a CPU-only host splits the cores",
        flag="--parallel",
        reads="parallel",
        resumable=True,
        metavar="auto|K",
    )  # what was asked
    ci_target: float | None = setting(
        None,
        "stop an arm once its throughput interval is within +/-PCT% (default 3 with --adaptive, else off; 0 = off)",
        flag="--ci-target",
        unit="%",
        cli_scale=100,
        ge=0.0,
        le=1.0,
        allow_inf_nan=False,
    )  # stop an arm once its throughput interval's relative half-width is below this
    confidence: float = setting(
        0.95,
        "confidence asked of the verdict: speculate only when the whole interval is 3% or more faster",
        flag="--confidence",
        unit="%",
        cli_scale=100,
        ge=0.5,
        lt=1.0,
    )  # asked of the decision (analysis.decision)
    budget_s: float | None = setting(
        None,
        "measure until decided: while a level is undecided, add launches (and requests on them) for up to MIN more minutes of wall-clock time (default: off, the fixed design)",
        flag="--budget",
        unit="min",
        cli_scale=1 / 60,
        resumable=True,  # an undecided session measures the step its verdict names: `sweep --resume ID --budget MIN`
        ge=0.0,
        le=7 * 86_400.0,
        allow_inf_nan=False,
    )  # sequential measuring: extra measuring time allowed to reach a decision (None: fixed design)
    time_limit_s: float | None = setting(
        None,
        "stop the whole sweep after MIN minutes of wall-clock time: the arm in flight is stopped, no launch starts after it, the verdict comes from what was measured (default: none)",
        flag="--time-limit",
        unit="min",
        cli_scale=1 / 60,
        label="Time limit",
        form="none (or a hard stop for the sweep, e.g. 2 h)",
        resumable=True,
        gt=0.0,
        le=7 * 86_400.0,
        allow_inf_nan=False,
    )  # a hard limit on one run of the runner (sweep/time_limit.py); None: no limit
    looks: int = internal(1, "times the runner checked the decision (sequential measuring); recompute uses the same count", ge=1, le=MAX_INT64)

    @classmethod
    def of(cls, **values: Any) -> SweepSettings:
        """The one validated constructor of settings someone gave (a flag, a form, a plan): a value
        outside its declaration is an InputError naming the setting, not a stored surprise."""
        try:
            return cls.model_validate(values)
        except ValidationError as err:
            raise _settings_error(err) from None

    def replace(self, **changes: Any) -> SweepSettings:
        """These settings with `changes`, validated as new ones (`of`). What was given stays given
        (`model_fields_set`): a resumed sweep can tell a setting asked for from a default."""
        return self.of(**({name: getattr(self, name) for name in self.model_fields_set} | changes))

    def given(self) -> dict[str, Any]:
        """The settings someone set (the rest are defaults)."""
        return {name: getattr(self, name) for name in sorted(self.model_fields_set)}


_BOUND_WORDS = {"less_than_equal": ("at most", "le"), "less_than": ("below", "lt"), "greater_than_equal": ("at least", "ge"), "greater_than": ("above", "gt")}


def _settings_error(err: ValidationError) -> InputError:
    """A settings ValidationError as one line naming the setting as people know it (its label and flag)."""
    first = err.errors()[0]
    name = str(first["loc"][0]) if first["loc"] else ""
    info = SweepSettings.model_fields.get(name)
    extra = info.json_schema_extra if info is not None and isinstance(info.json_schema_extra, dict) else {}
    flag, label, unit = str(extra.get("flag", name)), str(extra.get("label", "")), str(extra.get("unit", ""))
    shown = f"{label} ({flag})" if label else flag
    words = _BOUND_WORDS.get(first["type"])
    ctx = first.get("ctx") or {}
    if words and words[1] in ctx:
        value = ctx[words[1]]
        number = f"{int(value):,}" if float(value).is_integer() and abs(value) < 1e15 else f"{value:g}"
        limit = f"{words[0]} {number}{' ' + unit if unit and unit not in ('%', 'min') else ''}"
        return InputError(f"{shown} must be {limit}, got {first['input']!r}", hint=f"enter a value {limit}")
    return InputError(f"{shown}: {first['msg'].lower()}, got {str(first.get('input'))[:60]!r}", hint=f"see `specadvisor sweep --help` for {flag}")


SessionStatus = Literal["planned", "running", "interrupted", "finished"]


class Session(Model):
    id: str = Field(default_factory=new_id)
    name: str = ""
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    status: SessionStatus = "planned"
    model: str = ""
    drafter: str | None = None
    workload: WorkloadKind = WorkloadKind.chat
    concurrency: ConcurrencyLevel = 1  # the level the recommendation is for: one of settings.concurrency
    hardware: HardwareProfile = Field(default_factory=HardwareProfile)
    hardware_fingerprint: str = ""
    vllm_version: str | None = None
    settings: SweepSettings = Field(default_factory=SweepSettings)
    model_profile: ModelProfile | None = None
    advice: Advice | None = None
    arms: list[Arm] = Field(default_factory=list)
    results: list[ArmResult] = Field(default_factory=list)
    samples: list[MetricsSample] = Field(default_factory=list)
    recommendation: Recommendation | None = None
    notes: str = ""
    provenance: Provenance = Field(default_factory=Provenance)

    @property
    def temperature(self) -> float:
        """The sampling temperature every arm was measured at (its one home is the settings)."""
        return self.settings.temperature

    def result_for(self, arm_id: str) -> ArmResult | None:
        """The first result of `arm_id`. Callers ask once per arm, and a scan per call made 100,000-arm
        bundles quadratic, so positions are indexed, rebuilt when `results` is replaced or changes
        length, and checked on every hit (a result replaced in place is returned as it is now)."""
        results = self.results
        key = (id(results), len(results))
        entry = _RESULT_INDEX.get(id(self))
        if entry is None or entry[0] is not self or entry[1] != key:
            positions: dict[str, int] = {}
            for position, result in enumerate(results):
                positions.setdefault(result.arm_id, position)
            entry = (self, key, positions)
            _RESULT_INDEX[id(self)] = entry
            while len(_RESULT_INDEX) > 8:  # the last few sessions only (entries hold them alive)
                _RESULT_INDEX.popitem(last=False)
        found = entry[2].get(arm_id)
        if found is None:
            return None
        if results[found].arm_id != arm_id:  # moved in place: forget the index and scan once
            _RESULT_INDEX.pop(id(self), None)
            return next((r for r in results if r.arm_id == arm_id), None)
        return results[found]


_RESULT_INDEX: OrderedDict[int, tuple[Session, tuple[int, int], dict[str, int]]] = OrderedDict()


# --------------------------------------------------------------------------- sweep events
# The runner yields these; the TUI, the headless CLI and the tests consume the same stream.


class _Event(Model):
    session_id: str = ""
    at: datetime = Field(default_factory=utcnow)


class ArmQueued(_Event):
    kind: Literal["arm_queued"] = "arm_queued"
    arm: Arm


class ServerStarting(_Event):
    kind: Literal["server_starting"] = "server_starting"
    arm_id: str
    command: list[str]


class ServerLog(_Event):
    kind: Literal["server_log"] = "server_log"
    arm_id: str
    line: str


class ServerReady(_Event):
    kind: Literal["server_ready"] = "server_ready"
    arm_id: str
    startup_s: float
    vllm_version: str | None = None


class WarmupStarted(_Event):
    kind: Literal["warmup"] = "warmup"
    arm_id: str
    requests: int


class Progress(_Event):
    kind: Literal["progress"] = "progress"
    arm_id: str
    completed: int
    total: int
    output_throughput: float | None = None
    in_flight: int | None = None  # requests sent and not yet finished (the live load check)
    concurrency: int | None = None  # the concurrency asked for this arm
    # latency so far over the arm's finished requests (live view); None before the first
    ttft_p50_ms: float | None = None
    ttft_p99_ms: float | None = None
    tpot_p50_ms: float | None = None
    tpot_p99_ms: float | None = None


class MetricsSampled(_Event):
    kind: Literal["metrics_sample"] = "metrics_sample"
    sample: MetricsSample


class GpuMemoryWait(_Event):
    """Before a launch: the arm's GPUs lack free memory; waiting (bounded) for it to be released."""

    kind: Literal["gpu_memory_wait"] = "gpu_memory_wait"
    arm_id: str
    waited_s: float
    timeout_s: float
    free_mib: dict[int, float] = Field(default_factory=dict)  # physical GPU index -> free MiB
    need_mib: float = 0
    holders: list[str] = Field(default_factory=list)  # "pid 1234 python (20480 MiB)"


class MeasurementWarning(_Event):
    kind: Literal["warning"] = "warning"
    arm_id: str | None = None
    message: str


class ArmFinished(_Event):
    kind: Literal["arm_finished"] = "arm_finished"
    result: ArmResult


class ArmFailed(_Event):
    kind: Literal["arm_failed"] = "arm_failed"
    result: ArmResult


class DownloadProgress(_Event):
    """A checkpoint fetched before the first launch (sweep.prefetch), so that a slow download is
    never mistaken for a hung server. `total_bytes` counts what was missing at the start."""

    kind: Literal["download"] = "download"
    repo_id: str
    status: Literal["downloading", "done", "skipped", "failed"] = "downloading"
    done_bytes: int = 0
    total_bytes: int | None = None
    message: str = ""


class SweepFinished(_Event):
    kind: Literal["sweep_finished"] = "sweep_finished"
    recommendation: Recommendation | None = None
    launches_used: int = 0
    launches_full_grid: int = 0


SweepEvent = Annotated[
    ArmQueued
    | ServerStarting
    | ServerLog
    | ServerReady
    | WarmupStarted
    | Progress
    | MetricsSampled
    | GpuMemoryWait
    | MeasurementWarning
    | ArmFinished
    | ArmFailed
    | DownloadProgress
    | SweepFinished,
    Field(discriminator="kind"),
]


# --------------------------------------------------------------------------- trained drafters

TrainStatus = Literal["planned", "running", "interrupted", "failed", "complete"]
TRAIN_STATUSES: tuple[str, ...] = ("planned", "running", "interrupted", "failed", "complete")


class TrainPoint(Model):
    """One optimizer step as the trainer logged it. `accuracy[k]`: the share of training positions
    where the drafted tokens 1..k+1 all equal the target's greedy tokens (Speculators' full_acc_k), the
    teacher-forced counterpart of vLLM's per-position acceptance at temperature 0."""

    step: int = Field(ge=0)
    seconds: float = Field(ge=0)  # training time since the first step, summed over resumed runs
    loss: float | None = None
    accuracy: list[float] = Field(default_factory=list)


class TrainValidation(Model):
    """The trainer's pass over the held-out rows at the end of an epoch (teacher-forced)."""

    epoch: int = Field(ge=0)
    step: int = Field(ge=0)
    loss: float | None = None
    accuracy: list[float] = Field(default_factory=list)


class TrainSettings(Model):
    """What a training run was asked for: the data it regenerates and the budget it trains for."""

    method: str = ""  # the trained method's id in the registry (rulebase.registry.trainable)
    prompt_source: str = "humaneval"
    num_prompts: int = Field(0, ge=0)  # 0: every prompt the source has
    heldout_share: float = Field(0.1, gt=0.0, lt=0.5)
    output_len: int = Field(512, ge=8, le=32_768)  # regeneration cap: responses end at EOS or here
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    request_format: Literal["chat", "completions"] = "completions"
    minutes: float | None = Field(None, gt=0.0, le=7 * 24 * 60)
    steps: int | None = Field(None, ge=1, le=10_000_000)
    draft_vocab_size: int | None = Field(None, ge=64, le=1_000_000)
    total_seq_len: int = Field(2048, ge=128, le=131_072)
    ttt_steps: int = Field(3, ge=1, le=16)
    seed: int = Field(0, ge=0)


class TrainedDrafter(Model):
    """A drafter specadvisor trained: where it is, what it was trained on and how, and how far it got.
    Sessions that measure it name its folder as their drafter; `heldout_session_id` measured it with
    vLLM on prompts of its training set that training never saw (the drift baseline)."""

    id: str = Field(default_factory=new_id)
    name: str = ""
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    status: TrainStatus = "planned"
    stage: str = ""  # the stage reached: regenerate | prepare | train | export | heldout | judge
    target: str = ""
    folder: str = ""  # the drafter folder vLLM loads (empty until training has saved one)
    work_dir: str = ""  # regenerated rows, prepared data, checkpoints, logs: what a resume continues from
    settings: TrainSettings = Field(default_factory=TrainSettings)
    prompt_sha256: str = ""  # of the prompt texts used, as the sweep's prompt hash
    train_prompts: int = 0
    heldout_prompts: int = 0
    heldout_ids: list[str] = Field(default_factory=list)  # prompt ids kept out of training
    tokens: int = 0  # regenerated tokens the loss saw (response tokens)
    steps: int = 0
    epochs: int = 0  # epochs begun
    epoch_start_step: int = 0  # the step the last epoch began at (an interrupted epoch resumes from it)
    train_seconds: float = 0.0  # optimizer time, summed over resumed runs
    wall_seconds: float = 0.0  # everything: server start, regeneration, training, export
    stopped_by: str = ""  # steps | time | interrupted | error
    plain_kernels: bool = False  # trained with the eager loss and SDPA: the compiled ones failed on this torch
    curve: list[TrainPoint] = Field(default_factory=list)
    validation: list[TrainValidation] = Field(default_factory=list)
    versions: dict[str, str] = Field(default_factory=dict)  # speculators, torch, vllm, transformers
    device: str = ""  # the GPU that trained it, or "cpu"
    hardware_fingerprint: str = ""
    heldout_session_id: str | None = None
    judge_session_ids: list[str] = Field(default_factory=list)
    error: str | None = None


class TrainEvent(Model):
    """One thing a training run did, for the live views (CLI line, TUI screen)."""

    kind: Literal["stage", "plan", "step", "val", "checkpoint", "note", "done", "error"]
    stage: str = ""
    message: str = ""
    step: int | None = None
    total_steps: int | None = None  # known for a step budget
    deadline_s: float | None = None  # seconds of training left, for a time budget
    loss: float | None = None
    accuracy: list[float] = Field(default_factory=list)
    steps_per_s: float | None = None
    eta_s: float | None = None
