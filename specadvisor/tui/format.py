"""Plain-text formatting of domain objects for the TUI's panels and tables (no Textual here).

One place decides how a hardware profile, a model, a candidate or a result reads, so the screens
stay layout-only and the wording is tested without a terminal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from specadvisor import request_format
from specadvisor.domain import (
    ArmResult,
    Candidate,
    HardwareProfile,
    LatencyStats,
    ModelProfile,
    Recommendation,
    Session,
)
from specadvisor.tui.protocols import PlanLike
from specadvisor.vllm_command import shell_command, spec_config_json

if TYPE_CHECKING:
    from specadvisor.app.views import Speedup


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, sec = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {sec:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def rough_duration(seconds: float | None) -> str:
    """An estimate as people say it: 45 s, 12 min, 1 h 36 min (no false precision)."""
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def hardware_lines(hw: HardwareProfile) -> list[str]:
    lines = [f"GPU      {hw.gpu_label}"]
    for gpu in hw.gpus[:4]:
        mem = f"{gpu.memory_total_mib / 1024:.0f} GiB" if gpu.memory_total_mib else "? GiB"
        cc = f", sm {gpu.compute_capability}" if gpu.compute_capability else (f", {gpu.gfx_target}" if gpu.gfx_target else "")
        lines.append(f"  #{gpu.index} {gpu.name} ({mem}{cc})")
    cpu = hw.cpu
    ram = f", {cpu.ram_total_gib:.0f} GiB RAM" if cpu.ram_total_gib else ""
    cores = f", {cpu.cores_logical} threads" if cpu.cores_logical else ""
    lines.append(f"CPU      {cpu.model}{cores}{ram}")
    eng = hw.engine
    if eng.found:
        lines.append(f"vLLM     {eng.version or '?'} ({eng.distribution or 'vllm'}, {eng.platform})")
        if eng.methods:
            lines.append(f"Methods  {', '.join(eng.methods)}")
    else:
        lines.append("vLLM     not found" + (f": {eng.detail}" if eng.detail else ""))
    if hw.hypothetical:
        lines.append("(hypothetical hardware: nothing measured here)")
    return lines


def model_lines(m: ModelProfile) -> list[str]:
    size = f"{m.params_b:g}B params" if m.params_b else "size unknown"
    if m.is_moe and m.active_params_b:
        size += f" ({m.active_params_b:g}B active, MoE)"
    lines = [f"{m.id}  [{m.source}]", f"{m.architecture or m.model_type or 'architecture unknown'}, {size}"]
    if m.mtp.present:
        checked = {True: "weights present", False: "weights MISSING", None: "weights not checked"}[m.mtp.confirmed_by_weights]
        lines.append(f"MTP heads    {m.mtp.layers} ({m.mtp.config_key or 'config'}; {checked})")
    else:
        lines.append("MTP heads    none")
    if m.drafters:
        names = ", ".join(f"{d.drafter} ({d.method})" for d in m.drafters[:3])
        more = f" +{len(m.drafters) - 3} more" if len(m.drafters) > 3 else ""
        lines.append(f"Drafters     {names}{more}")
    else:
        lines.append("Drafters     none published; model-free methods still apply")
    lines.extend(f"! {w}" for w in m.warnings[:3])
    return lines


def speedup_range(rng: tuple[float, float] | None) -> str:
    if not rng:
        return "no published estimate"
    low, high = rng
    return f"{low:.2f}x" if abs(high - low) < 0.005 else f"{low:.2f}-{high:.2f}x"


def candidate_title(rank: int, c: Candidate, model: str | None = None) -> str:
    """Short enough for a narrow panel: rank, display name, short drafter, expected speedup."""
    from specadvisor.app.views import candidate_name, short_drafter

    drafter = short_drafter(c.drafter, model)
    name = candidate_name(c)
    expected = f" · {speedup_range(c.expected_speedup)}" if c.expected_speedup else ""
    return f"#{rank} {name}" + (f" · {drafter}" if drafter else "") + expected


def candidate_details(c: Candidate) -> list[str]:
    ns = ",".join(str(n) for n in c.n_grid)
    lines = [
        f"{c.id} · N {ns} · score {c.score:.2f}" + (f" · drafter {c.drafter}" if c.drafter else ""),
        shell_command(["--speculative-config", spec_config_json(c.speculative_config)]),  # as the CLI prints it: pasteable
    ]
    lines.extend(f"• {r}" for r in c.reasons)
    for ev in c.evidence:
        where = "measured here" if ev.local else ev.source
        stale = " (stale)" if ev.stale else ""
        rng = f" {speedup_range((ev.speedup_low, ev.speedup_high or ev.speedup_low))}" if ev.speedup_low else ""
        lines.append(f"  evidence{rng}: {ev.summary} [{where}{stale}]")
    lines.extend(f"! {w}" for w in c.warnings)
    return lines


def ms(stats: LatencyStats, which: str) -> str:
    value = getattr(stats, which)
    return "-" if value is None else f"{value:.0f}"


def result_row(label: str, res: ArmResult | None, speedup: Speedup | None) -> list[str]:
    """Cells of the results table: arm, status, tok/s (CI), speedup, AL, acc rate, TTFT p50/p99, TPOT p50/p99,
    achieved/asked load."""
    if res is None:
        return [label, "pending"] + ["-"] * 7
    tps = "-"
    if res.output_throughput is not None:
        tps = f"{res.output_throughput:.1f}"
        if res.output_throughput_ci:
            lo, hi = res.output_throughput_ci
            tps += f" ±{(hi - lo) / 2:.1f}"
    speed = speedup.text() if speedup else "-"
    al = f"{res.mean_acceptance_length:.2f}" if res.mean_acceptance_length is not None else "-"
    rate = f"{res.acceptance_rate * 100:.0f}%" if res.acceptance_rate is not None else "-"
    ttft = f"{ms(res.ttft_ms, 'median')}/{ms(res.ttft_ms, 'p99')}"
    tpot = f"{ms(res.tpot_ms, 'median')}/{ms(res.tpot_ms, 'p99')}"
    load = res.achieved_load.short() if res.achieved_load else "-"
    return [label, res.status.value, tps, speed, al, rate, ttft, tpot, load]


# Sessions table columns: (name, width it needs), in the order they are shown; SESSION_PRIORITY says
# which a narrow terminal keeps (toasts name sessions by id, so the id always stays).
SESSION_COLUMNS = (
    ("id", 8), ("name", 22), ("model", 36), ("workload", 8), ("status", 11), ("arms", 4), ("best", 6), ("created (UTC)", 16),
)  # fmt: skip
SESSION_PRIORITY = ("id", "status", "best", "arms", "name", "model", "created (UTC)", "workload")
CELL_PADDING = 2


def session_columns(width: int) -> list[str]:
    """The sessions columns that fit `width` cells, most useful first, shown in table order."""
    widths = dict(SESSION_COLUMNS)
    room = width - 4 - (1 + CELL_PADDING)  # borders and the mark column
    kept: set[str] = set()
    for name in SESSION_PRIORITY:
        need = max(widths[name], len(name)) + CELL_PADDING
        if need <= room or not kept:
            kept.add(name)
            room -= need
    return [name for name, _ in SESSION_COLUMNS if name in kept]


def summary_cells(summary: Any) -> dict[str, str]:
    """A row of the sessions table from a store summary (or a full Session), by column name; the
    free-text columns are cut to their width so one long model path cannot push the rest off screen."""
    created = getattr(summary, "created_at", None)
    created_text = created.strftime("%Y-%m-%d %H:%M") if created else "-"
    best = getattr(summary, "best_speedup", None)
    arms = getattr(summary, "arms", 0)
    if isinstance(arms, list):
        arms = len(arms)
    widths = dict(SESSION_COLUMNS)

    def cut(text: str, width: int) -> str:
        return text if len(text) <= width else text[: width - 1] + "…"

    def cut_left(text: str, width: int) -> str:  # a model path's end names it; its start is a folder
        return text if len(text) <= width else "…" + text[-(width - 1) :]

    sid = str(getattr(summary, "id", ""))
    return {
        "id": sid[:8],
        "name": cut(str(getattr(summary, "name", "") or sid[:8]), widths["name"]),
        "model": cut_left(str(getattr(summary, "model", "")), widths["model"]),
        "workload": str(getattr(getattr(summary, "workload", ""), "value", getattr(summary, "workload", ""))),
        "status": str(getattr(summary, "status", "")),
        "arms": str(arms),
        "best": f"{best:.2f}x" if isinstance(best, (int, float)) else "-",
        "created (UTC)": created_text,
    }


def live_arm_lines(row: Any, width: int = 60, now: float | None = None) -> list[str]:
    """What one running arm shows in the live view: phase and throughput (while starting, the server's last
    start-up message) with its sparkline, latency percentiles so far, acceptance per position with its 95%
    interval, GPU readings when recorded."""
    from specadvisor.app.views import arm_label
    from specadvisor.charts import sparkline

    phase = row.phase_text(now) if hasattr(row, "phase_text") else row.phase
    head = f"{arm_label(row.arm)} · {phase}"
    if row.throughput:
        head += f" · {row.throughput:.1f} tok/s"
    lines = [head]
    if row.phase == "starting" and getattr(row, "last_line", ""):  # the start-up's last message, whole (app.live.startup_message)
        lines.append(f"  {row.last_line}")
    if row.history:
        lines.append(f"  tok/s {sparkline(list(row.history), max(8, width - 10))}")
    lat = row.latency
    if lat:

        def pair(p50: str, p99: str) -> str:
            a, b = lat.get(p50), lat.get(p99)
            return "-" if a is None else f"{a:.0f}/{b:.0f} ms"

        lines.append(f"  TTFT p50/p99 {pair('ttft_p50_ms', 'ttft_p99_ms')} · TPOT p50/p99 {pair('tpot_p50_ms', 'tpot_p99_ms')}")
    acc = row.live_acceptance
    if acc is not None and acc.per_position:
        cells = []
        for p in acc.per_position[:8]:
            ci = f" [{p.ci_low * 100:.0f}-{p.ci_high:.0%}]" if p.ci_low is not None and p.ci_high is not None else ""
            cells.append(f"{p.position + 1}:{p.rate:.0%}{ci}")
        more = f" +{len(acc.per_position) - 8}" if len(acc.per_position) > 8 else ""
        lines.append("  accepted " + "  ".join(cells) + more + (f" · AL {acc.mean_length:.2f}" if acc.mean_length else ""))
    gpu = gpu_line(getattr(row.result, "telemetry", None) if row.result else getattr(row, "telemetry", None))
    if gpu:
        lines.append("  " + gpu)
    return lines


def gpu_line(telemetry: Any) -> str:
    """GPU memory, utilization and power from the last reading per GPU (prov's GpuTelemetry); "" without."""
    samples = list(getattr(telemetry, "samples", None) or [])
    if not samples:
        return ""
    last: dict[int, Any] = {}
    for reading in samples:
        last[getattr(reading, "gpu", 0)] = reading
    parts = []
    for gpu, r in sorted(last.items()):
        bits = []
        if getattr(r, "memory_used_mib", None) is not None:
            bits.append(f"{r.memory_used_mib / 1024:.1f} GiB")
        if getattr(r, "utilization_pct", None) is not None:
            bits.append(f"{r.utilization_pct:.0f}%")
        if getattr(r, "power_w", None) is not None:
            bits.append(f"{r.power_w:.0f} W")
        if bits:
            parts.append(f"GPU{gpu} " + " ".join(bits))
    return " · ".join(parts)


def verdict_headline(rec: Recommendation, arm_label: str | None, speedup: str = "") -> str:
    """The first line of the Results panel: the one verdict (analysis.decision), in the TUI's words."""
    decision = rec.decision
    if decision in ("speculate", "depends on concurrency") or (not decision and rec.arm_id and not rec.do_not_speculate):
        head = f"Speculate: {arm_label or rec.arm_id}{f' ({speedup})' if speedup else ''}"
        return head if decision != "depends on concurrency" else f"Depends on concurrency: {rec.verdict}"
    if decision == "do not speculate" or (not decision and rec.do_not_speculate):
        return "Do NOT speculate here (why below)."
    if decision == "undecided":
        return "Undecided: " + rec.verdict.removeprefix("undecided ")
    return rec.headline


def workload_tag(session: Session) -> str:
    """`code (chat)`: the workload and how its prompts were sent, as the header shows them."""
    return f"{session.workload.value} ({request_format.short(session.settings.request_format, session.settings.prompt_source)})"


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 arm`, `3 arms`, `1 launch`, `2 launches`."""
    return f"{count} {word if count == 1 else many or word + 's'}"


def plan_estimate_lines(plan: PlanLike) -> list[str]:
    """The plan panel's summary: arms and launches, the time estimate against the budget, where the
    figures come from, what the budget left out (by how much it is over: over_budget_line, at the top)."""
    s = plan.session.settings
    arms = len(plan.session.arms)
    launches = plan.launches()
    budget = plan.budget_s
    lines = [
        f"{plural(arms, 'arm')} · {plural(launches, 'launch', 'launches')} · {s.num_prompts} req × {s.output_len} tok"
        + (f" · {s.parallel_choice} at once" if s.parallel_choice != "auto" else ""),
        f"about {rough_duration(plan.estimate_seconds())}" + (f" (plan within {rough_duration(budget)})" if budget else ""),
    ]
    left_out = plan.left_out
    if left_out:
        lines.append("left out for time: " + ", ".join(left_out) + " (a adds N)")
    source = plan.estimate_source
    if source:  # last: the first line a short panel hides
        lines.append(f"from {source}")
    return lines


def over_budget_line(plan: PlanLike) -> str:
    """`over 1 min by 2 min: b allows more time, d removes arms`, or "" within the time (the plan panel's
    top lines show it with what will not fit: a short panel cuts its bottom first)."""
    over = plan.over_budget_s()
    return f"over {rough_duration(plan.budget_s)} by {rough_duration(over)}: b allows more time, d removes arms" if over else ""


def plan_warnings(plan: PlanLike) -> list[str]:
    """What Start must ask about: arms that will not fit this host, an estimate over the budget."""
    warnings = [f"memory: {w}" for w in plan.host_warnings]
    over = plan.over_budget_s()
    if over:
        warnings.append(
            f"time: about {rough_duration(plan.estimate_seconds())}, over the {rough_duration(plan.budget_s)} to plan within by {rough_duration(over)}"
        )
    return warnings
