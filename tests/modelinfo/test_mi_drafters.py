"""Drafter checkpoints (speculators, EAGLE, DFlash, plain models) and their fit to the target."""

import pytest

from mi_helpers import model_dir
from specadvisor.errors import InputError
from specadvisor.modelinfo import inspect_drafter, inspect_model


def target(name):
    return inspect_model(str(model_dir(name)), offline=True)


def drafter(name, target_name=None):
    return inspect_drafter(str(model_dir(name)), target(target_name) if target_name else None, offline=True)


def test_speculators_eagle3_for_its_verifier():
    d = drafter("Llama-3.1-8B-Instruct-speculator.eagle3", "Llama-3.1-8B-Instruct")
    assert (d.algorithm, d.method, d.parallel_drafting) == ("eagle3", "eagle3", False)
    assert d.verifier == "meta-llama/Llama-3.1-8B-Instruct" and d.default_k == 3 and d.vocab_size == 128256
    assert d.servable and d.compatible is True and d.warnings == []


def test_wrong_target_is_a_clear_warning():
    d = drafter("Llama-3.1-8B-Instruct-speculator.eagle3", "Qwen3-8B")
    assert d.compatible is False
    assert any("trained for meta-llama/Llama-3.1-8B-Instruct" in w for w in d.warnings)
    assert any("vocabulary mismatch: drafter 128256 tokens, target 151936" in w for w in d.warnings)


def test_peagle_is_eagle3_with_parallel_drafting():
    d = drafter("Qwen3-8B-speculator.peagle", "Qwen3-8B")
    assert (d.algorithm, d.method, d.parallel_drafting, d.default_k) == ("peagle", "eagle3", True, 7)
    assert d.compatible is True


def test_speculators_dflash_block_size():
    d = drafter("Qwen3-8B-speculator.dflash", "Qwen3-8B")
    assert (d.method, d.block_size, d.default_k, d.parallel_drafting) == ("dflash", 16, 15, True)


def test_speculators_mtp_checkpoint_is_not_servable():
    d = drafter("Qwen3-8B-speculator.mtp")
    assert not d.servable and d.method is None and any("cannot be served" in w for w in d.warnings)


def test_zlab_dflash_release():
    d = drafter("Qwen3-8B-DFlash-b16", "Qwen3-8B")
    assert (d.algorithm, d.method, d.block_size, d.default_k) == ("dflash", "dflash", 16, 15)
    assert d.compatible is True  # no verifier name; the vocabulary matches


def test_eagle3_release_without_speculators_metadata():
    d = drafter("EAGLE3-LLaMA3.1-Instruct-8B", "Llama-3.1-8B-Instruct")
    assert (d.algorithm, d.method, d.verifier) == ("eagle3", "eagle3", None)
    assert d.compatible is True
    assert drafter("EAGLE3-LLaMA3.1-Instruct-8B", "Qwen3-8B").compatible is False


def test_plain_small_model_is_a_draft_model():
    d = drafter("Qwen3-0.6B", "Qwen3-8B")
    assert (d.method, d.algorithm, d.compatible) == ("draft_model", "draft_model", True)
    bad = drafter("Qwen3-0.6B", "Llama-3.1-8B-Instruct")
    assert bad.compatible is False and any("vocabulary mismatch" in w for w in bad.warnings)


def test_gemma4_assistant_is_served_as_mtp():
    d = drafter("gemma-4-31B-it-assistant", "gemma-4-31B-it")
    assert d.method == "mtp" and d.compatible is True
    wrong = drafter("gemma-4-31B-it-assistant", "Qwen3-8B")
    assert wrong.compatible is False


def test_without_target_compatibility_is_unknown():
    assert drafter("Qwen3-8B-speculator.peagle").compatible is None


def test_unreadable_drafter_falls_back_to_catalog_then_name(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    known = inspect_drafter("z-lab/Qwen3-8B-DFlash-b16", target("Qwen3-8B"), offline=True)
    assert known.method == "dflash" and known.compatible is True
    assert any("catalog entry" in w for w in known.warnings)
    guessed = inspect_drafter("someone/my-eagle3-drafter", None, offline=True)
    assert guessed.method == "eagle3" and any("guessed from the name" in w for w in guessed.warnings)
    plain = inspect_drafter("someone/tiny-model", None, offline=True)
    assert plain.method == "draft_model"


def test_missing_local_drafter_folder_is_an_input_error():
    with pytest.raises(InputError, match="no such model folder"):
        inspect_drafter("./no-such-drafter-dir", None, offline=True)


def test_a_quantized_copy_of_the_verifier_is_a_soft_warning(tmp_path):
    import shutil

    fp8 = tmp_path / "Qwen3-8B-FP8"
    shutil.copytree(model_dir("Qwen3-8B"), fp8)
    d = inspect_drafter(str(model_dir("Qwen3-8B-speculator.peagle")), inspect_model(str(fp8), offline=True), offline=True)
    assert d.compatible is True
    assert any("looks like a variant" in w for w in d.warnings)


@pytest.mark.parametrize(
    "kind, method, parallel, servable",
    [
        ("eagle3", "eagle3", False, True),
        ("peagle", "eagle3", True, True),
        ("dflash", "dflash", True, True),
        ("dflash2", "dflash", True, True),
        ("dspark", "dspark", True, True),
        ("mtp", None, False, False),
        ("xpress", None, False, False),
    ],
)
def test_every_speculators_type_maps_to_its_vllm_method(kind, method, parallel, servable):
    from specadvisor.modelinfo.drafter import read_drafter

    config = {
        "speculators_model_type": kind,
        "speculators_config": {"proposal_methods": [{"speculative_tokens": 5}], "verifier": {"name_or_path": "Qwen/Qwen3-8B"}},
        "transformer_layer_config": {"vocab_size": 151936},
    }
    d = read_drafter("x", config, None)
    assert (d.method, d.parallel_drafting, d.servable, d.default_k) == (method, parallel, servable, 5)


def test_dspark_release_by_architecture(tmp_path):
    import json

    (tmp_path / "config.json").write_text(
        json.dumps(
            {
                "architectures": ["Qwen3DSparkModel"],
                "block_size": 7,
                "model_type": "qwen3",
                "vocab_size": 151936,
                "hidden_size": 4096,
                "num_hidden_layers": 2,
                "target_layer_ids": [1, 17, 33],
            }
        )
    )
    d = inspect_drafter(str(tmp_path), target("Qwen3-8B"), offline=True)
    # DSpark drafts the whole block (no anchor bonus as in DFlash): block 7 -> N=7, the N the AMD
    # blog found best for dspark_qwen3_8b_block7; vLLM requires N == block_size for Qwen3-Omni DSpark.
    assert (d.algorithm, d.method, d.block_size, d.default_k, d.parallel_drafting, d.compatible) == ("dspark", "dspark", 7, 7, True, True)
