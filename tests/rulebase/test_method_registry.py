"""The method registry is the one home of method knowledge: lookups, versions, and no stray names."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from specadvisor.errors import InputError
from specadvisor.rulebase import load_rulebase, registry

ROOT = Path(__file__).resolve().parents[2] / "specadvisor"


@pytest.fixture(scope="module")
def rb():
    return load_rulebase(include_user=False)


def _method_names(rb) -> set[str]:
    names = set()
    for spec in rb.methods.values():
        names |= {spec.id, spec.vllm_method, *spec.aliases, *(o.name for o in spec.older_names)}
    return {n.lower() for n in names}


def _string_literals(tree: ast.AST):
    """String constants that are not docstrings."""
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node


def test_no_method_name_is_hard_coded_outside_the_registry(rb):
    names = _method_names(rb)
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        if path.name == "registry.py" and path.parent.name == "rulebase":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in _string_literals(tree):
            if node.value.strip().lower() in names:
                found.append(f"{path.relative_to(ROOT.parent)}:{node.lineno}: {node.value!r}")
    assert not found, "method names belong in rules/methods.toml and specadvisor/rulebase/registry.py:\n" + "\n".join(found)


def test_every_method_and_versioned_key_cites_a_public_source(rb):
    for spec in rb.methods.values():
        assert spec.source.startswith("https://"), spec.id
        assert spec.platforms, spec.id
        for older in spec.older_names:
            assert older.source.startswith("https://"), older.name
    for key in rb.config_keys.values():
        assert key.source.startswith("https://"), key.id


@pytest.mark.parametrize(
    "typed, method_id",
    [
        ("peagle", "peagle"),
        ("P-EAGLE", "peagle"),
        ("p-eagle", "peagle"),
        ("EAGLE-3", "eagle3"),
        ("eagle3", "eagle3"),
        ("deepseek_mtp", "mtp"),
        ("DFlash", "dflash"),
        ("pard", "pard"),
        ("ngram", "ngram"),
    ],
)
def test_get_accepts_ids_aliases_display_and_vllm_names(rb, typed, method_id):
    assert registry.get(typed, rb).id == method_id


def test_unknown_method_is_a_one_line_error_listing_the_known(rb):
    assert registry.get("eagle4", rb) is None
    with pytest.raises(InputError) as err:
        registry.require("eagle4", rb=rb)
    assert "unknown method 'eagle4'" in str(err.value) and "peagle" in err.value.hint
    with pytest.raises(InputError, match=r"needs vLLM >= 0.20.0"):
        registry.require("dflash", "0.19.1", rb=rb)
    assert "dflash" not in registry.known_methods("0.19.1", rb) and "dflash" in registry.known_methods(rb=rb)
    assert "p-eagle" in registry.known_methods(rb=rb, include_aliases=True)


def test_display_names_for_plans(rb):
    assert registry.display_name("peagle", rb) == "P-EAGLE"
    assert registry.display_name("eagle3", rb) == "EAGLE-3"
    assert registry.config_label({"method": "eagle3", "parallel_drafting": True}, rb) == "P-EAGLE"
    assert registry.config_label({"method": "draft_model", "parallel_drafting": True}, rb) == "PARD"
    assert registry.config_label(None, rb) == "baseline"


def test_mtp_name_follows_the_vllm_version(rb):
    """vllm#25232 unified the per-family MTP names into "mtp" for 0.11; older releases need the family's
    (GLM-4.5 and MiMo went through deepseek_mtp; 0.8.5's V1 engine took no MTP at all: its V0 engine
    served DeepSeek's from a config without `method`, and that name is never sent)."""
    mtp = registry.get("mtp", rb)
    assert registry.sends_no_method(mtp, "0.8.5", family="deepseek-v3")
    assert not registry.sends_no_method(mtp, "0.9.0", family="deepseek-v3")
    assert registry.vllm_name(mtp, "0.9.0", family="deepseek-v3") == "deepseek_mtp"
    assert "deepseek_mtp" not in registry.vllm_names("0.8.5", rb)
    assert registry.vllm_name(mtp, "0.8.5", model_type="glm4_moe") is None
    assert registry.vllm_name(mtp, "0.9.2", family="deepseek-v3") == "deepseek_mtp"
    assert registry.vllm_name(mtp, "0.10.2", model_type="qwen3_next") == "qwen3_next_mtp"
    assert registry.vllm_name(mtp, "0.10.1", model_type="qwen3_next") is None
    assert registry.vllm_name(mtp, "0.10.2", model_type="glm4_moe") == "deepseek_mtp"
    assert registry.vllm_name(mtp, "0.9.2", model_type="glm4_moe") is None
    assert registry.vllm_name(mtp, "0.11.0", family="deepseek-v3") == "mtp"
    assert registry.vllm_name_problem("mtp", "0.10.2", rb).startswith("method 'mtp' needs vLLM >= 0.11.0")
    assert registry.vllm_name_problem("deepseek_mtp", "0.33.0", rb) is None  # still a deprecated alias
    assert registry.vllm_name_problem("glm4_moe_mtp", "0.32.0", rb) is None and registry.canonical_vllm_name("glm4_moe_mtp", rb) == "mtp"
    assert "glm4_moe_mtp" not in registry.served_names("0.32.0", rb)  # accepted, never offered


def test_parallel_limits_and_drafter_recognition(rb):
    assert registry.is_parallel("dflash", {}, rb) and registry.is_parallel("eagle3", {"parallel_drafting": True}, rb)
    assert not registry.is_parallel("eagle3", {}, rb)
    assert registry.n_limit("dflash", 8, rb) == 7 and registry.n_limit("dspark", 7, rb) == 7 and registry.n_limit("dflash", None, rb) == 15
    assert registry.needs_drafter("p-eagle", rb) and not registry.needs_drafter("dspark", rb) and not registry.needs_drafter("ngram", rb)
    assert registry.from_speculators("dflash2", rb) == ("dflash", True)
    assert registry.from_speculators("xpress", rb) == (None, False)
    assert registry.from_architecture(["Eagle3LlamaForCausalLM"], "llama", rb) == ("eagle3", "eagle3", False)
    assert registry.from_architecture(["LlamaForCausalLM"], "llama", rb) == (None, "draft_model", False)
    assert registry.from_architecture([], "gemma4_assistant", rb)[1] == "mtp"
    assert registry.resolve("pard", {"model": "m"}, rb) == ("draft_model", {"parallel_drafting": True, "model": "m"})


def test_platforms(rb):
    """The CPU build speculates from 0.20 (n-gram, suffix, EAGLE, draft models), DFlash from 0.25.1."""
    assert registry.runs_on(registry.get("ngram", rb), "cpu")
    assert not registry.runs_on(registry.get("ngram", rb), "cpu", "0.19.1")
    assert registry.runs_on(registry.get("eagle3", rb), "cpu", "0.20.0")
    assert not registry.runs_on(registry.get("dflash", rb), "cpu", "0.24.0") and registry.runs_on(registry.get("dflash", rb), "cpu", "0.26.0")
    assert not registry.runs_on(registry.get("peagle", rb), "cpu")
    assert registry.runs_on(registry.get("eagle3", rb), "rocm")
    assert registry.platform_problem(registry.get("ngram", rb), "cpu", "0.14.1") == "vLLM serves n-gram on cpu from 0.20.0 on (target version 0.14.1)"
    assert registry.platform_problem(registry.get("ngram", rb), "cpu", "0.20.0") is None


def test_every_shipped_drafter_evidence_and_model_source_can_be_opened(rb):
    """Sources are URLs (or this project's own measurement), never a path outside the repository."""
    for drafter in rb.drafters:
        assert drafter.source.startswith("https://huggingface.co/"), drafter.drafter
    for evidence in rb.evidence.values():
        assert "https://" in evidence.source or evidence.source.startswith("measured by the specadvisor project"), evidence.id
    for family in rb.models:
        assert not family.source or family.source.startswith("https://"), family.id
    for path in sorted((ROOT.parent / "rules").glob("*")):
        text = path.read_text(encoding="utf-8")
        assert "shared/" not in text and "/work/" not in text, path


def test_no_evidence_cites_a_site_or_blog_index(rb):
    """A citation names the article: `https://vllm.ai/blog` is a list of posts that changes every week,
    so every URL in a source has at least two path segments (a post, a file, a PR, a model card)."""
    for evidence in rb.evidence.values():
        for url in re.findall(r"https://[^\s,;)'\"]+", evidence.source):
            segments = [part for part in urlsplit(url).path.split("/") if part]
            assert len(segments) >= 2, f"{evidence.id}: {url} is an index, not the article"
