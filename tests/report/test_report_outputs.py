"""Reports, serve-params and bench import on real sessions (no fakes needed: pure functions + SQLite)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sweep"))
from specadvisor.domain import SweepSettings
from specadvisor.errors import InputError
from specadvisor.report import html, import_bench_results, markdown, serve_params
from specadvisor.sweep.plan import plan_from_methods
from sweep_fakes import spec_result

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "report"


def finished_session(throughputs=None):
    throughputs = throughputs or {"baseline": 100.0, "ngram-n2": 150.0, "ngram-n4": 140.0}
    plan = plan_from_methods("org/target", [("ngram", {"prompt_lookup_min": 2})], [2, 4], SweepSettings(output_len=64))
    s = plan.session
    for arm in s.arms:
        s.results.append(spec_result(arm.id, arm.n, throughputs[arm.id]))
    return s


def test_markdown_report_has_verdict_snippet_table_and_prediction():
    text = markdown(finished_session())
    assert "# Speculative decoding sweep: org/target" in text
    snippet = re.search(r"--speculative-config '(\{.*?\})'", text).group(1)
    assert json.loads(snippet) == {"method": "ngram", "prompt_lookup_min": 2, "num_speculative_tokens": 2}
    assert "| n-gram N=2 | ok | 150.0 (148.5-151.5) |" in text
    # N=2 could only be predicted through the baseline (another regime): the report withholds it and says why
    assert "withheld: n-gram N=2" in text and "mix regimes" in text
    assert "vllm bench sweep serve" in text


def test_markdown_report_shows_an_in_regime_prediction_with_its_own_error():
    plan = plan_from_methods("org/target", [("ngram", {})], [2, 3, 4], SweepSettings(output_len=64))
    s = plan.session
    for arm, tps in zip(s.arms, (100.0, 150.0, 146.0, 140.0), strict=True):
        s.results.append(spec_result(arm.id, arm.n, tps))
    text = markdown(s)
    assert "mean absolute prediction error over measured arms" in text


def test_markdown_says_do_not_speculate_when_baseline_wins():
    text = markdown(finished_session({"baseline": 200.0, "ngram-n2": 100.0, "ngram-n4": 90.0}))
    assert "verdict: do not speculate" in text and "- the best speculative arm, ngram N=2 at 0.50x" in text
    assert "do not speculate here" not in text  # issue 41: the reason repeated the verdict above it
    assert "--speculative-config '" not in text


def test_html_is_self_contained_with_inline_svg_charts():
    page = html(finished_session())
    assert page.startswith("<!DOCTYPE html>")
    assert page.count("<svg") == 4  # throughput vs N + two acceptance charts + the Pareto chart (no latency stats in this fixture)
    assert "<script" not in page
    assert not re.search(r'(src|href)="(https?:)?//', page)
    assert "no speculation 100.0" in page


def test_html_escapes_text():
    s = finished_session()
    s.model = "<b>evil</b>"
    assert "<b>evil</b>" not in html(s)


def test_serve_params_one_entry_per_server_config_with_dict_spec_config():
    plan = plan_from_methods("m", [("ngram", {"prompt_lookup_min": 2})], [2, 4], SweepSettings(concurrency=[1, 8]))
    params = serve_params(plan.session)
    assert params == [
        {"_benchmark_name": "baseline"},
        {"_benchmark_name": "ngram-n2", "speculative_config": {"method": "ngram", "prompt_lookup_min": 2, "num_speculative_tokens": 2}},
        {"_benchmark_name": "ngram-n4", "speculative_config": {"method": "ngram", "prompt_lookup_min": 2, "num_speculative_tokens": 4}},
    ]
    json.dumps(params)


def test_import_bench_maps_vllm_fields():
    spec, base = import_bench_results([FIXTURES / "bench_ngram_n4.json", FIXTURES / "bench_baseline.json"])
    assert spec.source == "imported:vllm-bench" and spec.arm_id == "bench-ngram-n4"
    assert spec.output_throughput == 40.96 and spec.completed == 8
    assert spec.acceptance_rate == pytest.approx(0.654)
    assert spec.mean_acceptance_length == 3.62
    assert spec.per_position_acceptance == [0.923, 0.769, 0.615, 0.308]
    assert spec.per_position[0].accepted == 120 and spec.per_position[0].drafts == 130
    assert spec.tpot_ms.p99 == 30.0 and spec.ttft_ms.median == 110.0
    assert base.num_drafts is None and base.per_position == []


def test_import_bench_rejects_other_json(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text('{"hello": 1}')
    with pytest.raises(InputError, match=r"x.json: not a `vllm bench serve --save-result` file"):
        import_bench_results([bad])
    bad.write_text("{nope")
    with pytest.raises(InputError, match="not valid JSON"):
        import_bench_results([bad])


def test_serve_params_say_which_arms_need_a_package_beside_vllm():
    """Issue 41: an exported plan with suffix arms said nothing about arctic-inference."""
    from specadvisor.domain import SweepSettings
    from specadvisor.sweep.plan import plan_from_methods

    plan = plan_from_methods("m", [("suffix", {}), ("ngram", {})], [4, 8], SweepSettings())
    notes: list[str] = []
    serve_params(plan.session, notes=notes)
    assert notes == ["the suffix arms need arctic-inference installed beside vLLM where they run (pip install arctic-inference)"]
