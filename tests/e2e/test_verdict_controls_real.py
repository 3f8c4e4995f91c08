"""Controls of the verdict on the real CPU build of vLLM (issue 22, item 5): each test is one real
`specadvisor sweep --cpu` of two launches (baseline and n-gram, side by side: `--parallel 2`, no
bracket); the verdict is checked in the sweep's --json, `sessions show` (text and --json) and
`--recompute`.

- positive: the editing workload (copy a HumanEval solution back with one name changed) at
  concurrency 1: n-gram N=4 drafts the copy from the prompt and must be recommended;
- negative: HumanEval at temperature 1, concurrency 8, n-gram N=8: no draft is accepted (mean
  acceptance length 1.0), so n-gram must not be recommended ("do not speculate" or "undecided": a
  tie cannot be told from a small loss with one launch per arm). Since the decision refuses any gain
  beyond the arm's mean acceptance length (analysis.decision._beyond_acceptance), the load-driven
  "1.52x with AL 1.0" below can no longer become "speculate".
The positive control measures until decided (`--budget 5`), as a user on a noisy machine would.

Why side by side: on the shared 2-core box (SmolLM2-135M, vLLM CPU 0.32.0, load average 8-15) the
other users' load moves throughput by up to ~50% between launches minutes apart, far past the
decision rule's 7% launch-spread prior. Measured by hand with the CLI (8 prompts, warmup 1; n-gram
tok/s over baseline tok/s, verdict):
- arms one after the other, editing c=1 N=4: 1.44x (48 tokens, with bracket: speculate), 1.30x
  (32: undecided, 0.99-1.71), 1.04x (64: undecided), 1.30x (48: undecided), 2.64x and 1.16x (48, this
  module's first two runs: speculate, then undecided 0.88-1.53): right in 2 of 6;
- one after the other, the negatives tried: editing c=8 N=4 0.61x, 1.05x, 1.08x, 1.43x (the last
  "speculate"); HumanEval T=0 c=8 N=8 1.27x (SmolLM2's greedy output repeats itself: AL 4.6);
  HumanEval T=1 c=8 N=8 1.52x with AL 1.0: "speculate", wrong, load alone;
- side by side (this module's settings): editing c=1 N=4 1.66x (1.26-2.18: speculate); HumanEval T=1
  c=8 N=8 0.94x (0.71-1.23: undecided). This module's third run
  (the first side by side): editing 1.53x, speculate; HumanEval T=1 not recommended (its figure went
  with pytest's temp folder).
Why the positive control may end undecided within `--budget 5` (2026-12-02, measured and replayed in
benchmarks/README.md, "The CPU positive control" and "More requests on running servers"): 1.39x at AL
4.03, but the same prompt's latency moved 36% per request between launches (the box's other load;
12.8% over 8 requests), and start-up (102-113 s a launch) took 60% of each side-by-side wave, so 5
minutes paid for one wave after the first look: replayed, 14 of 40 seeds decided. Since then the looks
happen while the wave's two servers are still up and a step limited by within-run noise is more passes
over the prompts on them (sweep/held.py), judged at the within-run estimate's degrees of freedom
(figures.comparison_df): replayed at 1.39x, `--budget 5` decides 33 of 40 seeds and `--budget 8` 38
of 40, no wrong answer. Measured with `--budget 8` at load average 10-12 (other real-vLLM tests on the
box): 13 passes on each of the 2 running servers (no relaunch), within-run 31% per request (168 df),
but n-gram was only 1.11x there (0.99-1.24x, faster on 6 of 8 prompts): on this box the gain itself
moves with the load, so "undecided" stays an accepted, honest answer. This module's settings
(`--budget 5`) then, load average 2 rising to 10: one pass on the running servers, then (n-gram near
1.1x, too close to the margin for passes to decide) 4 relaunches of each; undecided, 1.09x (0.88-1.35x);
441 s for this test.
Module time: 509 s for both tests on that box (load average 5-10); over the ~4 min asked for CI,
not measured on an idle box. The sweeps print their figures (pytest -s).
"""

from __future__ import annotations

import json

import pytest

from specadvisor.cli.main import main

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.exclusive, pytest.mark.timeout(900)]

COMMON = ["sweep", "--cpu", "--method", "ngram", "--num-prompts", "8", "--output-len", "48", "--warmup", "1", "--no-bracket", "--parallel", "2"]


def cli(db, capsys, *args) -> str:
    capsys.readouterr()
    code = main(["--db", str(db), *args])
    out = capsys.readouterr().out
    assert code == 0, out
    return out


def sweep_and_views(db, capsys, *args) -> tuple[dict, dict, dict, str, dict]:
    """The verdict as the sweep's --json, `sessions show --json`, `--recompute --json` and the text show it."""
    swept = json.loads(cli(db, capsys, *COMMON, *args, "--json"))
    rec = swept["recommendation"]
    with capsys.disabled():  # the figures, for the log of a run with -s
        print(
            json.dumps(
                {"verdict": rec["verdict"], "speedup": rec["speedup"], "per_concurrency": [[p["speedup"], p["speedup_ci"]] for p in rec["per_concurrency"]]}
            )
        )
    assert swept["launches_used"] >= 2
    session_id = swept["session_id"]
    stored = json.loads(cli(db, capsys, "sessions", "show", session_id, "--json"))["recommendation"]
    recomputed = json.loads(cli(db, capsys, "sessions", "show", session_id, "--json", "--recompute"))
    assert recomputed["recomputed"] is True and recomputed["stored_verdict"] == stored["verdict"]
    return rec, stored, recomputed["recommendation"], cli(db, capsys, "sessions", "show", session_id), swept


def test_ngram_is_never_turned_down_on_the_editing_workload_at_concurrency_1(cpu_engine, tmp_path, capsys):
    """The premise is checked (n-gram's drafts are accepted: mean acceptance length above 2), then the
    verdict: "speculate: ngram N=4" with the whole interval past the tie margin, or "undecided" with
    the step that would decide it; never "do not speculate" and never another arm. Asserting
    "speculate" outright fails on a shared 2-core box: side by side, with acceptance length 4.03, one
    run measured 1.06x (0.77-1.47) while others measured 1.53x and 1.66x."""
    views = sweep_and_views(tmp_path / "edit.db", capsys, "--prompts", "edit", "--n", "4", "--concurrency", "1", "--budget", "5")
    (ngram,) = [arm for arm in views[4]["arms"] if arm["arm_id"] == "ngram-n4-c1" or arm["arm_id"] == "ngram-n4"]
    assert ngram["mean_acceptance_length"] > 2, ngram  # the premise: the copy is drafted from the prompt
    for rec in views[:3]:
        assert rec["decision"] in ("speculate", "undecided"), rec["reasons"]
        (level,) = rec["per_concurrency"]
        assert level["concurrency"] == 1 and level["decision"] == rec["decision"]
        if rec["decision"] == "speculate":
            assert (rec["verdict"], rec["arm_id"]) == ("speculate: ngram N=4", "ngram-n4"), rec["reasons"]
            assert rec["speculative_config"]["method"] == "ngram" and not rec["do_not_speculate"]
            assert rec["speedup_ci"][0] > 1.03  # the whole interval beyond the tie margin
        else:
            assert rec["arm_id"] is None and ("would likely decide it" in rec["verdict"] or "might not decide it" in rec["verdict"]), rec["verdict"]
    assert views[0]["verdict"] == views[1]["verdict"] == views[2]["verdict"]  # one answer in every view
    assert ("Verdict: " + views[0]["verdict"]) in " ".join(views[3].split())
    assert "Verdict: do not speculate" not in views[3]
    with capsys.disabled():  # how it was measured (pytest -s): launches; the looks' passes ran on the running servers
        print(json.dumps({"launches_used": views[4]["launches_used"]}))


def test_ngram_is_not_recommended_where_no_draft_is_accepted(cpu_engine, tmp_path, capsys):
    views = sweep_and_views(tmp_path / "humaneval.db", capsys, "--prompts", "humaneval", "--n", "8", "--concurrency", "8", "--temperature", "1")
    for rec in views[:3]:
        # a tie at best (nothing accepted): "do not speculate" or "undecided", never n-gram
        assert rec["decision"] in ("do not speculate", "undecided") and rec["arm_id"] is None, rec["reasons"]
        assert rec["speculative_config"] is None and rec["serve_command"] is None
        (level,) = rec["per_concurrency"]
        assert level["concurrency"] == 8 and level["decision"] == rec["decision"] and level["arm_id"] is None
    assert "Verdict: speculate" not in views[3] and "serve with:" not in views[3]
