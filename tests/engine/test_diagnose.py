"""The diagnoser against real failure logs captured from vLLM 0.32.0's CPU build (tests/fixtures/engine)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specadvisor.engine import diagnose
from specadvisor.engine.diagnose import first_exception

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "engine"
RETURNCODES = json.loads((FIXTURES / "cases.json").read_text())["returncodes"]


def real_log(name: str) -> list[str]:
    return (FIXTURES / f"{name}.log").read_text().splitlines()


@pytest.mark.parametrize(
    ("case", "kind", "in_cause"),
    [
        ("unknown_key", "invalid_config", "bogus_key: Unexpected keyword argument"),
        ("bad_method", "invalid_config", "method: Input should be 'ngram'"),
        ("invalid_json", "invalid_json", "not valid JSON"),
        ("missing_model", "model_not_found", "/nonexistent/models/NoSuchModel"),
        ("missing_drafter", "model_not_found", "/nonexistent/drafters/NoSuchDrafter"),
        ("mtp_unsupported", "unsupported_method", "'mtp'"),
        ("suffix_no_arctic", "missing_arctic_inference", "arctic-inference"),
        ("vocab_mismatch", "vocab_mismatch", "Draft model vocab_size=32000"),
        ("kv_cache_too_small", "max_model_len_too_large", "larger than the available KV cache memory"),
        ("port_in_use", "port_in_use", "already in use"),
        # issue 11: --engine-cmd on the CPU build without VLLM_CPU_KVCACHE_SPACE (captured 2026-12-01)
        ("cpu_memory", "cpu_memory", "CPU backend wants 0.92 of node 0's memory (15.26 GiB) but only 14.79 of 16.59 GiB are free"),
        # a KV cache no machine has (VLLM_CPU_KVCACHE_SPACE=1048576 GiB; captured 2026-12-01, the e2e test's failure)
        ("cpu_kv_space", "cpu_kv_cache_space", "the KV cache asks for 1048576.0 GiB"),
        # a GPU-only method (ngram_gpu) on the CPU build: the worker needs CUDA's pinned memory
        ("ngram_gpu_on_cpu", "platform_unsupported", "pin_memory=True requires a CUDA or other accelerator backend"),
        # EAGLE-3 given a plain Llama checkpoint as its drafter: its weights fit no EAGLE-3 head
        ("eagle3_plain_drafter", "drafter_architecture", "There is no module or parameter named 'model' in LlamaModel"),
    ],
)
def test_real_failure_logs_are_diagnosed(case, kind, in_cause):
    result = diagnose(real_log(case), RETURNCODES[case])
    assert result.kind == kind
    assert in_cause in result.cause
    assert result.hint
    log_text = "\n".join(real_log(case))
    assert result.excerpt
    assert all(line[:100] in log_text for line in result.excerpt.splitlines())


def test_a_warning_that_vllm_carries_on_from_is_not_the_cause():
    """Real capture (H200, vLLM 0.26.0, 2026-12-01): two servers started together on one GPU. The
    log warns "Model Runner V2 does not yet support ngram ...; using the V1 model runner instead"
    (vLLM carries on) long before the real failure: the KV cache got no memory."""
    lines = real_log("h200_shared_gpu_kv_cache")
    assert any("WARNING" in line and "Model Runner V2 does not yet support" in line for line in lines)
    result = diagnose(lines, 1)
    assert result.kind == "oom_kv_cache"
    assert "No available memory for the cache blocks" in result.cause
    assert "same GPU" in result.hint


def test_the_cpu_memory_failure_names_its_fix_not_the_worker_wrapper():
    result = diagnose(real_log("cpu_memory"), RETURNCODES["cpu_memory"])
    assert "VLLM_CPU_KVCACHE_SPACE" in result.hint and "--gpu-memory-utilization" in result.hint
    assert "WorkerProc" not in result.cause and "Available memory on node 0" in result.excerpt


def test_cause_is_one_short_line():
    for case in RETURNCODES:
        result = diagnose(real_log(case), RETURNCODES[case])
        assert "\n" not in result.cause and len(result.cause) <= 300, case


def test_invalid_json_exits_2_in_the_real_log():
    assert RETURNCODES["invalid_json"] == 2


def test_real_startup_timeout_is_named_a_timeout():
    """A real CPU server stopped by a 12 s ready timeout while still starting (log captured 2026-12-01)."""
    result = diagnose(real_log("startup_timeout"), None, timed_out=True)
    assert result.kind == "timeout" and "ready timeout" in result.hint
    assert "not ready after 12 s" in result.excerpt


def test_timeout_without_a_recognised_error():
    lines = ["(APIServer pid=1) INFO Loading weights", "(APIServer pid=1) INFO still loading"]
    result = diagnose(lines, None, timed_out=True)
    assert result.kind == "timeout"
    assert "ready before the timeout" in result.cause
    assert "still loading" in result.excerpt


def test_engine_core_failure_names_the_root_exception():
    lines = [
        "(EngineCore pid=7) ERROR worker failed",
        "Traceback (most recent call last):",
        '  File "x.py", line 1, in <module>',
        "AssertionError: attention backend FOO needs head_dim 128",
        "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}",
    ]
    result = diagnose(lines, 1)
    assert result.kind == "engine_init_failed"
    assert "attention backend FOO needs head_dim 128" in result.cause
    assert "Engine core" not in result.cause.split(":", 1)[1]


def test_killed_by_signal_without_log_suggests_host_memory():
    result = diagnose([], -9)
    assert result.kind == "exited"
    assert "SIGKILL" in result.cause
    assert "memory" in result.hint


def test_unknown_crash_quotes_the_last_exception():
    result = diagnose(["starting", "KeyError: 'rope_scaling'"], 1)
    assert result.kind == "crashed"
    assert "KeyError" not in result.cause and "'rope_scaling'" in result.cause
    assert "exit code 1" in result.cause


def test_cuda_oom_line():
    line = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB"
    result = diagnose(["loading", line, "RuntimeError: Engine core initialization failed. See root cause above."], 1)
    assert result.kind == "out_of_memory"
    assert "Tried to allocate 2.00 GiB" in result.cause


def test_folder_without_weights_is_model_not_found():
    """Seen in a real sweep when the model folder was being rewritten while vLLM started."""
    lines = [
        "(EngineCore pid=4242) ERROR Traceback (most recent call last):",
        "(EngineCore pid=4242) ERROR RuntimeError: Cannot find any model weights with `/models/SmolLM2-135M-Instruct`",
        "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}",
    ]
    d = diagnose(lines, 1)
    assert d.kind == "model_not_found" and "check the model" in d.hint


ISSUES = FIXTURES / "issues"


@pytest.mark.parametrize(
    ("case", "kind", "in_cause", "in_hint"),
    [
        ("cuda_oom_weights", "oom_weights", "while loading the weights", "--tensor-parallel-size"),
        ("cuda_oom_kv_cache", "oom_kv_cache", "No available memory for the cache blocks", "--max-model-len"),
        ("cuda_oom_cuda_graph", "oom_cuda_graph", "while capturing CUDA graphs", "--enforce-eager"),
        ("nccl_tp", "nccl", "NCCL error: unhandled cuda error", "NCCL_DEBUG=INFO"),
        ("gated_repo", "gated_model", "meta-llama/Meta-Llama-3-8B-Instruct", "HF_TOKEN"),
        ("drafter_architecture", "drafter_architecture", "EagleQwen2ForCausalLM", "drafter"),
        ("eagle3_target_type", "drafter_architecture", "Eagle3 is only supported for", "drafter"),
        ("method_unsupported_runner", "platform_unsupported", "does not yet support: ngram", "platform supports"),
        ("draft_model_unsupported", "platform_unsupported", "draft model is not supported yet", "platform supports"),
        ("max_model_len_kv", "max_model_len_too_large", "max_model_len 4096 does not fit the KV cache (room for 3664 tokens)", "--max-model-len"),
        ("torch_compile", "compile_failed", "BackendCompilerFailed", "--enforce-eager"),
        ("missing_repo_404", "model_not_found", "gemma-2-2b-gkd", "hub id"),
        ("missing_repo_401", "model_not_found", "Qwen", "HF_TOKEN"),
    ],
)
def test_failures_from_public_vllm_issues_are_named_by_cause(case, kind, in_cause, in_hint):
    path = ISSUES / f"{case}.log"
    text = path.read_text()
    assert text.startswith("# source") and "https://github.com/" in text.splitlines()[0] + text.splitlines()[1]
    log = [line for line in text.splitlines() if not line.startswith("# ")]  # the header is metadata, not log
    result = diagnose(log, 1)
    assert result.kind == kind, result
    assert in_cause in result.cause and in_hint in result.hint
    assert "Engine core initialization failed" not in result.cause


def test_every_issue_fixture_is_covered_by_a_test():
    tested = {
        "cuda_oom_weights",
        "cuda_oom_kv_cache",
        "cuda_oom_cuda_graph",
        "nccl_tp",
        "gated_repo",
        "drafter_architecture",
        "eagle3_target_type",
        "method_unsupported_runner",
        "draft_model_unsupported",
        "max_model_len_kv",
        "torch_compile",
        "missing_repo_404",
        "missing_repo_401",
    }
    assert {p.stem for p in ISSUES.glob("*.log")} == tested


def test_the_first_cause_wins_over_the_wrappers_and_later_noise():
    """A worker's error, then the wrappers that report it, then a thousand lines of shutdown noise."""
    lines = real_log("kv_cache_too_small")
    noisy = (
        lines
        + ["WARNING shutting down, cleaning up"] * 1000
        + [
            "RuntimeError: Worker failed with error 'boom', please check the stack trace above for the root cause",
            "Exception: WorkerProc initialization failed due to an exception in a background process. See stack trace for root cause.",
        ]
    )
    result = diagnose(noisy, 1)
    assert result.kind == "max_model_len_too_large"


@pytest.mark.parametrize(
    ("case", "quoted"),
    [
        ("suffix_no_arctic", "ImportError: Arctic Inference is required for suffix decoding."),
        ("mtp_unsupported", "NotImplementedError: Unsupported speculative method: 'mtp'"),
        ("unknown_key", "ValidationError: 1 validation error for SpeculativeConfig | bogus_key | Unexpected keyword argument"),
        ("eagle3_plain_drafter", "ValueError: There is no module or parameter named 'model' in LlamaModel"),
    ],
)
def test_first_exception_quotes_vllms_own_words_not_a_wrapper(case, quoted):
    """The launch table quotes vLLM's exception as it was raised (the diagnosis may paraphrase it)."""
    text = first_exception(real_log(case))
    assert text is not None and quoted in text
    assert "initialization failed" not in text and not text.startswith("(")


def test_first_exception_is_none_without_one():
    assert first_exception(["INFO all fine", "WARNING something"]) is None
