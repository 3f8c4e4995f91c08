"""validate_spec_config: what each vLLM version accepts, as read from its code."""

from __future__ import annotations

import pytest

from specadvisor.advisor import validate_spec_config
from specadvisor.rulebase import load_rulebase

RB = load_rulebase(include_user=False)

VALID = [
    ({"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_min": 2, "prompt_lookup_max": 4}, "0.32.0"),
    ({"method": "suffix", "num_speculative_tokens": 8}, "0.32.0"),
    ({"method": "eagle3", "model": "d", "num_speculative_tokens": 7, "parallel_drafting": True}, "0.16.0"),
    ({"method": "dflash", "model": "d", "num_speculative_tokens": 15, "attention_backend": "triton_attn"}, "0.21.0"),
    ({"method": "medusa", "model": "d", "num_speculative_tokens": 2}, "0.32.0"),
    ({"method": "mtp", "num_speculative_tokens": 4}, None),
    ({"method": "mtp"}, None),
    (
        {
            "method": "eagle3",
            "model": "d",
            "num_speculative_tokens": 3,
            "rejection_sample_method": "synthetic",
            "synthetic_acceptance_length": 2.5,
            "disable_padded_drafter_batch": True,
        },
        "0.32.0",
    ),
    ({"method": "draft_model", "model": "d", "num_speculative_tokens": 3, "num_speculative_tokens_per_batch_size": [[1, 8, 4], [9, 64, 2]]}, None),
]

INVALID = [
    ({"model": "d", "num_speculative_tokens": 3}, None, "no 'method'"),
    ({"method": "warp", "num_speculative_tokens": 3}, None, "unknown method 'warp'"),
    ({"method": "medusa", "model": "d", "num_speculative_tokens": 2}, "0.33.0", "removed in vLLM 0.33.0"),
    ({"method": "mlp_speculator", "model": "d", "num_speculative_tokens": 2}, "0.33", "removed in vLLM 0.10.0"),
    ({"method": "dflash", "model": "d", "num_speculative_tokens": 7}, "0.19.0", "needs vLLM >= 0.20.0"),
    ({"method": "eagle3", "model": "d", "num_speculative_tokens": 7, "parallel_drafting": True}, "0.15.0", "'parallel_drafting' is not accepted"),
    ({"method": "dflash", "model": "d", "num_speculative_tokens": 16}, None, "maximum 15"),
    ({"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_min": 5, "prompt_lookup_max": 2}, None, "prompt_lookup_min=5 must be <="),
    ({"method": "eagle3", "model": "d", "num_speculative_tokens": 3, "prompt_lookup_min": 2}, None, "not accepted with method 'eagle3'"),
    ({"method": "ngram", "num_speculative_tokens": 3, "disable_by_batch_size": 8}, None, "use 'num_speculative_tokens_per_batch_size'"),
    ({"method": "eagle3", "model": "d", "num_speculative_tokens": 3, "tensor_parallel_size": 2}, None, "use 'draft_tensor_parallel_size'"),
    ({"method": "ngram", "num_speculative_tokens": 3, "ngram_size": 2}, None, "unknown key 'ngram_size'"),
    ({"method": "ngram", "num_speculative_tokens": 3, "synthetic_acceptance_length": 2.5}, None, "only work with rejection_sample_method 'synthetic'"),
    ({"method": "eagle3", "num_speculative_tokens": 3}, None, "needs a drafter 'model'"),
    ({"method": "ngram", "model": "d", "num_speculative_tokens": 3}, None, "takes no 'model'"),
    ({"method": "ngram"}, None, "set 'num_speculative_tokens'"),
    ({"method": "ngram", "num_speculative_tokens": 0}, None, "must be >= 1"),
    ({"method": "ngram", "num_speculative_tokens": "4"}, None, "must be int"),
    ({"method": "ngram", "num_speculative_tokens": True}, None, "must be int"),
    ({"method": "ngram", "num_speculative_tokens": 3, "rejection_sample_method": "magic"}, None, "must be one of"),
    ({"method": "draft_model", "model": "d", "num_speculative_tokens": 3, "num_speculative_tokens_per_batch_size": [[1, 8]]}, None, "[start, end, k]"),
]


@pytest.mark.parametrize("config,version", VALID)
def test_valid_configs(config, version):
    assert validate_spec_config(config, version, rulebase=RB) == []


@pytest.mark.parametrize("config,version,problem", INVALID, ids=[c[2] for c in INVALID])
def test_invalid_configs_name_the_problem(config, version, problem):
    problems = validate_spec_config(config, version, rulebase=RB)
    assert any(problem in p for p in problems), problems


def test_mtp_layer_multiples_and_dflash_block_size():
    assert validate_spec_config({"method": "mtp", "num_speculative_tokens": 3}, None, rulebase=RB, mtp_layers=2)
    assert validate_spec_config({"method": "mtp", "num_speculative_tokens": 4}, None, rulebase=RB, mtp_layers=2) == []
    assert validate_spec_config({"method": "dflash", "model": "d", "num_speculative_tokens": 8}, None, rulebase=RB, block_size=8)
    assert validate_spec_config({"method": "dflash", "model": "d", "num_speculative_tokens": 7}, None, rulebase=RB, block_size=8) == []


def test_not_a_dict():
    assert validate_spec_config(["method", "ngram"], None, rulebase=RB) == ["the speculative config must be a JSON object"]
