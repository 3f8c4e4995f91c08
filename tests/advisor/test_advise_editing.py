"""The editing workload ranks lookup drafting first, and a measurement speaks only for its workload."""

from __future__ import annotations

from advisor_helpers import gpus, model
from specadvisor.advisor import advise
from specadvisor.domain import Workload, WorkloadKind
from specadvisor.rulebase import load_rulebase

RB = load_rulebase(include_user=False)
SMOLLM2 = "HuggingFaceTB/SmolLM2-135M-Instruct"


def _advice(kind: WorkloadKind, model_id: str = SMOLLM2, params_b: float = 0.135):
    return advise(gpus("H200"), model(model_id, params_b=params_b), Workload(kind=kind, concurrency=1), vllm_version="0.26.0", rulebase=RB)


def test_editing_puts_lookup_first_with_its_evidence():
    advice = _advice(WorkloadKind.edit)
    assert "editing-lookup-first" in advice.fired_rules
    # on CUDA from 0.18 ngram_gpu drafts the same n-grams and keeps async scheduling: it leads, ngram follows
    assert [c.id for c in advice.candidates[:2]] == ["ngram_gpu", "ngram"]
    assert advice.candidates[0].n_grid == [2, 4, 8]
    first = advice.candidates[1]
    assert first.n_grid == [2, 4, 8]
    assert {"prompt-lookup-decoding", "h200-ngram-edit-smollm2"} <= {e.id for e in first.evidence}
    assert first.expected_speedup == (1.3, 1.38)  # the editing run, not the HumanEval one that lost


def test_an_editing_measurement_does_not_speak_for_code_completion():
    code = next(c for c in _advice(WorkloadKind.code).candidates if c.id == "ngram")
    assert "h200-ngram-edit-smollm2" not in {e.id for e in code.evidence}
    assert code.expected_speedup == (0.48, 0.66)


def test_editing_lifts_lookup_above_where_it_stands_for_chat_on_any_model():
    chat = {c.id: c.score for c in _advice(WorkloadKind.chat, "acme/private-13b", 13.0).candidates}
    edit = {c.id: c.score for c in _advice(WorkloadKind.edit, "acme/private-13b", 13.0).candidates}
    assert edit["ngram"] > chat["ngram"] and edit["suffix"] > chat["suffix"] and edit["ngram_gpu"] > chat["ngram_gpu"]
    assert max(edit, key=edit.get) == "ngram_gpu" and sorted(edit, key=edit.get)[-2] == "ngram"
