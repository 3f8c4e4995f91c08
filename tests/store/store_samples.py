"""A realistic, fully populated Session for store and bundle tests (every nested part filled)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from specadvisor.domain import (
    Advice,
    Arm,
    ArmResult,
    ArmStatus,
    Candidate,
    CpuInfo,
    EngineInfo,
    EvidenceRef,
    GpuInfo,
    HardwareProfile,
    LatencyStats,
    MetricsSample,
    ModelProfile,
    MtpInfo,
    PositionStats,
    ProbeNote,
    Recommendation,
    Session,
    SweepSettings,
    WorkloadKind,
)

T0 = datetime(2026, 11, 2, 9, 30, 15, 123456, tzinfo=UTC)


def h200_hardware(count: int = 1) -> HardwareProfile:
    return HardwareProfile(
        gpus=[GpuInfo(index=i, vendor="nvidia", name="NVIDIA H200", memory_total_mib=143771, compute_capability="9.0", source="nvml") for i in range(count)],
        cpu=CpuInfo(model="AMD EPYC 9654", cores_physical=96, cores_logical=192, ram_total_gib=1511.2),
        os="Linux 6.8",
        python="3.11.9",
        engine=EngineInfo(found=True, version="0.32.0", distribution="vllm", platform="cuda", methods=["ngram", "eagle3", "mtp"]),
        notes=[ProbeNote(probe="nvml", ok=True, detail="1 GPU")],
    )


def _arm(n: int | None, concurrency: int = 1) -> Arm:
    if n is None:
        return Arm(id=f"baseline-c{concurrency}", label=f"no speculation c{concurrency}", concurrency=concurrency)
    return Arm(
        id=f"ngram-n{n}-c{concurrency}",
        label=f"ngram N={n} c{concurrency}",
        method="ngram",
        n=n,
        speculative_config={"method": "ngram", "num_speculative_tokens": n, "prompt_lookup_max": 4},
        concurrency=concurrency,
        server_args=["--max-model-len", "4096"],
    )


def _result(arm: Arm, throughput: float, offset_min: int) -> ArmResult:
    spec = not arm.is_baseline
    positions = [
        PositionStats(position=i, accepted=900 - 200 * i, drafts=1000, rate=(900 - 200 * i) / 1000, ci_low=0.1, ci_high=0.95) for i in range(arm.n or 0)
    ]
    return ArmResult(
        arm_id=arm.id,
        status=ArmStatus.ok,
        started_at=T0 + timedelta(minutes=offset_min),
        finished_at=T0 + timedelta(minutes=offset_min + 3),
        vllm_version="0.32.0",
        completed=32,
        duration_s=41.25,
        output_tokens=8192,
        input_tokens=4100,
        output_throughput=throughput,
        output_throughput_ci=(throughput * 0.97, throughput * 1.03),
        request_throughput=0.77,
        trials=[throughput - 1.5, throughput + 1.5],
        ttft_ms=LatencyStats(mean=35.5, median=33.0, p90=50.1, p99=80.2, std=4.4),
        tpot_ms=LatencyStats(mean=7.1, median=7.0, p90=8.0, p99=9.5),
        num_drafts=1000 if spec else None,
        num_draft_tokens=1000 * (arm.n or 0) if spec else None,
        num_accepted_tokens=sum(p.accepted for p in positions) if spec else None,
        mean_acceptance_length=1 + sum(p.accepted for p in positions) / 1000 if spec else None,
        acceptance_rate=sum(p.rate for p in positions) / len(positions) if positions else None,
        per_position=positions,
        warnings=["first trial discarded"] if spec else [],
        log_path="/home/alice/.local/share/specadvisor/logs/arm.log",
    )


def make_session(**overrides) -> Session:
    """Baseline plus ngram N=2 and N=4 at concurrency 1, measured, with samples and a recommendation."""
    arms = [_arm(None), _arm(2), _arm(4)]
    throughputs = [100.0, 151.25, 172.5]
    hardware = overrides.pop("hardware", h200_hardware())
    session = Session(
        name="ngram on code",
        created_at=T0,
        updated_at=T0 + timedelta(minutes=10),
        status="finished",
        model="Qwen/Qwen3-8B",
        drafter=None,
        workload=WorkloadKind.code,
        concurrency=1,
        hardware=hardware,
        hardware_fingerprint=hardware.fingerprint(),
        vllm_version="0.32.0",
        settings=SweepSettings(prompt_source="humaneval", num_prompts=32, output_len=256, engine_cmd=["/opt/vllm/bin/python"]),
        model_profile=ModelProfile(id="Qwen/Qwen3-8B", source="hf-cache", params_b=8.2, mtp=MtpInfo(present=False)),
        advice=Advice(
            candidates=[
                Candidate(
                    id="ngram",
                    method="ngram",
                    speculative_config={"method": "ngram", "num_speculative_tokens": 2},
                    n_grid=[2, 4],
                    score=0.8,
                    reasons=["code reuses the prompt"],
                    evidence=[EvidenceRef(id="e1", summary="ngram on code", source="vLLM blog", speedup_low=1.2, speedup_high=1.8)],
                    expected_speedup=(1.2, 1.8),
                )
            ],
            verdict="speculate",
            fired_rules=["code-ngram"],
        ),
        arms=arms,
        results=[_result(a, t, 4 * i) for i, (a, t) in enumerate(zip(arms, throughputs, strict=True))],
        samples=[
            MetricsSample(arm_id=arms[2].id, t=float(t), generation_tokens=100.0 * t, num_drafts=30.0 * t, accepted_per_position=[27.0 * t, 21.0 * t])
            for t in range(1, 4)
        ],
        recommendation=Recommendation(
            arm_id=arms[2].id,
            speculative_config=arms[2].speculative_config,
            speedup=1.725,
            speedup_ci=(1.66, 1.79),
            reasons=["fastest arm", "acceptance stable"],
            serve_command='vllm serve Qwen/Qwen3-8B --speculative-config \'{"method": "ngram"}\'',
        ),
        notes="measured on the lab box",
    )
    return session.model_copy(update=overrides)
