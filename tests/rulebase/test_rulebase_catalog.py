"""The shipped catalogs: load cleanly, forgiving GPU names, model families, drafters, versions."""

from __future__ import annotations

import pytest

from specadvisor.rulebase import drafters_for, find_gpu, find_model_family, load_rulebase, methods_for_version


@pytest.fixture(scope="module")
def rb():
    return load_rulebase(include_user=False)


def test_shipped_rulebase_is_complete(rb):
    counts = rb.counts()
    assert counts["rules"] >= 15 and counts["evidence"] >= 20 and counts["drafters"] >= 45
    for rule in rb.rules:
        assert rule.why.endswith(".") and rule.evidence, rule.id  # readable and traceable


@pytest.mark.parametrize(
    "name,gpu_id",
    [
        ("h100", "h100-sxm"),
        ("H100-80GB", "h100-sxm"),
        ("NVIDIA H100 80GB HBM3", "h100-sxm"),
        ("NVIDIA H100 PCIe", "h100-pcie"),
        ("H200", "h200"),
        ("B200", "b200"),
        ("A100-80GB", "a100-80gb"),
        ("NVIDIA A100-SXM4-40GB", "a100-40gb"),
        ("L40S", "l40s"),
        ("NVIDIA L4", "l4"),
        ("A10G", "a10g"),
        ("RTX4090", "rtx4090"),
        ("rtx 4090", "rtx4090"),
        ("NVIDIA GeForce RTX 3090", "rtx3090"),
        ("NVIDIA RTX 6000 Ada Generation", "rtx6000-ada"),
        ("mi300x", "mi300x"),
        ("AMD Instinct MI300X VF", "mi300x"),
        ("MI325X", "mi325x"),
        ("MI355X", "mi355x"),
        ("MI250X", "mi250x"),
    ],
)
def test_find_gpu_is_forgiving(rb, name, gpu_id):
    gpu = find_gpu(name, rb)
    assert gpu is not None and gpu.id == gpu_id


def test_find_gpu_unknown_and_vendor_fields(rb):
    assert find_gpu("voodoo5", rb) is None
    assert find_gpu("", rb) is None
    assert find_gpu("mi300x", rb).vendor == "amd" and find_gpu("mi300x", rb).gfx_target == "gfx942"
    assert find_gpu("h100", rb).compute_capability == "9.0"


@pytest.mark.parametrize(
    "model_id,family,mtp",
    [
        ("deepseek-ai/DeepSeek-V3", "deepseek-v3", 1),
        ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b-instruct", 0),
        ("/data/models/Qwen3-8B", "qwen3-8b", 0),
        ("Qwen/Qwen3-30B-A3B-Instruct-2507", "qwen3-30b-a3b-instruct-2507", 0),
        ("Qwen/Qwen3-30B-A3B", "qwen3-30b-a3b", 0),
        ("zai-org/GLM-4.5-Air", "glm-4.5-air", 1),
    ],
)
def test_find_model_family_prefers_the_most_specific(rb, model_id, family, mtp):
    found = find_model_family(model_id, rb)
    assert found is not None and found.id == family and found.native_mtp == mtp


def test_private_model_has_no_family_or_drafters(rb):
    assert find_model_family("acme/support-bot-ft-v7", rb) is None
    assert drafters_for("acme/support-bot-ft-v7", rb) == []


def test_section_d_drafters_are_transcribed(rb):
    by_target = {d.drafter: d for d in drafters_for("Qwen/Qwen3-8B", rb)}
    assert by_target["RedHatAI/Qwen3-8B-speculator.peagle"].parallel_drafting
    assert by_target["deepseek-ai/dspark_qwen3_8b_block7"].method == "dspark"
    assert {d.method for d in drafters_for("openai/gpt-oss-20b", rb)} == {"eagle3", "dflash"}
    pard = drafters_for("Qwen/Qwen3-1.7B", rb)
    assert [(d.drafter, d.method, d.parallel_drafting) for d in pard] == [("amd/PARD-Qwen3-0.6B", "draft_model", True)]


def test_methods_for_version(rb):
    old, new = methods_for_version("0.19", rb), methods_for_version("0.33.0", rb)
    assert "dflash" not in old and "dflash" in new
    assert "medusa" in methods_for_version("0.32.0", rb) and "medusa" not in new
    assert "peagle" not in methods_for_version("0.15", rb) and "peagle" in old
    assert methods_for_version(None, rb).keys() == new.keys()
