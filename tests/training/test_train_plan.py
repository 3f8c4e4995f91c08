"""Every refusal of a training run comes before a process starts, in one line with its fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specadvisor.app.train import TrainRequest, _check_release, _placement, _prompts, aux_layers, default_draft_vocab, plan_training, split_heldout
from specadvisor.bench.prompts import Prompt
from specadvisor.domain import GpuInfo, HardwareProfile, ModelProfile, TrainSettings
from specadvisor.errors import EngineError, InputError
from specadvisor.store import Store

SMOL = ModelProfile(id="smol", architecture="LlamaForCausalLM", model_type="llama", num_hidden_layers=30, vocab_size=49152, params_b=0.135)


def test_no_budget_or_two_budgets_are_refused(tmp_path: Path) -> None:
    with Store.open(tmp_path / "x.db") as store:
        with pytest.raises(InputError, match="no training budget"):
            plan_training(TrainRequest(model="m"), store, progress=print)
        with pytest.raises(InputError, match="both --minutes and --steps"):
            plan_training(TrainRequest(model="m", minutes=1, steps=5), store, progress=print)


def test_no_gpu_says_what_training_needs_and_offers_the_cpu_engine(tmp_path: Path) -> None:
    with Store.open(tmp_path / "x.db") as store, pytest.raises(EngineError, match="no GPU here") as err:
        plan_training(TrainRequest(model="m", minutes=5), store, progress=print, hardware=HardwareProfile())
    assert "--cpu" in (err.value.hint or "")


def test_a_prompt_file_too_small_to_train_on(tmp_path: Path) -> None:
    small = tmp_path / "few.jsonl"
    small.write_text("\n".join(json.dumps({"prompt": f"p{i}"}) for i in range(5)) + "\n")
    with pytest.raises(InputError, match="5 distinct prompts: too few to train on"):
        _prompts(TrainRequest(prompts=str(small)))


def test_duplicate_prompts_count_once(tmp_path: Path) -> None:
    dup = tmp_path / "dup.jsonl"
    dup.write_text("\n".join(json.dumps({"prompt": "same"}) for _ in range(40)) + "\n")
    with pytest.raises(InputError, match="1 distinct prompts"):
        _prompts(TrainRequest(prompts=str(dup)))


def test_the_heldout_share_is_seeded_and_never_trained_on() -> None:
    prompts = [Prompt(text=str(i), id=str(i)) for i in range(50)]
    train, heldout = split_heldout(prompts, 0.1, seed=3)
    assert len(heldout) == 5 and not {p.id for p in train} & {p.id for p in heldout}
    assert split_heldout(prompts, 0.1, seed=3)[1] == heldout
    assert len(split_heldout(prompts[:16], 0.01, seed=0)[1]) == 2


def test_a_release_without_hidden_state_extraction_is_refused_with_the_first_that_has_it() -> None:
    with pytest.raises(EngineError, match="cannot extract hidden states") as err:
        _check_release(SMOL, "0.16.0", "cuda")
    assert "0.17.0" in (err.value.hint or "")
    _check_release(SMOL, "0.26.0", "cuda")  # the H200 kit's release serves it
    _check_release(SMOL, "0.32.0", "cpu")  # and the CPU engine's


def test_an_architecture_the_release_cannot_load_is_refused() -> None:
    with pytest.raises(EngineError, match="cannot load"):
        _check_release(ModelProfile(id="x", architecture="NoSuchModelForCausalLM", num_hidden_layers=8), "0.26.0", "cuda")


def test_a_target_that_cannot_host_eagle3_in_that_release() -> None:
    gemma3 = ModelProfile(id="google/gemma-3-27b-it", architecture="Gemma3ForConditionalGeneration", model_type="gemma3_text", num_hidden_layers=62)
    with pytest.raises(EngineError, match="EAGLE-3 drafter for Gemma3ForConditionalGeneration cannot be served"):
        _check_release(gemma3, "0.20.0", "cuda")


def test_layers_and_vocabulary_defaults() -> None:
    assert aux_layers(30) == [2, 15, 27]
    with pytest.raises(InputError, match="too few"):
        aux_layers(4)
    assert (
        default_draft_vocab(49152) == 12288
        and default_draft_vocab(128256) == 31744
        and default_draft_vocab(262144) == 32000
        and default_draft_vocab(None) is None
    )


def test_no_gpu_memory_for_server_plus_trainer() -> None:
    big = ModelProfile(id="big", architecture="LlamaForCausalLM", num_hidden_layers=80, vocab_size=128256, params_b=70)
    small_gpu = HardwareProfile(gpus=[GpuInfo(index=0, name="tiny", vendor="nvidia", memory_total_mib=16 * 1024)])
    with pytest.raises(EngineError, match="no GPU memory for server plus trainer"):
        _placement(small_gpu, big, TrainSettings(draft_vocab_size=32000, total_seq_len=8192), False, [])
    two = HardwareProfile(gpus=[GpuInfo(index=i, name="H200", vendor="nvidia", memory_total_mib=143771) for i in range(2)])
    assert _placement(two, big, TrainSettings(draft_vocab_size=32000), False, [])[:2] == ("0", "1")
    one = HardwareProfile(gpus=[GpuInfo(index=0, name="H200", vendor="nvidia", memory_total_mib=143771)])
    server, trainer, notes = _placement(one, SMOL, TrainSettings(draft_vocab_size=4096), False, [])
    assert (server, trainer) == (None, None) and "share GPU 0" in notes[0]


def test_judging_on_the_training_prompts_is_said_to_be_optimistic() -> None:
    from specadvisor.app.train import trained_on
    from specadvisor.bench.prompts import prompt_pool
    from specadvisor.domain import SweepSettings, TrainedDrafter

    ids = [p.id for p in prompt_pool("humaneval").prompts]
    drafter = TrainedDrafter(settings=TrainSettings(method="eagle3", prompt_source="humaneval"), heldout_ids=ids[:150])
    settings = SweepSettings(prompt_source="humaneval", num_prompts=164)
    assert trained_on(drafter, settings) == 14  # every prompt sampled, 150 of them held out
    assert trained_on(drafter, SweepSettings(prompt_source="rename", num_prompts=8)) == 0
