"""`specadvisor advise` and `specadvisor rules check` end to end through main()."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from specadvisor.cli.main import main
from specadvisor.domain import Arm, ArmResult, ArmStatus, Session


@pytest.fixture(autouse=True)
def isolated_home(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECADVISOR_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return tmp_path / "home"


def _json(capsys, *argv) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_advise_json_has_ranked_candidates_baseline_and_commands(capsys):
    data = _json(
        capsys,
        "advise",
        "--model",
        "openai/gpt-oss-20b",
        "--gpu",
        "B200",
        "--workload",
        "code",
        "--concurrency",
        "1",
        "--vllm-version",
        "0.33.0",
        "--offline",
        "--json",
    )
    top = data["candidates"][0]
    assert top["method"] == "eagle3" and top["speculative_config"]["parallel_drafting"] is True
    for key in ("method", "drafter", "speculative_config", "n_grid", "score", "reasons", "evidence", "serve_command", "container_command"):
        assert key in top
    scores = [c["score"] for c in data["candidates"]]
    assert scores == sorted(scores, reverse=True)
    argv = shlex.split(top["serve_command"])
    assert json.loads(argv[argv.index("--speculative-config") + 1]) == top["speculative_config"]
    assert argv[argv.index("--host") + 1] == "127.0.0.1"
    assert data["baseline"]["speculative_config"] is None and "vllm serve" in data["baseline"]["serve_command"]
    assert any("PR #36684" in w for w in data["warnings"])
    assert data["verdict_level"] == "speculate"
    assert top["evidence"][0]["source"]


def test_advise_human_output_and_explain(capsys):
    assert main(["advise", "--model", "Qwen/Qwen3-8B", "--gpu", "H100", "--concurrency", "64", "--offline", "--explain"]) == 0
    out = capsys.readouterr().out
    assert "unlikely to pay" in out
    assert "Recommended: serve without speculation" in out and "vllm serve Qwen/Qwen3-8B --host 127.0.0.1" in out
    assert out.index("Recommended: serve without speculation") < out.index("Only to confirm by measurement")
    assert "+ small-target-high-concurrency:" in out


def test_a_temperature_you_pass_is_never_called_the_workloads_usual_setting(capsys):
    """Issue 39: `--temperature 0.9` was traced as "temperature 0.9 (the chat workload's usual settings)"."""
    data = _json(capsys, "advise", "--model", "Qwen/Qwen3-8B", "--gpu", "H100", "--temperature", "0.9", "--offline", "--json")
    line = next(e for e in data["explain"] if e.startswith("workload defaults"))
    assert "temperature 0.9 (as you passed it)" in line and "output 512 tokens (the chat workload's usual settings)" in line, line
    data = _json(capsys, "advise", "--model", "openai/gpt-oss-120b", "--gpu", "H100", "--output-len", "300", "--offline", "--json")
    line = next(e for e in data["explain"] if e.startswith("workload defaults"))
    assert "output 300 tokens (as you passed it)" in line and "temperature 1 (recommended by the gpt-oss-120b model card)" in line, line
    data = _json(capsys, "advise", "--model", "Qwen/Qwen3-8B", "--gpu", "H100", "--temperature", "0.9", "--output-len", "64", "--offline", "--json")
    assert not any(e.startswith("workload defaults") for e in data["explain"])


def test_the_memory_plans_assumptions_are_printed(capsys):
    """Issue 39: bytes per parameter, the KV dtype and per-rank layout, and what each arm is charged."""
    assert main(["advise", "--model", "deepseek-ai/DeepSeek-R1", "--gpu", "H200x8", "--offline"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "memory: weights: 671B parameters x 1 bytes" in out
    assert "in 16 bits (vLLM's --kv-cache-dtype auto" in out and "MLA: each of the 8 ranks keeps the whole compressed KV cache" in out
    assert "charged per arm: the baseline and lookup arms load the target only; mtp +" in out


def test_a_plan_that_does_not_fit_leads_with_it_and_prints_no_command(capsys):
    argv = ["advise", "--model", "mistralai/Mistral-Large-3-675B-Instruct-2512", "--gpu", "H100x8", "--vllm-version", "0.32.0", "--offline"]
    assert main(argv) == 0
    out = " ".join(capsys.readouterr().out.split())  # the terminal wraps long lines
    assert out.index("Does not fit on 8xH100") < out.index("#1 ") and "needs about" in out
    assert "may help" not in out and "likely to pay" not in out
    assert "vllm serve" not in out and "docker run" not in out
    assert "No serve command" in out
    data = _json(capsys, *argv, "--json")
    assert data["fits"] is False and data["baseline"]["serve_command"] is None
    assert all(c["serve_command"] is None and c["container_command"] is None for c in data["candidates"])
    # the same model in its FP8 form fits one node of H200s: commands come back
    data = _json(capsys, *argv[:3], "--gpu", "H200x8", "--vllm-version", "0.32.0", "--offline", "--json")
    assert data["fits"] is True and "vllm serve mistralai/Mistral-Large-3-675B-Instruct-2512" in data["baseline"]["serve_command"]


def test_advise_amd_renders_rocm_container_and_triton_backend(capsys):
    data = _json(capsys, "advise", "--model", "google/gemma-4-26B-A4B-it", "--gpu", "MI300Xx2", "--workload", "math", "--offline", "--json")
    dflash = next(c for c in data["candidates"] if c["id"] == "dflash")
    assert dflash["speculative_config"]["attention_backend"] == "triton_attn"
    assert "vllm/vllm-openai-rocm:" in dflash["container_command"]


def test_unknown_private_model_still_gets_lookup_advice(capsys):
    data = _json(capsys, "advise", "--model", "acme/support-bot-ft", "--gpu", "L40S", "--workload", "rag", "--offline", "--json")
    assert {c["method"] for c in data["candidates"]} == {"ngram", "ngram_gpu", "suffix"}  # ngram_gpu: CUDA from vLLM 0.18
    assert data["suggest_training"] is True
    assert any("not inspected" in w for w in data["warnings"])


def test_user_rules_folder_overrides(tmp_path, capsys):
    rules = tmp_path / "myrules"
    rules.mkdir()
    (rules / "ours.toml").write_text('[[rule]]\nid = "we-love-ngram"\nwhy = "Our traffic is all templates."\n[rule.then]\nscore = { ngram = 10 }\n')
    data = _json(capsys, "advise", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "H100", "--rules", str(rules), "--offline", "--json")
    assert data["candidates"][0]["method"] == "ngram"
    assert "Our traffic is all templates." in data["candidates"][0]["reasons"]


def test_local_sessions_from_the_store_are_cited(tmp_path, capsys):
    from specadvisor.figures import all_speedups
    from specadvisor.hardware import hypothetical
    from specadvisor.store import Store

    hw = hypothetical("L40S")
    session = Session(
        model="acme/support-bot-ft",
        hardware=hw,
        hardware_fingerprint=hw.fingerprint(),
        vllm_version="0.32.0",
        status="finished",
        arms=[
            Arm(id="baseline", label="no speculation"),
            Arm(id="suffix-n8", label="suffix N=8", method="suffix", n=8, speculative_config={"method": "suffix", "num_speculative_tokens": 8}),
        ],
        results=[ArmResult(arm_id="baseline", output_throughput=50.0), ArmResult(arm_id="suffix-n8", status=ArmStatus.ok, output_throughput=90.0)],
    )
    db = tmp_path / "store.db"
    with Store.open(db) as store:
        store.save_session(session)
    data = _json(capsys, "--db", str(db), "advise", "--model", "acme/support-bot-ft", "--gpu", "L40S", "--vllm-version", "0.32.0", "--offline", "--json")
    suffix = next(c for c in data["candidates"] if c["method"] == "suffix")
    local = [e for e in suffix["evidence"] if e["local"]]
    low, high = all_speedups(session)["suffix-n8"].ci  # the session's own interval, as its verdict shows it
    assert local and local[0]["speedup_high"] == pytest.approx(high, abs=1e-3) and not local[0]["stale"]
    assert suffix["expected_speedup"] == [1.8, 1.8] and low < 1.8 < high


def test_advise_does_not_create_a_database(isolated_home, capsys):
    _json(capsys, "advise", "--model", "Qwen/Qwen3-8B", "--gpu", "H100", "--offline", "--json")
    assert not any(isolated_home.rglob("*.db"))


@pytest.mark.parametrize(
    "argv,words",
    [
        (["--concurrency", "0"], "--concurrency must be >= 1"),
        (["--output-len", "0"], "--output-len must be >= 1"),
        (["--vllm-version", "latest-ish"], "not a vLLM version"),
        (["--gpu", "voodoo5"], "unknown GPU"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, argv, words):
    code = main(["advise", "--model", "Qwen/Qwen3-8B", "--offline", *argv])
    err = capsys.readouterr().err
    assert code == 2
    assert words in err and err.count("\n") == 1


def test_broken_rules_folder_fails_advise_with_file_and_line(tmp_path, capsys):
    rules = tmp_path / "bad"
    rules.mkdir()
    (rules / "bad.toml").write_text('[[rule]]\nid = "r"\nwhy = "w"\nevidence = ["no-such-evidence"]\n')
    assert main(["advise", "--model", "Qwen/Qwen3-8B", "--gpu", "H100", "--rules", str(rules), "--offline"]) == 2
    err = capsys.readouterr().err
    assert f"{rules / 'bad.toml'}:4:" in err and "no-such-evidence" in err


def test_rules_check_valid_and_invalid(tmp_path, capsys):
    assert main(["rules", "check"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("rules OK:") and "drafters" in out
    summary = _json(capsys, "rules", "check", "--json")
    assert summary["valid"] and summary["counts"]["rules"] >= 15
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "gpus.toml").write_text('[[gpu]]\nid = "x"\nname = "X"\nvendor = "nvidia"\nmemory_gib = "lots"\narch = "sm_90"\n')
    assert main(["rules", "check", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad / 'gpus.toml'}:5:" in err and "memory_gib" in err
    assert main(["rules", "check", str(tmp_path / "missing")]) == 2


def test_rules_show_leads_from_an_id_to_its_file_and_line(capsys):
    assert main(["rules", "show", "small-target-high-concurrency"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# rule defined at ") and "rules.toml:" in out and "heuristic-small-target" in out
    shown = _json(capsys, "rules", "show", "amd-dflash-config", "--json")
    assert shown[0]["kind"] == "evidence" and shown[0]["entry"]["date"] == "2026-08-23"
    path, line = shown[0]["defined_at"].rsplit(":", 1)
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    assert lines[int(line) - 1].strip() == "[[evidence]]"
    assert lines[int(line)].strip() == 'id = "amd-dflash-config"'
    assert main(["rules", "show", "no-such-id"]) == 2


def test_a_model_without_a_drafter_is_shown_the_train_command(capsys):
    assert main(["advise", "--model", "acme/support-bot-ft", "--gpu", "L40S", "--workload", "rag", "--offline"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "specadvisor train --model acme/support-bot-ft --prompts YOUR_TRAFFIC.jsonl --minutes 10" in out


def test_the_cli_and_the_tui_advise_with_the_same_defaults_and_say_them(capsys):
    """Issue 41: `advise` assumed temperature 0.7/0.6 and 512 output tokens (said only in --explain and
    --json), the TUI temperature 0 and 256: DFlash scored 1.60 against 1.90 for the same inputs."""
    from specadvisor.app.advice import advise as tui_advise
    from specadvisor.app.machines import hypothetical
    from specadvisor.app.models import inspect_model
    from specadvisor.domain import Workload, WorkloadKind

    assert main(["advise", "--model", "Qwen/Qwen3-8B", "--gpu", "H100x1", "--offline"]) == 0
    out = capsys.readouterr().out
    header = (
        "Advice for chat at concurrency 1: temperature 0.6 (recommended by the qwen3-8b model card), 512 output tokens (the chat workload's usual settings)"
    )
    assert header in out.splitlines()[1]
    cli = _json(capsys, "advise", "--model", "Qwen/Qwen3-8B", "--gpu", "H100x1", "--offline", "--json")
    hardware = hypothetical("H100x1")
    form = Workload(kind=WorkloadKind.chat, prompt_source="sharegpt", output_len=256, temperature=0.0)  # Setup's defaults
    tui = tui_advise(hardware, inspect_model("Qwen/Qwen3-8B"), form)
    assert f"Advice {tui.assumed}".startswith(header) and "the sweep measures at temperature 0, 256 output tokens" in tui.assumed
    assert [(c.id, round(c.score, 2)) for c in tui.candidates] == [(c["id"], round(c["score"], 2)) for c in cli["candidates"]]
    typed = tui_advise(hardware, inspect_model("Qwen/Qwen3-8B"), form.model_copy(update={"temperature": 0.9}))
    assert "temperature 0.9 (as you passed it)" in typed.assumed


def test_piped_advise_is_neither_cut_nor_wrapped(capsys):
    """Issue 41: piped, the advice's box table was cut to 80 columns (drafter names ending in …) and its lines wrapped."""
    assert main(["advise", "--model", "Qwen/Qwen3-8B", "--gpu", "H100x1", "--offline"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].endswith("tensor parallel 1")
    assert "RedHatAI/Qwen3-8B-speculator.dflash" in out and "…" not in out


def test_a_rule_whose_start_n_a_measurement_overrides_is_not_given_as_a_reason(capsys):
    """Issue 41: advise printed 'DFlash starts at 11 and its grid stops there' (rule code-moderate-n) beside
    the config of N=7 that a measurement on this model had set."""
    data = _json(capsys, "advise", "--model", "google/gemma-4-26B-A4B-it", "--workload", "code", "--gpu", "MI300X", "--offline", "--json")
    dflash = next(c for c in data["candidates"] if c["id"] == "dflash")
    assert dflash["speculative_config"]["num_speculative_tokens"] == 7
    assert not any("DFlash starts at 11" in r for r in dflash["reasons"])
    assert "Rule code-moderate-n's start N gives way to the measured peak below." in dflash["reasons"]


def test_a_gpu_alias_from_rules_dir_is_found(tmp_path, capsys):
    """Issue 41: `advise --rules DIR --gpu ALIAS` said 'unknown GPU' for a GPU DIR defines."""
    (tmp_path / "gpus.toml").write_text(
        '[[gpu]]\nid = "lab-h200"\nname = "Lab H200 box"\nnames = ["labgpu"]\nvendor = "nvidia"\nmemory_gib = 141\n'
        'arch = "sm_90"\ncompute_capability = "9.0"\nfp8 = true\n',
        encoding="utf-8",
    )
    argv = ["advise", "--model", "Qwen/Qwen3-8B", "--gpu", "labgpux2", "--offline"]
    assert main(argv) == 2 and "unknown GPU 'labgpu'" in capsys.readouterr().err  # not in the shipped catalog
    assert main([*argv, "--rules", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("Qwen/Qwen3-8B on 2x Lab H200 box (planned)")
