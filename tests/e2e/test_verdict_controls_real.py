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
The positive control measures until decided (`--budget 8`), as a user on a noisy machine would, and
must end "speculate: ngram N=4": the looks happen while the wave's two servers are still up, a step
limited by within-run noise is more passes over the prompts on them (sweep/held.py), and each launch
is weighted by its precision (figures.Side). Both tests are `exclusive` (alone on the box, as in CI).

Why side by side: on the shared 2-core box (SmolLM2-135M, vLLM CPU 0.32.0) other users' load moves
throughput by up to ~50% between launches minutes apart; arms launched one after the other read
editing c=1 N=4 anywhere from 1.04x to 2.64x, and HumanEval T=1 c=8 N=8 (AL 1.0) once 1.52x. Side by
side the two servers share the load. The history of this control (when it still had to accept
"undecided": 36% per-request noise under load 10-12, start-up 60% of a wave) and the runs behind
`--budget 8` are in benchmarks/README.md, "The CPU positive control".
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


def test_ngram_is_recommended_on_the_editing_workload_at_concurrency_1(cpu_engine, tmp_path, capsys):
    """The premise is checked (n-gram's drafts are accepted: mean acceptance length above 2), then the
    verdict in every view: "speculate: ngram N=4" with the whole interval past the tie margin. The
    sweep measures until decided (`--budget 8`): passes on the two running servers while within-run
    noise limits the answer, a relaunch only where launch-to-launch spread does."""
    views = sweep_and_views(tmp_path / "edit.db", capsys, "--prompts", "edit", "--n", "4", "--concurrency", "1", "--budget", "8")
    (ngram,) = [arm for arm in views[4]["arms"] if arm["arm_id"] == "ngram-n4-c1" or arm["arm_id"] == "ngram-n4"]
    assert ngram["mean_acceptance_length"] > 2, ngram  # the premise: the copy is drafted from the prompt
    for rec in views[:3]:
        assert (rec["decision"], rec["verdict"], rec["arm_id"]) == ("speculate", "speculate: ngram N=4", "ngram-n4"), rec["reasons"]
        (level,) = rec["per_concurrency"]
        assert level["concurrency"] == 1 and level["decision"] == "speculate"
        assert rec["speculative_config"]["method"] == "ngram" and not rec["do_not_speculate"]
        assert rec["speedup_ci"][0] > 1.03  # the whole interval beyond the tie margin
        assert not any(r.startswith("do not speculate") for r in rec["reasons"])
    assert views[0]["verdict"] == views[1]["verdict"] == views[2]["verdict"]  # one answer in every view
    assert ("Verdict: " + views[0]["verdict"]) in " ".join(views[3].split())
    assert "serve with:" in views[3] and "Verdict: do not speculate" not in views[3]
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
