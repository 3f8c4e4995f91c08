"""What a report says, independent of its format: Markdown and HTML render the same sections."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from specadvisor import request_format
from specadvisor.analysis.arms import arm_label, family_key, family_label, server_key
from specadvisor.analysis.power import shown_mean_power_w
from specadvisor.analysis.predict import Prediction, confident_predictions, mean_abs_error_pct, measured, predict_throughput, withheld_predictions
from specadvisor.analysis.recommend import recommend
from specadvisor.analysis.tails import session_tails
from specadvisor.domain import Arm, ArmResult, GpuReading, GpuTelemetry, Recommendation, Session
from specadvisor.figures import Speedup, all_speedups, baseline_result, throughput
from specadvisor.provenance import provenance_facts, serve_argv_lines
from specadvisor.report.charts import GoodputSeries, LatencyQuantiles, ParetoSeries, ThroughputSeries
from specadvisor.report.serve_params import bench_sweep_command, serve_params
from specadvisor.report.snippet import (
    DecidingStep,
    deciding_step,
    recommended_command,
    recommended_config,
    serve_command,
    spec_config_json,
)
from specadvisor.trust import placeholder_note, recorded
from specadvisor.vllm_command import PASTE_WIDTH, shell_command

COLUMNS = [
    "arm",
    "status",
    "output tok/s (95% CI)",
    "speedup (verdict's interval)",
    "predicted",
    "pred. error",
    "load achieved/asked",
    "req/s",
    "mean AL",
    "accept rate",
    "per-position acceptance",
    "TTFT p99 ms",
    "TPOT p99 ms",
]

HOW_TO_READ = [
    "Output tok/s counts generated tokens per second over the measured requests only (warmups excluded), at a fixed output length.",
    "Mean acceptance length (AL) = 1 + accepted / drafts, bonus token included; acceptance rate = accepted / drafted tokens. "
    "Acceptance rate falls with N by arithmetic, so configurations are ranked by measured throughput, never by it.",
    "Load achieved/asked: the mean number of requests in flight (sum of request times / duration) against the concurrency asked, "
    "or the request rate really sent against the Poisson rate asked; a trial more than 10% below its ask is flagged under problems.",
    "Per-position acceptance i = drafts whose first i tokens were all accepted / drafts, on an absolute 0-100% scale.",
    "Speedup = the arm's output tok/s over the no-speculation baseline's at the same concurrency (geometric means over launches); "
    "its interval is the one the verdict rests on (the decision rule below: launch-to-launch and within-run noise, the confidence "
    'shared by the arms and looks), so the table and the verdict give one interval per arm; "-" where there is no baseline to compare with.',
    "Predicted throughput: AL(N) = 1 + the first N per-position rates measured at the largest N, divided by a per-step cost "
    "c0 + c1*N fitted by weighted least squares on the measured speculative arms of the same family and concurrency (a measured arm's "
    "prediction leaves that arm out). The baseline is never in the fit: speculation may run vLLM's scheduler differently. A prediction "
    "needs two such arms, shows its own 95% error, and is withheld (with the reason) when the measured arms contradict the model.",
    "Throughput intervals come from trials (or runs); a single run gets one only from batch means over at least 10 independent time "
    'windows, and otherwise says "one trial: no interval". Intervals are built on the log scale, so they never go below zero.',
    "Decision rule (stated before measuring): at each concurrency, speculate with an arm only when its whole speedup interval "
    "(95% by default, shared by all arms and looks) is more than 3% above the baseline; do not speculate when every arm's interval "
    "is below that; otherwise undecided, naming the noise that limits it and what to measure next. Ties (within 3%) go to the "
    "simpler config: no speculation, then no drafter model, then the smaller N. Arms are compared prompt by prompt when runs hold "
    "per-request records (paired), else by run totals (unpaired). Noise: launch-to-launch spread from repeated launches (the "
    "baseline's bracket counts as one) with a 7% prior worth 4 launches, and within-run noise from repeated prompts. Only arms "
    "meeting the p99 latency target compete when one is set.",
]


@dataclass
class ReportContent:
    title: str
    facts: list[tuple[str, str]]
    verdict: list[str]
    spec_json: str | None  # `--speculative-config '<json>'`, quoted for a shell
    command: str | None
    schedule: list[list[int]] | None
    columns: list[str]
    rows: list[list[str]]
    prediction_note: str
    throughput_series: list[ThroughputSeries] = field(default_factory=list)
    baseline_tps: float | None = None
    acceptance: list[tuple[str, list[float]]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    serve_params_json: str = ""
    bench_command: str = ""
    how_to_read: list[str] = field(default_factory=lambda: list(HOW_TO_READ))
    pareto_series: list[ParetoSeries] = field(default_factory=list)  # per configuration: (total tok/s, per-user tok/s, c)
    latency: dict[str, list[tuple[str, LatencyQuantiles]]] = field(default_factory=dict)  # "TTFT"/"TPOT" -> rows
    capacity_answer: str | None = None
    capacity_target: tuple[str, float | None] = ("TPOT", None)
    capacity_series: list[GoodputSeries] = field(default_factory=list)
    capacity_rows: list[list[str]] = field(default_factory=list)
    provenance: list[tuple[str, str]] = field(default_factory=list)  # where and how it was measured
    serve_argv: list[tuple[str, str]] = field(default_factory=list)  # (arm, exact server command line)
    gpu_columns: list[str] = field(default_factory=lambda: list(GPU_COLUMNS))
    gpu_rows: list[list[str]] = field(default_factory=list)  # one per arm with GPU telemetry
    gpu_series: list[tuple[str, list[GpuReading]]] = field(default_factory=list)  # (arm label, readings) for the charts
    left_out: str = ""  # a summarised report (over MAX_REPORT_ARMS arms): what the results table leaves out
    model_note: str | None = None  # an imported session's commands serve the placeholder MODEL: what it stands for
    decide: DecidingStep | None = None  # undecided: the step that would decide it, in place of a serve command
    tails: list[tuple[str, str]] = field(default_factory=list)  # (arm label, its tail requests) for arms that have some


# A report of more arms than this summarises: every measured arm is analysed (verdict, predictions,
# serve-params), and the results table keeps the baselines, the fastest arms at each concurrency and
# the recommended arm, saying how many it left out. 100,000 table rows help no reader.
MAX_REPORT_ARMS = 1_000
TOP_ARMS_PER_CONCURRENCY = 10
MAX_PROBLEMS = 200
# A verdict's reasons `sessions show` and the TUI's panel list (the report and --json list every one):
# a verdict over 100,000 measured arms has one per arm, which rich took 25 s to print.
MAX_SHOWN_REASONS = 50


def tail_lines(session: Session, arms: list[Arm]) -> list[tuple[str, str]]:
    """(arm label, one line) for each listed arm with tail requests (analysis.tails): how many, how
    slow against its median and the baseline's time on the same prompts, and what they are."""
    found = session_tails(session)
    return [(a.label, found[a.id].text()) for a in arms if a.id in found and found[a.id].tail]


def shown_reasons(session: Session, rec: Recommendation) -> tuple[list[str], str | None]:
    """The first MAX_SHOWN_REASONS reasons, and a line saying how many were left out (None: none)."""
    left = len(rec.reasons) - MAX_SHOWN_REASONS
    more = f"… {left} more reasons: `specadvisor sessions show {session.id[:8]} --json` has them all" if left > 0 else None
    return [reason_under_verdict(r) for r in rec.reasons[:MAX_SHOWN_REASONS]], more


# A level's first reason opens with its decision ("do not speculate here: the best arm ..."), which the
# verdict printed above it already states (each level's, where levels differ): views drop the repeat
# ("Verdict: do not speculate" then "- do not speculate here: ..."); --json keeps the stored text.
_REPEATED_DECISION = re.compile(r"^(at concurrency \d+: )?(?:do not speculate here|undecided): ")


def reason_under_verdict(reason: str) -> str:
    """`reason` as listed under the verdict's headline: without the decision the headline states."""
    return _REPEATED_DECISION.sub(r"\1", reason, count=1)


def build(session: Session) -> ReportContent:
    if len(session.arms) <= MAX_REPORT_ARMS:
        return _build(session, shown=None)
    measured_ids = {r.arm_id for r in session.results}
    rec_id = session.recommendation.arm_id if session.recommendation else None
    analysed = session.model_copy(update={"arms": [a for a in session.arms if a.id in measured_ids or a.is_baseline or a.id == rec_id]})
    shown = top_arms(analysed, TOP_ARMS_PER_CONCURRENCY)
    content = _build(analysed, shown=shown)
    never_run = len(session.arms) - len(analysed.arms)
    content.left_out = (
        f"This session holds {len(session.arms)} arms; the table shows {len(shown)}: the baselines, the {TOP_ARMS_PER_CONCURRENCY} "
        f"fastest measured arms at each concurrency and the recommended arm. Left out: {len(analysed.arms) - len(shown)} other measured "
        f"arm(s) and {never_run} arm(s) never run (not analysed, no prediction drawn). The verdict, predictions and serve-params cover "
        f"every measured arm; `specadvisor sessions show {session.id[:8]} --json` lists every arm."
    )
    return content


def top_arms(session: Session, per_concurrency: int) -> set[str]:
    """Ids of the baselines, the `per_concurrency` measured speculative arms with the highest output
    tok/s at each concurrency, and the recommended arm: what a summarised report tabulates."""
    results = measured(session)
    by_level: dict[int, list[tuple[float, int, str]]] = {}
    for position, arm in enumerate(session.arms):
        tps = throughput(results.get(arm.id))
        if not arm.is_baseline and tps is not None:
            by_level.setdefault(arm.concurrency, []).append((-tps, position, arm.id))
    shown = {a.id for a in session.arms if a.is_baseline}
    for ranked in by_level.values():
        shown.update(arm_id for _, _, arm_id in sorted(ranked)[:per_concurrency])
    if session.recommendation is not None and session.recommendation.arm_id:
        shown.add(session.recommendation.arm_id)
    return shown


def tabled_arms(session: Session) -> tuple[list[Arm], str]:
    """The arms a per-arm table lists (`sessions show`, the TUI's results view) and, for a session
    over the report's row cap, the line saying what it left out: the report's own summary (the
    baselines, the fastest measured arms at each concurrency, the recommended arm). `--json` always
    lists every arm."""
    if len(session.arms) <= MAX_REPORT_ARMS:
        return session.arms, ""
    shown = top_arms(session, TOP_ARMS_PER_CONCURRENCY)
    measured_count = len({r.arm_id for r in session.results} & {a.id for a in session.arms})
    tabled = [arm for arm in session.arms if arm.id in shown]
    left_out = (
        f"This session holds {len(session.arms)} arms ({measured_count} measured); the table shows {len(tabled)}: the baselines, the "
        f"{TOP_ARMS_PER_CONCURRENCY} fastest measured arms at each concurrency and the recommended arm. Left out: "
        f"{len(session.arms) - len(tabled)} arm(s); `specadvisor sessions show {session.id[:8]} --json` lists every arm."
    )
    return tabled, left_out


def _build(session: Session, shown: set[str] | None) -> ReportContent:
    """The report of `session`; with `shown`, the per-arm tables and charts keep only those arms."""
    rec = session.recommendation or recommend(session)
    fitted = predict_throughput(session)  # once: the table's, the error note's and the withheld ones'
    preds = confident_predictions(session, fitted)
    results = measured(session)
    s = session.settings
    facts = [
        ("session", session.id),
        ("model", session.model),
        ("drafter", session.drafter or "-"),
        ("hardware", session.hardware.gpu_label + (" (hypothetical)" if session.hardware.hypothetical else "")),
        ("vLLM", session.vllm_version or "unknown"),
        (
            "workload",
            f"{recorded(session, 'workload', session.workload.value)}: {recorded(session, 'prompt_source', s.prompt_source)}, {s.num_prompts} prompts, "
            f"output {recorded(session, 'output_len', str(s.output_len))} tokens, temperature {recorded(session, 'temperature', f'{s.temperature:g}')}, "
            f"concurrency {','.join(map(str, s.concurrency))}, {s.trials} trial(s), {recorded(session, 'warmup', str(s.warmup))} warmup request(s)",
        ),
        ("request format", recorded(session, "request_format", request_format.recorded(s.request_format, s.prompt_source))),
        ("status", session.status),
        ("created", session.created_at.strftime("%Y-%m-%d %H:%M UTC")),
    ]
    if session.provenance.origin == "imported":
        facts.append(("imported from", session.provenance.imported_from or "a bundle"))
    if s.slo_tpot_ms or s.slo_ttft_ms:
        facts.append(("latency target", f"p99 TPOT <= {s.slo_tpot_ms} ms; p99 TTFT <= {s.slo_ttft_ms} ms"))
    facts += schedule_facts(session, rec)
    verdict = [f"verdict: {rec.headline}", *map(reason_under_verdict, rec.reasons)]
    spec_cfg = recommended_config(session, rec)  # an imported session's through the allow-list
    decide = deciding_step(session, rec)
    rows, problems = [], []
    speedups = all_speedups(session)  # the verdict's own figures
    tabled = [a for a in session.arms if shown is None or a.id in shown]
    for arm in tabled:
        r = session.result_for(arm.id)
        p = preds.get(arm.id)
        rows.append(_row(arm.label, r, p, speedups.get(arm.id)))
    for arm in session.arms:
        r = session.result_for(arm.id)
        if r is not None and r.error:
            problems.append(f"{arm.label}: {r.error}")
        for w in r.warnings if r else []:
            problems.append(f"{arm.label}: {w}")
    if len(problems) > MAX_PROBLEMS:
        problems = [*problems[:MAX_PROBLEMS], f"... and {len(problems) - MAX_PROBLEMS} more (see `specadvisor sessions show {session.id[:8]} --json`)"]
    mae = mean_abs_error_pct(session, predictions=fitted)
    note = "no arm has both a prediction and a measurement yet" if mae is None else f"mean absolute prediction error over measured arms: {mae:.1f}%"
    withheld = withheld_predictions(session, fitted)
    if withheld:
        labels = {a.id: a.label for a in session.arms}
        note += "; withheld: " + "; ".join(f"{labels.get(k, k)}: {why}" for k, why in withheld.items())
    return ReportContent(
        title=f"Speculative decoding sweep: {session.model}",
        facts=facts,
        verdict=verdict,
        spec_json=shell_command(["--speculative-config", spec_config_json(spec_cfg)]) if spec_cfg else None,
        # a serve command only for an answer: undecided is not "do not speculate", it names the step that would decide it
        command=recommended_command(session, rec, width=PASTE_WIDTH) if spec_cfg else None if decide else serve_command(session, None, width=PASTE_WIDTH),
        decide=decide,
        tails=tail_lines(session, tabled),
        schedule=rec.batch_size_schedule,
        columns=COLUMNS,
        rows=rows,
        prediction_note=note,
        throughput_series=_series(session, preds, results),
        baseline_tps=_baseline(session),
        acceptance=[(a.label, results[a.id].per_position_acceptance) for a in tabled if a.id in results and results[a.id].per_position],
        problems=problems,
        serve_params_json=json.dumps(serve_params(session), indent=2),
        bench_command=bench_sweep_command(session, "serve_params.json", width=PASTE_WIDTH),
        pareto_series=_pareto(session, results),
        latency=_latency(session, results, tabled),
        provenance=provenance_facts(session),
        serve_argv=serve_argv_lines(session),
        gpu_rows=[_gpu_row(a.label, t) for a in tabled if (t := _telemetry(session, a.id)) is not None],
        gpu_series=[(a.label, t.samples) for a in tabled if (t := _telemetry(session, a.id)) is not None],
        model_note=placeholder_note(session),
        **_capacity(session),
    )


def _pareto(session: Session, results: dict[str, ArmResult]) -> list[ParetoSeries]:
    """One line per configuration across its concurrencies: per-user speed is 1000 / median TPOT
    (what one stream sees), total is the arm's output tok/s."""
    families: dict[str, ParetoSeries] = {}
    for arm in session.arms:
        r = results.get(arm.id)
        if r is None or not r.output_throughput:
            continue
        per_user = 1000.0 / r.tpot_ms.median if r.tpot_ms.median else r.output_throughput / max(1, arm.concurrency)
        key = family_key(arm)
        if key not in families:  # the label once per family, not once per arm
            families[key] = {"label": arm_label(arm, session.model, with_concurrency=False), "points": []}
        families[key]["points"].append((r.output_throughput, per_user, arm.concurrency))
    return list(families.values())


def _latency(session: Session, results: dict[str, ArmResult], arms: list[Arm]) -> dict[str, list[tuple[str, LatencyQuantiles]]]:
    out: dict[str, list[tuple[str, LatencyQuantiles]]] = {"TTFT": [], "TPOT": []}
    for arm in arms:
        r = results.get(arm.id)
        if r is None:
            continue
        for metric, stats in (("TTFT", r.ttft_ms), ("TPOT", r.tpot_ms)):
            if stats.p99 is not None:
                out[metric].append((arm_label(arm, session.model), {"median": stats.median, "p90": stats.p90, "p99": stats.p99}))
    return out


def _capacity(session: Session) -> dict[str, Any]:
    """The goodput answer, its chart series and a table of every rate measured (capacity sweeps)."""
    from specadvisor.analysis.capacity import capacity_answer

    measured = [(a, r) for a in session.arms if (r := session.result_for(a.id)) is not None and r.rate_points]
    if not measured:
        return {}
    s = session.settings
    metric, target = ("TPOT", s.slo_tpot_ms) if s.slo_tpot_ms is not None else ("TTFT", s.slo_ttft_ms)
    series: list[GoodputSeries] = []
    rows: list[list[str]] = []
    for arm, r in measured:
        label = arm_label(arm, session.model)
        points = [(p.rate, p.tpot_p99_ms if metric == "TPOT" else p.ttft_p99_ms, p.meets_slo) for p in r.rate_points]
        series.append({"label": label, "points": points, "goodput": r.goodput_rps})
        for p in sorted(r.rate_points, key=lambda p: p.rate):
            rows.append([label, f"{p.rate:.2f}", f"{p.achieved_rate:.2f}" if p.achieved_rate else "-", str(p.completed),
                         f"{p.tpot_p99_ms:.0f}" if p.tpot_p99_ms is not None else "-", f"{p.ttft_p99_ms:.0f}" if p.ttft_p99_ms is not None else "-",
                         "meets" if p.meets_slo else "breaks"])  # fmt: skip
    return {"capacity_answer": capacity_answer(session), "capacity_target": (metric, target), "capacity_series": series, "capacity_rows": rows}


CAPACITY_COLUMNS = ["arm", "offered req/s", "achieved req/s", "requests", "p99 TPOT ms", "p99 TTFT ms", "target"]


GPU_COLUMNS: list[str] = [
    "arm",
    "GPUs",
    "mean power W",
    "energy J",
    "J per output token",
    "SM clock MHz start→end",
    "temperature °C start→end",
    "power cap W",
    "peak memory MiB",
]


def _telemetry(session: Session, arm_id: str) -> GpuTelemetry | None:
    result = session.result_for(arm_id)
    return result.telemetry if result is not None and result.telemetry is not None else None


def _gpu_row(label: str, t: GpuTelemetry) -> list[str]:
    def pair(attr: str) -> str:
        start = ",".join(f"{getattr(s, attr):.0f}" for s in t.start if getattr(s, attr) is not None) or "?"
        end = ",".join(f"{getattr(s, attr):.0f}" for s in t.end if getattr(s, attr) is not None) or "?"
        return f"{start}→{end}"

    peak = max((s.memory_used_mib for s in t.samples if s.memory_used_mib is not None), default=None)
    caps = ",".join(f"{s.power_limit_w:.0f}" for s in t.start if s.power_limit_w is not None) or "-"
    return [
        label,
        ",".join(str(g) for g in t.gpus),
        f"{power:.0f}" if (power := shown_mean_power_w(t)) is not None else "-",
        f"{t.energy_j:.0f}" if t.energy_j is not None else "-",
        f"{t.energy_per_output_token_j:.3g}" if t.energy_per_output_token_j is not None else "-",
        pair("sm_clock_mhz"),
        pair("temperature_c"),
        caps,
        f"{peak:.0f}" if peak is not None else "-",
    ]


def _row(label: str, r: ArmResult | None, p: Prediction | None, speedup: Speedup | None) -> list[str]:
    def num(v: Any, fmt: str = "{:.1f}") -> str:
        return fmt.format(v) if v is not None else "-"

    if r is None:
        return [label, "pending", "-", "-", num(p.predicted_throughput) if p else "-", "-", "-", "-", "-", "-", "-", "-", "-"]
    tps = num(r.output_throughput)
    if r.output_throughput_ci:
        tps += f" ({r.output_throughput_ci[0]:.1f}-{r.output_throughput_ci[1]:.1f})"
    elif r.output_throughput is not None and r.output_throughput_ci_basis.startswith("one trial"):
        tps += " (one trial: no interval)"
    return [
        label,
        r.status.value + (" (imported)" if r.source.startswith("imported") else ""),
        tps,
        speedup.text() if speedup else "-",
        num(p.predicted_throughput) + (f" ±{p.uncertainty_pct:.0f}%" if p.uncertainty_pct else "") if p else "-",
        (f"{p.error_pct:+.1f}%" if p and p.error_pct is not None else ("reference" if p and p.reference else "-")),
        r.achieved_load.short() if r.achieved_load else "-",
        num(r.request_throughput, "{:.2f}"),
        num(r.mean_acceptance_length, "{:.2f}"),
        num(r.acceptance_rate, "{:.1%}"),
        " ".join(f"{x:.0%}" for x in r.per_position_acceptance) or "-",
        num(r.ttft_ms.p99),
        num(r.tpot_ms.p99),
    ]


def _series(session: Session, preds: dict[str, Prediction], results: dict[str, ArmResult]) -> list[ThroughputSeries]:
    conc = session.concurrency if session.concurrency in session.settings.concurrency else session.settings.concurrency[0]
    families: dict[str, ThroughputSeries] = {}
    for arm in session.arms:
        if arm.is_baseline or arm.concurrency != conc or arm.n is None:  # a chart needs N on its x axis
            continue
        fam = families.setdefault(family_key(arm), {"label": family_label(arm), "measured": {}, "predicted": {}})
        if arm.id in results and (tps := results[arm.id].output_throughput) is not None:
            fam["measured"][arm.n] = tps
    for p in preds.values():
        if p.concurrency == conc and p.family in families:
            families[p.family]["predicted"][p.n] = p.predicted_throughput
    return [f for f in families.values() if f["measured"] or f["predicted"]]


def _baseline(session: Session) -> float | None:
    conc = session.concurrency if session.concurrency in session.settings.concurrency else session.settings.concurrency[0]
    return throughput(baseline_result(session, conc))


def schedule_facts(session: Session, rec: Recommendation | None) -> list[tuple[str, str]]:
    """How the arms were run (trials, parallel slots, waves) and how far the baseline drifted."""
    runs = [run for r in session.results for run in r.runs]
    facts: list[tuple[str, str]] = []
    if runs:
        places = sorted({run.placement for run in runs if run.placement})
        waves = max((run.wave or 0 for run in runs), default=0)
        text = _launch_text(session, len(runs), waves)
        if places:
            text += f"; side by side on {', '.join(places)}"
        saved = sum(run.seconds_saved for run in runs)
        if saved:
            text += f"; early stopping saved ~{saved:.0f} s"
        facts.append(("runs", text))
    startup = [f"{r.arm_id} {_secs(r.startup_cold_s)} cold / {_secs(r.startup_warm_s)} warm" for r in session.results if r.startup_cold_s or r.startup_warm_s]
    if startup:
        facts.append(("server start-up", "; ".join(startup) + " (cold: vLLM's compile caches empty for that configuration; shared across arms)"))
    drift = rec.drift if rec is not None else None
    if drift is not None:
        above = " - ABOVE the threshold" if drift.exceeded else ""
        facts.append(
            (
                "baseline drift",
                f"{drift.change * 100:+.1f}% ({drift.first:.1f} -> {drift.last:.1f} tok/s, {drift.measurements} measurements; threshold {drift.threshold * 100:.0f}%){above}",
            )
        )
    return facts


def server_launches(session: Session) -> int:
    """Servers the sweep started: one launch measures every concurrency level of its configuration
    (arms with one server key), so runs sharing a key, trial, role, wave and placement are one launch."""
    arms = {a.id: a for a in session.arms}
    return len(
        {
            (server_key(arms[r.arm_id]) if r.arm_id in arms else r.arm_id, run.trial, run.role, run.wave, run.placement)
            for r in session.results
            for run in r.runs
        }
    )


def _launch_text(session: Session, runs: int, waves: int) -> str:
    if session.settings.endpoint:
        return f"{runs} measurement run(s) against the endpoint (no server launched), trials interleaved"
    launches = server_launches(session)
    per_launch = f" ({runs} runs: every concurrency level measured on each launch)" if runs != launches else ""
    return f"{launches} server launch(es) in {waves} wave(s){per_launch}, trials interleaved"


def _secs(value: float | None) -> str:
    return f"{value:.0f} s" if value is not None else "-"
