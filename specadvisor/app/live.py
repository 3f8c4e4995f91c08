"""The live sweep model: plain data folded from the runner's event stream.

Both front ends render it: the TUI's sweep screen and the headless CLI's live view
(specadvisor.cli.live_view), so they cannot show different numbers. No Textual or rich here: what
the user sees during a sweep is tested by feeding events, and memory stays bounded however many
requests a sweep sends (the log is a ring buffer; Progress events only overwrite counters).
"""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from specadvisor.analysis.arms import arm_label, server_key
from specadvisor.charts import ThroughputPoint
from specadvisor.domain import (
    Arm,
    ArmFailed,
    ArmFinished,
    ArmQueued,
    ArmResult,
    ArmStatus,
    DownloadProgress,
    GpuMemoryWait,
    MeasurementWarning,
    MetricsSampled,
    Progress,
    Recommendation,
    ServerLog,
    ServerReady,
    ServerStarting,
    SweepEvent,
    SweepFinished,
    SweepSettings,
    WarmupStarted,
)
from specadvisor.figures import Acceptance, acceptance
from specadvisor.redact import redact_argv, redact_text

LOG_LINES_KEPT = 2000
HISTORY_KEPT = 120  # throughput readings per arm for its sparkline (about two minutes at one a second)
LIVE_PHASES = ("starting", "ready", "warmup", "measuring")
WARNINGS_KEPT = 200

# A vLLM log record: `(EngineCore_DP0 pid=12) INFO 12-03 23:43:21 [core.py:133] Initializing a V1 LLM engine ...`
# (the process tag, the date and the source are optional); a tqdm bar: `Loading safetensors checkpoint shards:  50% Completed | 1/2 [...]`.
_RECORD = re.compile(
    r"^(?:\([\w.-]+ pid=\d+\)\s+)?(?P<level>INFO|ERROR|CRITICAL|WARNING|DEBUG)\s+(?:\d\d-\d\d\s+\d\d:\d\d:\d\d(?:\.\d+)?\s+)?(?:\[[^\]]*\] ?)?(?P<message>.*)$"
)
_BAR = re.compile(r"^(?:\([\w.-]+ pid=\d+\)\s+)?(?P<what>[A-Z][\w ,()/-]*?):\s+(?P<percent>\d{1,3})%[^|]*\|(?:[^|]*\|)?\s*(?:(?P<done>\d+)/(?P<total>\d+))?")
_NOT_STARTUP = ("Route: ", "Available routes", "non-default args", "Final IR op priority")
_LOGO = re.compile(r"[█▄▀]")


def startup_message(line: str) -> str | None:
    """What a server log line says about the start-up, as a whole sentence the live views can show, or None
    for a line that says nothing by itself: a record's message without its process tag, level, time and
    source (`Initializing a V1 LLM engine ...`), a progress bar as `Loading safetensors checkpoint shards 50% (1/2)`;
    None for the rest: a Python warning's echo (`  warnings.warn(`), a traceback, a record's continuation
    lines, the banner, the route list, debug and warning records (the log keeps them all)."""
    text = line.rsplit("\r", 1)[-1].strip() if "\r" in line else line  # a tqdm bar redraws itself after \r
    bar = _BAR.match(text)
    if bar:
        count = f" ({bar['done']}/{bar['total']})" if bar["done"] else ""
        return f"{bar['what']} {bar['percent']}%{count}"
    record = _RECORD.match(text)
    if record is None or record["level"] in ("DEBUG", "WARNING"):
        return None
    message = record["message"].rstrip()
    if not message or message[0].isspace() or message.endswith(":") or _LOGO.search(message):  # a continuation, the banner, a heading
        return None
    if message.startswith(_NOT_STARTUP):
        return None
    return message


_STATUSES = frozenset(status.value for status in ArmStatus)

STATUS_ICONS = {
    ArmStatus.pending: "·",
    ArmStatus.running: "▶",
    ArmStatus.ok: "✔",
    ArmStatus.failed: "✘",
    ArmStatus.stopped_early: "■",
    ArmStatus.skipped: "↷",
}


@dataclass
class ArmRow:
    arm: Arm
    status: ArmStatus = ArmStatus.pending
    phase: str = "queued"  # queued | starting | warmup | measuring | done | failed
    completed: int = 0
    total: int = 0
    throughput: float | None = None
    in_flight: int | None = None  # live: requests sent and not finished, against arm.concurrency
    result: ArmResult | None = None
    # live figures of this arm (several arms run at once in a parallel sweep)
    history: deque[float] = field(default_factory=lambda: deque(maxlen=HISTORY_KEPT))  # tok/s over time
    latency: dict[str, float | None] = field(default_factory=dict)  # ttft_p50_ms, ttft_p99_ms, tpot_p50_ms, tpot_p99_ms
    live_acceptance: Acceptance | None = None  # per position with Wilson intervals, from the arm's last scrape
    runs_done: int = 0  # measurements finished (trials, the bracket re-run): each is a share of the bar
    runs_expected: int = 1  # trials, plus one for a baseline the sweep re-measures at the end
    started_at: float | None = None  # clock reading when this launch's server started (elapsed while starting)
    last_line: str = ""  # the server log's last start-up message (startup_message): what a long start-up is doing
    rerun: str = ""  # "bracket re-run" or "trial 2": this row is a re-run of the arm (its own row beside the arm's)

    def phase_text(self, now: float | None = None) -> str:
        """The phase as the user reads it: `starting 42 s`, `warmup`, `measuring 3/8`, with a re-run named."""
        text = self.phase
        if self.phase == "starting" and self.started_at is not None and now is not None:
            text = f"starting {max(0, now - self.started_at):.0f} s"
        elif self.phase == "measuring" and self.total:
            text = f"measuring {self.completed}/{self.total}"
        if self.rerun and self.phase in LIVE_PHASES:
            text = f"{self.rerun}: {text}"
        return text

    @property
    def label(self) -> str:
        """The arm's one label, a re-run's row with its run named: `baseline · bracket`, `n-gram N=4 · trial 2`."""
        run = self.rerun.removesuffix(" re-run")
        return f"{short_label(self.arm)} · {run}" if run else short_label(self.arm)

    def load_text(self) -> str:
        """The load check: live "3/4 in flight" while measuring, then the achieved/asked figure."""
        if self.phase == "measuring" and self.in_flight is not None:
            return f"{self.in_flight}/{self.arm.concurrency} in flight"
        if self.result is not None and self.result.achieved_load is not None:
            return self.result.achieved_load.short()
        return ""


@dataclass
class SweepState:
    """Everything the live sweep screen shows; `apply` returns which parts changed."""

    arms: dict[str, ArmRow] = field(default_factory=dict)
    # a re-run of an arm (a trial on a fresh server, the baseline's bracket) is a row of its own, so the arm's
    # row keeps what its first run measured; keyed "<arm id> · <run>", in the order they started
    reruns: dict[str, ArmRow] = field(default_factory=dict)
    measuring_again: dict[str, str] = field(default_factory=dict)  # arm id -> the key of its re-run row in progress
    current: str | None = None
    rates: list[float] = field(default_factory=list)  # per-position acceptance of the last speculative arm measured
    mean_acceptance_length: float | None = None
    rates_arm: str | None = None  # whose acceptance `rates` shows (a baseline re-run keeps the last speculative one)
    log: deque[tuple[str, str]] = field(default_factory=lambda: deque(maxlen=LOG_LINES_KEPT))
    warnings: deque[str] = field(default_factory=lambda: deque(maxlen=WARNINGS_KEPT))
    finished: bool = False
    recommendation: Recommendation | None = None
    events_seen: int = 0
    log_count: int = 0  # lines ever logged; with the ring buffer, tells a view which lines are new
    downloads: dict[str, DownloadProgress] = field(default_factory=dict)  # pre-download, per checkpoint
    clock: Callable[[], float] = time.monotonic  # elapsed start-up time is read against it (tests pass their own)

    def new_log_lines(self, already_shown: int) -> list[tuple[str, str]]:
        """Lines logged since a view showed `already_shown` of them (those still in the buffer)."""
        fresh = min(self.log_count - already_shown, len(self.log))
        return list(self.log)[len(self.log) - fresh :] if fresh > 0 else []

    def _log(self, arm_id: str, line: str) -> None:
        self.log.append((arm_id, redact_text(line)))
        self.log_count += 1

    def _warn(self, text: str) -> None:
        """Every line the views show passes the one redaction first: a failure may quote an
        endpoint's answer, and the live table shows it before the store ever sees it."""
        self.warnings.append(redact_text(text))

    def add_arms(self, arms: list[Arm], settings: SweepSettings | None = None) -> None:
        """Rows for the plan's arms; with the settings, each arm's share of the bar counts its trials
        and the baseline's end-of-sweep bracket re-run (the scheduler's rule: a baseline and another configuration)."""
        for arm in arms:
            self.arms.setdefault(arm.id, ArmRow(arm=arm))
        if settings is None:
            return
        bracket = settings.bracket and any(a.is_baseline for a in arms) and len({server_key(a) for a in arms}) > 1
        for arm in arms:
            self.arms[arm.id].runs_expected = max(1, settings.trials) + (1 if bracket and arm.is_baseline else 0)

    def apply(self, event: SweepEvent) -> set[str]:
        """Fold one SweepEvent in; the returned names ("queue", "progress", "chart", "log",
        "warnings", "throughput", "done") tell the screen what to redraw."""
        self.events_seen += 1
        if isinstance(event, ArmQueued):
            self.add_arms([event.arm])
            return {"queue"}
        if isinstance(event, ServerStarting):
            for member in self._server_group(self._row(event.arm_id)):
                if member.runs_done:  # measured before: this launch measures it again, on a row of its own
                    last = member.runs_done >= member.runs_expected - 1 and member.arm.is_baseline and member.runs_expected > 1
                    rerun = "bracket re-run" if last else f"trial {member.runs_done + 1}"
                    if f"{member.arm.id} · {rerun}" in self.reruns:  # measured again after its bracket (a confirmation)
                        rerun = f"run {member.runs_done + 1}"
                    key = f"{member.arm.id} · {rerun}"
                    self.reruns[key] = ArmRow(arm=member.arm, rerun=rerun)
                    self.measuring_again[member.arm.id] = key
            row = self._live(event.arm_id)
            row.status, row.phase = ArmStatus.running, "starting"
            row.started_at, row.last_line, row.completed, row.total = self.clock(), "", 0, 0
            self.current = event.arm_id
            if not row.arm.is_baseline:  # a baseline (or its bracket re-run) drafts nothing: keep what was measured
                self.rates, self.mean_acceptance_length, self.rates_arm = [], None, event.arm_id
            self._log(event.arm_id, "$ " + " ".join(redact_argv(list(event.command))))
            return {"queue", "progress", "chart", "log"}
        if isinstance(event, ServerLog):
            self._log(event.arm_id, event.line)
            message = startup_message(self.log[-1][1])  # the redacted line
            if message is not None and event.arm_id in self.arms:
                self._live(event.arm_id).last_line = message
                return {"log", "progress", "live"}
            return {"log"}
        if isinstance(event, ServerReady):
            self._live(event.arm_id).phase = "ready"
            self._log(event.arm_id, f"server ready in {event.startup_s:.0f} s")
            return {"queue", "progress", "log"}
        if isinstance(event, WarmupStarted):
            self._live(event.arm_id).phase = "warmup"
            return {"queue", "progress"}
        if isinstance(event, Progress):
            row = self._live(event.arm_id)
            row.status, row.phase = ArmStatus.running, "measuring"
            row.completed, row.total = event.completed, event.total
            if event.output_throughput is not None:
                row.throughput = event.output_throughput
                row.history.append(event.output_throughput)
            for key in ("ttft_p50_ms", "ttft_p99_ms", "tpot_p50_ms", "tpot_p99_ms"):
                value = getattr(event, key, None)
                if value is not None:
                    row.latency[key] = value
            row.in_flight = event.in_flight
            self.current = event.arm_id
            return {"progress", "queue", "live"}
        if isinstance(event, MetricsSampled):
            return self._sample(event)
        if isinstance(event, GpuMemoryWait):
            row = self._live(event.arm_id)
            row.phase = f"waiting for GPU memory {event.waited_s:.0f}/{event.timeout_s:.0f} s"
            self._log(event.arm_id, f"waiting for GPU memory: {', '.join(event.holders) or 'no process listed'}")
            return {"queue", "progress", "log"}
        if isinstance(event, MeasurementWarning):
            where = f"[{self._label(event.arm_id)}] " if event.arm_id else ""
            self._warn(where + event.message)
            return {"warnings"}
        if isinstance(event, (ArmFinished, ArmFailed)):
            return self._finish(event.result)
        if isinstance(event, DownloadProgress):
            return self._download(event)
        if isinstance(event, SweepFinished):
            self.finished, self.recommendation, self.current = True, event.recommendation, None
            self._show_recommended()
            return {"done", "queue", "progress", "chart"}
        return set()

    # ------------------------------------------------------------------ queries the screen renders

    def progress_fraction(self) -> float:
        """Share of the sweep's measurements done (each arm's trials and the baseline's bracket re-run
        count), with the requests finished in the arms measuring now. It reads 100% only once the
        sweep has finished: a re-run or a skipped arm is never shown as the end."""
        if self.finished:
            return 1.0
        if not self.arms:
            return 0.0
        expected = sum(max(r.runs_expected, r.runs_done) for r in self.arms.values())
        done = sum(r.runs_done for r in self.arms.values())
        partial = sum(r.completed / r.total for _, r in self.rows() if r.phase == "measuring" and r.total)
        return min(0.99, (done + partial) / expected)

    def rows(self) -> list[tuple[str, ArmRow]]:
        """Every row a live table shows, by key: each arm's (its first run) in plan order, then each re-run
        (trial 2, the baseline's bracket) as it started, so a re-run never overwrites what a run measured."""
        return [*self.arms.items(), *self.reruns.items()]

    def running(self) -> list[ArmRow]:
        """Rows whose server is up or coming up, in plan order (one, or several in a parallel sweep)."""
        return [r for _, r in self.rows() if r.phase in LIVE_PHASES]

    def current_row(self) -> ArmRow | None:
        """The row of the run measured now (a re-run's own row while the arm is measured again)."""
        return self._live(self.current) if self.current in self.arms else None

    def results(self) -> list[ArmResult]:
        return [r.result for r in self.arms.values() if r.result is not None]

    def throughput_points(self, predicted: dict[str, float] | None = None) -> list[ThroughputPoint]:
        """Baseline first, then speculative arms by method and N, predictions (by arm id) beside measurements."""
        results = {r.arm_id: r for r in self.results()}
        predicted = predicted or {}
        ordered = sorted(self.arms.values(), key=lambda r: (not r.arm.is_baseline, r.arm.method or "", r.arm.n or 0))
        points = []
        for row in ordered:
            res = results.get(row.arm.id)
            measured = res.output_throughput if res and res.status == ArmStatus.ok else None
            points.append(
                ThroughputPoint(
                    label=short_label(row.arm),
                    measured=measured,
                    predicted=predicted.get(row.arm.id),
                    ci=res.output_throughput_ci if res else None,
                )
            )
        return points

    # ------------------------------------------------------------------ internals

    def _row(self, arm_id: str) -> ArmRow:
        if arm_id not in self.arms:
            self.arms[arm_id] = ArmRow(arm=Arm(id=arm_id, label=arm_id))
        return self.arms[arm_id]

    def _live(self, arm_id: str) -> ArmRow:
        """The row this arm's events update: its re-run's while it is measured again, else its own."""
        key = self.measuring_again.get(arm_id)
        return self.reruns[key] if key is not None else self._row(arm_id)

    def _label(self, arm_id: str) -> str:
        row = self.arms.get(arm_id)
        return short_label(row.arm) if row else arm_id

    def download_text(self) -> str:
        """One line for the checkpoints still downloading ("" when none is)."""
        active = [d for d in self.downloads.values() if d.status == "downloading"]
        return "; ".join(f"downloading {d.repo_id} {_mb(d.done_bytes)}/{_mb(d.total_bytes or 0)}" for d in active)

    def _download(self, event: DownloadProgress) -> set[str]:
        before = self.downloads.get(event.repo_id)
        self.downloads[event.repo_id] = event
        if event.status == "downloading" and before is not None and before.status == "downloading":
            return {"progress"}  # bytes only: the log gets the start and the end
        what = {"downloading": f"downloading {_mb(event.total_bytes or 0)}", "done": "downloaded", "skipped": "not downloaded", "failed": "download failed"}[
            event.status
        ]
        self._log("download", f"{event.repo_id}: {what}" + (f" ({event.message})" if event.message else ""))
        if event.status == "failed":
            self._warn(f"download of {event.repo_id} failed: {event.message}")
            return {"log", "progress", "warnings"}
        return {"log", "progress"}

    def _sample(self, event: MetricsSampled) -> set[str]:
        s = event.sample
        live = acceptance(s.num_drafts, s.num_draft_tokens, s.num_accepted_tokens, s.accepted_per_position)
        if s.arm_id in self.arms:
            self._live(s.arm_id).live_acceptance = live
        if s.arm_id != self.current and self.current is not None:
            return {"live"}
        if not live.rates:  # no drafts (a baseline): the panel keeps the last speculative arm's figures
            return {"live"}
        self.rates, self.mean_acceptance_length, self.rates_arm = live.rates, live.mean_length, s.arm_id
        return {"chart", "progress", "live"}

    def _show_recommended(self) -> None:
        """After the sweep the acceptance chart shows the recommended arm, not merely the last one."""
        rec = self.recommendation
        row = self.arms.get(rec.arm_id) if rec and rec.arm_id else None
        if row and row.result and row.result.per_position:
            self.rates = row.result.per_position_acceptance
            self.mean_acceptance_length = row.result.mean_acceptance_length
            self.rates_arm = row.arm.id

    def recommended_text(self) -> str:
        """`recommended: n-gram N=2` with the arm's one label (not its id), or the no-speculation verdict."""
        rec = self.recommendation
        if rec is None:
            return ""
        if not rec.arm_id:  # do not speculate, or undecided: the verdict's own headline (analysis.decision)
            return rec.headline or "no speculation"
        row = self.arms.get(rec.arm_id)
        return "recommended: " + (arm_label(row.arm) if row else rec.arm_id)

    def _server_group(self, row: ArmRow) -> list[ArmRow]:
        """The rows one launch measures (arms differing only in client concurrency share a server)."""
        key = server_key(row.arm)
        return [r for r in self.arms.values() if server_key(r.arm) == key]

    def _finish(self, result: ArmResult) -> set[str]:
        """The arm's row takes the arm's result (every run folded: what results() and the charts read); a
        re-run's own row takes its run's status and throughput, and the arm's row keeps its first run's."""
        row = self._row(result.arm_id)
        row.runs_done += 1
        row.result = result.model_copy(update={"error": redact_text(result.error)}) if result.error else result  # shown in the live table
        row.status = result.status
        key = self.measuring_again.pop(result.arm_id, None)
        shown = self.reruns[key] if key is not None else row
        last_run = result.runs[-1] if key is not None and result.runs else None
        status = ArmStatus(last_run.status) if last_run is not None and last_run.status in _STATUSES else result.status
        shown.status, shown.result = status, row.result
        shown.phase = "failed" if status == ArmStatus.failed else "done"
        throughput = last_run.output_throughput if last_run is not None else result.output_throughput
        if throughput is not None:
            shown.throughput = throughput
        if result.per_position:
            self.rates, self.rates_arm = result.per_position_acceptance, result.arm_id
            if result.mean_acceptance_length is not None:
                self.mean_acceptance_length = result.mean_acceptance_length
        for warning in result.warnings:
            self._warn(f"[{shown.label}] {warning}")
        if result.error:
            self._warn(f"[{shown.label}] failed: {result.error}")
        return {"queue", "progress", "chart", "throughput", "warnings"}


def _mb(n: int) -> str:
    return f"{n / 1e9:.2f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB"


def short_label(arm: Arm) -> str:
    """The arm's one label (specadvisor.analysis.arms.arm_label)."""
    return arm_label(arm)
