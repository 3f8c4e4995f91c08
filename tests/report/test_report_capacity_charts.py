"""Reports gain a Pareto chart (per-user vs total tokens/s across concurrencies), latency
distributions, and for capacity sweeps the goodput answer, chart and rate table."""

from __future__ import annotations

import re

from specadvisor.domain import ArmResult, LatencyStats, RatePoint, SweepSettings
from specadvisor.report import html, markdown
from specadvisor.sweep.plan import plan_from_methods


def _concurrency_session():
    plan = plan_from_methods("org/target", [("ngram", {"prompt_lookup_min": 2})], [2], SweepSettings(concurrency=[1, 4]))
    session = plan.session
    figures = {"baseline-c1": (20.0, 50.0), "baseline-c4": (60.0, 66.0), "ngram-n2-c1": (30.0, 33.0), "ngram-n2-c4": (80.0, 48.0)}
    session.results = [
        ArmResult(
            arm_id=a,
            output_throughput=tps,
            output_throughput_ci=(tps * 0.97, tps * 1.03),
            ttft_ms=LatencyStats(median=100, p90=150, p99=210),
            tpot_ms=LatencyStats(median=tpot, p90=tpot * 1.2, p99=tpot * 1.5),
        )
        for a, (tps, tpot) in figures.items()
    ]
    return session


def test_pareto_and_latency_charts_are_in_the_html_report():
    page = html(_concurrency_session())
    for kind in ("pareto", "latency-ttft", "latency-tpot"):
        assert f'data-chart="{kind}"' in page
    pareto = re.search(r'<svg[^>]*data-chart="pareto".*?</svg>', page, re.S).group(0)
    assert pareto.count("<polyline") == 2, "one line per configuration across its concurrencies"
    assert "n-gram N=2 c=4: 80.0 tok/s total, 20.8 per user" in pareto  # 1000 / 48 ms
    tpot = re.search(r'<svg[^>]*data-chart="latency-tpot".*?</svg>', page, re.S).group(0)
    assert tpot.count("<rect x=") >= 4 and "n-gram N=2 · c4: p50 48.0 ms, p90 57.6 ms, p99 72.0 ms" in tpot


def _capacity_session():
    plan = plan_from_methods("org/target", [("ngram", {})], [2], SweepSettings(slo_tpot_ms=30, goodput=True))
    session = plan.session
    session.results = [
        ArmResult(
            arm_id="baseline",
            goodput_rps=9.0,
            rate_points=[
                RatePoint(rate=4.5, achieved_rate=4.4, completed=16, tpot_p99_ms=18, ttft_p99_ms=90, meets_slo=True),
                RatePoint(rate=9.0, achieved_rate=8.8, completed=16, tpot_p99_ms=28, ttft_p99_ms=120, meets_slo=True),
                RatePoint(rate=18.0, achieved_rate=17.1, completed=16, tpot_p99_ms=61, ttft_p99_ms=400, meets_slo=False),
            ],
        ),
        ArmResult(
            arm_id="ngram-n2",
            goodput_rps=14.0,
            rate_points=[
                RatePoint(rate=14.0, achieved_rate=13.5, completed=16, tpot_p99_ms=29, ttft_p99_ms=110, meets_slo=True),
                RatePoint(rate=28.0, achieved_rate=26.0, completed=16, tpot_p99_ms=70, ttft_p99_ms=500, meets_slo=False),
            ],
        ),
    ]
    return session


def test_capacity_section_reads_in_req_per_s_against_the_target():
    session = _capacity_session()
    page = html(session)
    answer = "at p99 TPOT &lt;= 30 ms, n-gram N=2 sustains 14 req/s against 9 req/s without speculation"
    assert answer in page and 'data-chart="goodput"' in page and "target 30 ms" in page
    goodput = re.search(r'<svg[^>]*data-chart="goodput".*?</svg>', page, re.S).group(0)
    assert goodput.count("<circle") == 5 and "n-gram N=2: goodput 14.00 req/s" in goodput
    md = markdown(session)
    assert "## Capacity under the latency target" in md
    assert "| n-gram N=2 | 28.00 | 26.00 | 16 | 70 | 500 | breaks |" in md
