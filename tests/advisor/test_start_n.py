"""The N an emitted config starts from and the grid centred on it (advisor.start_n)."""

from __future__ import annotations

import pytest

from specadvisor.advisor.options import Option
from specadvisor.advisor.scoring import Tally
from specadvisor.advisor.start_n import centre, choose
from specadvisor.rulebase import load_rulebase


@pytest.fixture(scope="module")
def rb():
    return load_rulebase(include_user=False)


def test_centre_adds_the_start_and_one_step_above_within_the_limit():
    assert centre([1, 2, 3, 4], 3, None) == [1, 2, 3, 4]
    assert centre([3, 7], 7, 15) == [3, 7, 11]  # one step above the evidence's N, so the sweep sees whether it is a peak
    assert centre([3, 7, 11, 15], 15, 15) == [3, 7, 11, 15]  # at the limit: nothing above
    assert centre([3, 7, 11, 15], 7, 7) == [3, 7]  # a block-8 drafter cuts the grid
    assert centre([2, 3, 5], 7, None) == [2, 3, 5, 7]


def test_a_rule_set_n_wins_and_is_cut_to_the_drafter_limit(rb):
    option = Option(rb.methods["dflash"], drafter="z-lab/Kimi-K2.5-DFlash", block_size=8, origin="published")
    tally = Tally(score=1.0, grid=[3, 7, 11], config={"num_speculative_tokens": 11}, n_rule="code-moderate-n", n_evidence=["amd-gemma4-31b-dflash"])
    start = choose(option, tally, [3, 7], rb)
    assert start.n == 7 and "cut to 7" in start.why and start.evidence == ["amd-gemma4-31b-dflash"]


def test_a_block_drafter_starts_at_its_block(rb):
    dflash = choose(Option(rb.methods["dflash"], drafter="d", block_size=16, origin="published"), Tally(score=1.0, grid=[]), [3, 7, 11, 15], rb)
    dspark = choose(Option(rb.methods["dspark"], drafter="d", block_size=7, origin="published"), Tally(score=1.0, grid=[]), [3, 5, 7], rb)
    assert (dflash.n, dspark.n) == (15, 7)
    assert dflash.evidence == ["dflash-block-n"] and dspark.evidence == ["dspark-block-n"]


def test_without_evidence_the_start_says_so(rb):
    unknown_block = choose(Option(rb.methods["dflash"], drafter="d", origin="published"), Tally(score=1.0, grid=[]), [3, 7, 11, 15], rb)
    assert unknown_block.n == 3 and "block size is unknown" in unknown_block.why and unknown_block.evidence == []
    own_k = choose(Option(rb.methods["draft_model"], drafter="/d", origin="user"), Tally(score=1.0, grid=[]), [2, 3, 4, 5], rb, drafter_k=4)
    assert own_k.n == 4 and "drafter's own config" in own_k.why
