"""Fixed profiles and a scripted runner for the TUI tests: fakes only at the process boundary.

Probing hardware, inspecting a model and running vLLM are replaced; the plan, the predictor, the
recommendation, the snippet renderer and the SQLite store are the real ones.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

from specadvisor.domain import (
    Advice,
    ArmFinished,
    ArmQueued,
    ArmResult,
    ArmStatus,
    Candidate,
    CpuInfo,
    DrafterRef,
    EngineInfo,
    EvidenceRef,
    HardwareProfile,
    LatencyStats,
    MeasurementWarning,
    MetricsSample,
    MetricsSampled,
    ModelProfile,
    PositionStats,
    Progress,
    ServerLog,
    ServerReady,
    ServerStarting,
    Session,
    SweepFinished,
    WarmupStarted,
    Workload,
)
from specadvisor.errors import EngineError, InputError
from specadvisor.tui.services import Services, default_services

FIXED_TIME = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)

HARDWARE = HardwareProfile(
    cpu=CpuInfo(model="Test CPU @ 2.0GHz", cores_physical=2, cores_logical=2, ram_total_gib=24.0),
    os="Linux",
    python="3.11",
    engine=EngineInfo(
        found=True,
        version="0.32.0",
        distribution="vllm",
        platform="cpu",
        methods=["ngram", "suffix", "draft_model"],
    ),
)

MODEL = ModelProfile(
    id="HuggingFaceTB/SmolLM2-135M-Instruct",
    source="local",
    architecture="LlamaForCausalLM",
    model_type="llama",
    params_b=0.135,
    num_hidden_layers=30,
    vocab_size=49152,
    drafters=[DrafterRef(drafter="local/smollm2-8layer", method="draft_model", source="local")],
)

ADVICE = Advice(
    verdict="Speculate: n-gram lookup should pay on code prompts at concurrency 1.",
    candidates=[
        Candidate(
            id="ngram",
            method="ngram",
            speculative_config={"method": "ngram", "num_speculative_tokens": 2, "prompt_lookup_min": 2, "prompt_lookup_max": 4},
            n_grid=[2, 4],
            score=0.82,
            reasons=["code prompts repeat identifiers: prompt lookup finds drafts", "no drafter to load: cheap on CPU"],
            evidence=[EvidenceRef(id="ngram-code", summary="1.3-1.9x on HumanEval at c=1", source="vLLM blog", speedup_low=1.3, speedup_high=1.9)],
            expected_speedup=(1.3, 1.9),
        ),
        Candidate(
            id="suffix",
            method="suffix",
            speculative_config={"method": "suffix", "num_speculative_tokens": 8},
            n_grid=[8],
            score=0.55,
            reasons=["suffix trees reuse earlier outputs"],
            expected_speedup=(1.1, 1.6),
            warnings=["needs arctic-inference in the engine's environment"],
        ),
    ],
    warnings=["CPU engine: absolute numbers are ~100x below a GPU"],
    vllm_version="0.32.0",
)

WORKLOAD = Workload(kind="code", prompt_source="humaneval", num_prompts=8, output_len=64)

# Deterministic figures per arm id of the plan made from ADVICE.
THROUGHPUT = {"baseline": 10.0, "ngram-n2": 13.1, "ngram-n4": 15.4, "suffix-n8": 12.2}
RATES = {"ngram-n2": [0.85, 0.66], "ngram-n4": [0.92, 0.77, 0.62, 0.31], "suffix-n8": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2]}


def arm_result(arm_id: str, requests: int) -> ArmResult:
    tps = THROUGHPUT.get(arm_id, 11.0)
    rates = RATES.get(arm_id, [])
    drafts = 100
    per_position = [PositionStats(position=i, accepted=round(r * drafts), drafts=drafts, rate=r) for i, r in enumerate(rates)]
    accepted = sum(p.accepted for p in per_position)
    spec = bool(rates)
    return ArmResult(
        arm_id=arm_id,
        status=ArmStatus.ok,
        started_at=FIXED_TIME,
        finished_at=FIXED_TIME,
        vllm_version="0.32.0",
        completed=requests,
        duration_s=requests * 64 / tps,
        output_tokens=requests * 64,
        output_throughput=tps,
        output_throughput_ci=(tps * 0.96, tps * 1.04),
        ttft_ms=LatencyStats(median=120.0, p99=180.0),
        tpot_ms=LatencyStats(median=1000.0 / tps, p99=1300.0 / tps),
        num_drafts=drafts if spec else None,
        num_draft_tokens=drafts * len(rates) if spec else None,
        num_accepted_tokens=accepted if spec else None,
        mean_acceptance_length=1 + accepted / drafts if spec else None,
        acceptance_rate=accepted / (drafts * len(rates)) if spec else None,
        per_position=per_position,
    )


class FakeRunner:
    """Plays the event stream a real sweep produces and writes results to the real store as it goes."""

    def __init__(
        self,
        session: Session,
        store,
        *,
        delay: float = 0.0,
        requests: int = 8,
        fail_arm: str | None = None,
        hold: asyncio.Event | None = None,
        hold_arm: str | None = None,
    ):
        self.session, self.store = session, store
        self.delay, self.requests, self.fail_arm, self.hold, self.hold_arm = delay, requests, fail_arm, hold, hold_arm
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True

    async def events(self):
        session, sid = self.session, self.session.id
        self.store.save_session(session)
        self.store.set_status(sid, "running")
        for arm in session.arms:
            yield ArmQueued(session_id=sid, arm=arm)
        stored = {r.arm_id for r in session.results}  # like the real runner: a resumed sweep skips finished arms
        for arm in [a for a in session.arms if a.id not in stored]:
            yield ServerStarting(session_id=sid, arm_id=arm.id, command=["vllm", "serve", session.model, "--port", "8000"])
            yield ServerLog(session_id=sid, arm_id=arm.id, line="INFO Starting vLLM API server on http://127.0.0.1:8000")
            if arm.id == self.fail_arm:
                raise EngineError(f"vLLM exited while starting arm {arm.id}", hint="read the server log (l)")
            yield ServerReady(session_id=sid, arm_id=arm.id, startup_s=61.0, vllm_version="0.32.0")
            yield WarmupStarted(session_id=sid, arm_id=arm.id, requests=2)
            rates = RATES.get(arm.id, [])
            for done in range(1, self.requests + 1):
                if self.cancelled:
                    return
                if self.hold is not None and done == self.requests // 2 and self.hold_arm in (None, arm.id):
                    await self.hold.wait()
                tps = THROUGHPUT.get(arm.id, 11.0)
                yield Progress(
                    session_id=sid,
                    arm_id=arm.id,
                    completed=done,
                    total=self.requests,
                    output_throughput=tps * (0.8 + 0.2 * done / self.requests),
                    ttft_p50_ms=120.0,
                    ttft_p99_ms=180.0,
                    tpot_p50_ms=1000.0 / tps,
                    tpot_p99_ms=1300.0 / tps,
                )
                if rates:
                    drafts = 10.0 * done
                    sample = MetricsSample(
                        arm_id=arm.id,
                        t=float(done),
                        num_drafts=drafts,
                        num_draft_tokens=drafts * len(rates),
                        num_accepted_tokens=sum(r * drafts for r in rates),
                        accepted_per_position=[r * drafts for r in rates],
                    )
                    yield MetricsSampled(session_id=sid, sample=sample)
                await asyncio.sleep(self.delay)
            if arm.id == "ngram-n4":
                yield MeasurementWarning(session_id=sid, arm_id=arm.id, message="2 of 8 outputs were clamped by max_model_len")
            result = arm_result(arm.id, self.requests)
            self.store.save_arm_result(sid, result)
            yield ArmFinished(session_id=sid, result=result)
        from specadvisor.analysis.recommend import recommend

        rec = recommend(self.store.get_session(sid))
        self.store.set_recommendation(sid, rec)
        self.store.set_status(sid, "finished")
        yield SweepFinished(session_id=sid, recommendation=rec, launches_used=len(session.arms), launches_full_grid=len(session.arms))


class Calls:
    """What the fakes were asked to do, for assertions."""

    def __init__(self) -> None:
        self.stop_servers = 0
        self.runners: list[FakeRunner] = []
        self.inspected: list[str] = []


def fake_services(db_path: Path, calls: Calls | None = None, **runner_kwargs) -> Services:
    calls = calls or Calls()
    services = default_services(db_path)

    def inspect_model(ref: str) -> ModelProfile:
        calls.inspected.append(ref)
        if ref.startswith("missing/"):
            raise InputError(f"model {ref} not found locally, in the HF cache or the catalog", hint="check the id or pass a local folder")
        return MODEL.model_copy(update={"id": ref})

    def make_runner(session: Session, store) -> FakeRunner:
        runner = FakeRunner(session, store, **runner_kwargs)
        calls.runners.append(runner)
        return runner

    def stop_servers() -> None:
        calls.stop_servers += 1

    services.detect = lambda: HARDWARE
    services.inspect_model = inspect_model
    services.advise = lambda hw, model, workload: ADVICE
    services.make_runner = make_runner
    services.stop_servers = stop_servers
    return services


def finished_session(store, name: str = "smollm2-code", model: str = MODEL.id, created: datetime = FIXED_TIME, session_id: str | None = None) -> Session:
    """A finished session saved in the real store (plan from the real planner); a fixed id where a
    screen shows ids (snapshots)."""
    from specadvisor.analysis.recommend import recommend
    from specadvisor.domain import SweepSettings
    from specadvisor.sweep.plan import plan_from_advice

    plan = plan_from_advice(ADVICE, model=model, settings=SweepSettings(num_prompts=8, output_len=64))
    session = plan.session
    session.name, session.created_at, session.updated_at = name, created, created
    if session_id is not None:
        session.id = session_id
    session.hardware = HARDWARE
    session.workload = WORKLOAD.kind
    session.vllm_version = "0.32.0"
    session.results = [arm_result(a.id, 8) for a in session.arms]
    session.recommendation = recommend(session)
    session.status = "finished"
    store.save_session(session)
    return session


def held_runner(before: list, after: list | None = None):
    """A runner that queues every arm, sends `before`, then holds (an arm mid-run) until the sweep is
    cancelled, then sends `after`. Returns the runner class and the event that `cancel` sets."""
    import asyncio

    from specadvisor.domain import ArmQueued

    release = asyncio.Event()

    class HeldRunner:
        def __init__(self, session, store):
            self.session = session

        def cancel(self) -> None:
            release.set()

        async def events(self):
            for arm in self.session.arms:
                yield ArmQueued(arm=arm)
            for event in before:
                yield event
            await release.wait()
            for event in after or []:
                yield event

    return HeldRunner, release


def starting_server(*log_lines: str):
    """A runner whose baseline server is starting (its log lines sent) and stays so until the sweep is
    cancelled: what the Running panel shows during a start-up. Returns the runner class and the event
    that `cancel` sets."""
    from specadvisor.domain import ServerLog, ServerStarting

    return held_runner([ServerStarting(arm_id="baseline", command=["vllm", "serve"]), *(ServerLog(arm_id="baseline", line=line) for line in log_lines)])


async def seconds_into_startup(app, pilot, seconds: float):
    """Start the sweep (Ctrl+S on Advice) and move the sweep's clock `seconds` past the baseline
    server's start: what the top bar and the Running panel say that far into a start-up."""
    await pilot.press("ctrl+s")
    await pilot.pause(0.3)
    state = app.state.sweep_state
    state.clock = lambda: state.arms["baseline"].started_at + seconds
    await pilot.pause(0.3)
    return state
