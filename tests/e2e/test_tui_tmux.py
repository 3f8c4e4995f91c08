"""The real `specadvisor` binary driven as a person uses it: in tmux, keys only, on the real CPU
engine. At 160x48: Setup (fields typed, the focus marker followed), Advice (arms trimmed to the
baseline and one n-gram arm), a short real sweep whose start-up shows its elapsed seconds and whose
bar stays short of 100% until the end, the Results screen. At 80x24: the keys that matter stay in the
footer, the plan shows several rows and its checks (budget, suffix without arctic-inference), Start
asks, Ctrl+A is a text field's line start, Setup plans for a named GPU, Sessions keeps id and status.
Every step is asserted on the captured screen, as the user would read it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (.ci/run installs it)")


ROOT = Path(__file__).resolve().parents[2]


FIELD_LABELS = (
    "Workload", "Prompt set", "Plan for GPU", "Engine command", "Endpoint", "Prompt file", "Request format",
    "Concurrency", "Output tokens", "Temperature", "Requests", "Time limit", "Plan within",
)  # fmt: skip


def flatten(screen: str) -> str:
    """A screen's words without borders or line breaks: what a reader sees, whatever wraps where."""
    return re.sub(r"\s+", " ", re.sub(r"[│╭╮╰╯─▔▁▏]", " ", screen))


class Tmux:
    """A tmux server of the test's own (a private socket in a temp dir, started with `session_env()`
    only), never the default one: a tmux server already running on the machine (a developer's) would
    lend the TUI its own global environment (its SPECADVISOR_HOME, no engine dir), and `$TMUX` would
    point the client at it."""

    def __init__(self, command: list[str], env: dict[str, str], width: int = 120, height: int = 40):
        self.name = f"specadvisor-{uuid.uuid4().hex[:8]}"
        self.folder = Path(tempfile.mkdtemp(prefix="sa-tmux-", dir="/tmp"))  # short: a socket path must fit 107 bytes
        self.socket = self.folder / "socket"
        self.env = env
        wanted = f"{width}x{height}"
        self.run("start-server", ";", "set-option", "-g", "default-size", wanted, ";",
                 "new-session", "-d", "-s", self.name, "-x", str(width), "-y", str(height),
                 "sh", "-c", 'unset COLUMNS LINES; sleep 2; exec "$@"', "sh", *command, check=True)  # fmt: skip
        # (the program starts once the window below has its size: it reads the size when it starts)
        self.run("set-option", "-t", self.name, "window-size", "manual")
        for _ in range(10):
            self.run("resize-window", "-t", self.name, "-x", str(width), "-y", str(height), check=True)
            size = self.run("display", "-p", "-t", self.name, "#{window_width}x#{window_height}").stdout.strip()
            if size == wanted:
                break
            time.sleep(0.3)
        assert size == wanted, f"tmux gave a {size} window"

    def run(self, *args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
        """One tmux command on this test's own server, in its explicit environment (the server that
        the first command starts takes this environment as its global one, and nothing else)."""
        return subprocess.run(["tmux", "-S", str(self.socket), *args], env=self.env, capture_output=True, text=True, check=check)

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.name).stdout

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", self.name, *keys, check=True)

    def type(self, text: str) -> None:
        self.run("send-keys", "-t", self.name, "-l", text, check=True)

    def flat(self) -> str:
        """The screen's words without borders or line breaks: what a reader sees, whatever wraps where."""
        return flatten(self.screen())

    def right_column(self) -> str:
        """The right-hand panel's words, in reading order (two side-by-side panels interleave by line)."""
        return self._column(1)

    def left_column(self) -> str:
        """The left-hand panel's words, in reading order."""
        return self._column(0)

    def _column(self, side: int) -> str:
        parts = [line.split("││", 1)[side] for line in self.screen().splitlines() if "││" in line]
        return flatten(" ".join(parts))

    def wait_for(self, pattern: str, timeout_s: float, what: str) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            text = self.screen()  # one capture, matched and returned: a later one may show another moment
            if re.search(pattern, text) or re.search(pattern, flatten(text)):
                return text
            time.sleep(0.5)
        raise AssertionError(f"timed out waiting for {what} ({pattern!r}); the screen was:\n{self.screen()}")

    def focused_label(self) -> str | None:
        found = re.search(r"▶ (" + "|".join(FIELD_LABELS) + r")\b", self.screen())
        return found.group(1) if found else None

    def focus(self, label: str) -> None:
        """Tab until the ▶ focus marker sits on the field's label, as a person watches the screen: one
        Tab at a time, each waited for (a loaded machine redraws late; queued Tabs would overshoot)."""
        for _ in range(30):
            if self.focused_label() == label:
                time.sleep(0.4)
                if self.focused_label() == label:
                    return
            before = self.focused_label()
            self.keys("Tab")
            deadline = time.monotonic() + 3
            while self.focused_label() == before and time.monotonic() < deadline:
                time.sleep(0.1)
        raise AssertionError(f"could not focus {label}; the screen was:\n{self.screen()}")

    def set_field(self, label: str, value: str) -> None:
        """Clear the field and type the value, then watch the field show it. A person who sees the
        field not showing what they typed types it again: once, after which the test fails (a CI run
        on two loaded cores once lost a short edit typed right after an inline error redrew)."""
        shows = rf"{re.escape(label)}\s+{re.escape(value)}(?!\S)"
        for attempt in (1, 2):
            self.focus(label)
            self.keys("End")
            time.sleep(0.2)
            self.keys("C-u")
            time.sleep(0.2)
            self.type(value)
            try:
                self.wait_for(shows, 10, f"{label} to read {value}")
                return
            except AssertionError:
                if attempt == 2:
                    raise

    def shows_fields(self, **wanted: str) -> None:
        """Every named field reads its value on the screen now (labels with spaces: pass them with _)."""
        flat = self.flat()
        for label, value in wanted.items():
            name = label.replace("_", " ")
            assert re.search(rf"{re.escape(name)}\s+{re.escape(value)}(?!\S)", flat), f"{name} does not read {value}; the screen was:\n{self.screen()}"

    def close(self) -> None:
        self.run("kill-server")
        shutil.rmtree(self.folder, ignore_errors=True)


def plan_rows(screen: str) -> list[str]:
    """The arm labels in the plan panel (right column of the Advice screen)."""
    rows = []
    for line in screen.splitlines():
        cells = re.sub(r"[▁▂▃▄▅▆▇█]+", "", line).split("││")  # a scrollbar's thumb beside a row
        if len(cells) == 2:
            m = re.match(r"\s*(#\d+|\+)?\s+(baseline|[A-Za-z][\w .()-]*? N=\d+(?: · \S+)*)\s*│?$", cells[1])
            if m:
                rows.append(m.group(2).strip())
    return rows


def session_env() -> dict[str, str]:
    """The TUI's whole environment, named here: where the system's programs and this checkout are,
    the test's own SPECADVISOR_HOME, the shared CPU engine, offline Hub, a UTF-8 locale (the screen's
    marks), and the core a test worker pins its servers to. Nothing else of the caller's crosses."""
    env = {k: os.environ[k] for k in ("PATH", "HOME", "USER", "TMPDIR", "VLLM_CPU_OMP_THREADS_BIND") if k in os.environ}
    return {
        **env,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "xterm-256color",
        "PYTHONPATH": str(ROOT),
        "SPECADVISOR_HOME": os.environ["SPECADVISOR_HOME"],  # the test's own (conftest)
        "SPECADVISOR_ENGINE_DIR": os.environ["SPECADVISOR_ENGINE_DIR"],
        "HF_HUB_OFFLINE": "1",
    }


def launch(tmp_path: Path, width: int, height: int) -> Tmux:
    binary = Path(sys.executable).with_name("specadvisor")
    return Tmux([str(binary), "--db", str(tmp_path / "s.db")], session_env(), width, height)


def advised_ngram_n(model_dir: Path) -> int:
    """The n-gram start N that `advise --json` (the other front end) gives for the TUI's inputs here."""
    binary = Path(sys.executable).with_name("specadvisor")
    out = subprocess.run(
        [str(binary), "advise", "--model", str(model_dir), "--output-len", "16", "--offline", "--json"],
        env=session_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    (ngram,) = [c for c in json.loads(out)["candidates"] if c["method"] == "ngram"]
    return ngram["speculative_config"]["num_speculative_tokens"]


def footer(term: Tmux, wanted: str, timeout_s: float = 20) -> str:
    """The bottom line once it shows `wanted` (a footer is drawn a frame after its screen)."""
    deadline = time.monotonic() + timeout_s
    while True:
        lines = term.screen().split("\n")
        last = lines[23] if len(lines) > 23 else ""
        if wanted in last or time.monotonic() > deadline:
            return last
        time.sleep(0.5)


@pytest.mark.timeout(60)
def test_a_foreign_tmux_server_and_the_callers_environment_lend_the_tui_nothing(monkeypatch):
    """Run inside a developer's tmux (`$TMUX` names their server, whose global environment is theirs)
    with something of the caller's own in the environment: the TUI's process sees only `session_env()`."""
    folder = Path(tempfile.mkdtemp(prefix="sa-tmux-", dir="/tmp"))
    foreign = folder / "default"
    theirs = {**os.environ, "SPECADVISOR_HOME": "/their/home", "SPECADVISOR_ENGINE_DIR": "/their/engine", "THEIR_ONLY": "1"}
    subprocess.run(["tmux", "-S", str(foreign), "new-session", "-d", "-s", "theirs", "sleep 120"], env=theirs, check=True)
    monkeypatch.setenv("TMUX", f"{foreign},1,0")
    monkeypatch.setenv("CALLERS_ONLY", "1")
    term = None
    try:
        term = Tmux(["sh", "-c", "env | grep -E '^(SPECADVISOR_|THEIR_|CALLERS_)' | sort; echo END; sleep 60"], session_env(), 160, 20)
        text = term.wait_for(r"(?m)^END$", 30, "the environment listing")
    finally:
        if term is not None:
            term.close()
        subprocess.run(["tmux", "-S", str(foreign), "kill-server"], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)
    shown = text.split("END")[0].split()
    assert shown == sorted([f"SPECADVISOR_ENGINE_DIR={os.environ['SPECADVISOR_ENGINE_DIR']}", f"SPECADVISOR_HOME={os.environ['SPECADVISOR_HOME']}"]), text


@pytest.mark.slow
@pytest.mark.e2e
@pytest.mark.timeout(1500)
def test_at_80x24_the_keys_the_plan_and_its_checks_stay_readable(cpu_engine, tmp_path):
    term = launch(tmp_path, 80, 24)
    try:
        term.wait_for(r"vLLM\s+0\.\d+\.\d+ \(vllm-cpu", 120, "hardware detection")
        keys = footer(term, "f5 Advise")
        assert "f5 Advise" in keys, keys
        # Ctrl+A in a text field goes to the line start (it once advised, with priority)
        term.type("Face/SmolLM2")
        time.sleep(0.5)  # keys as a person types them, not one burst
        term.keys("C-a")
        time.sleep(0.5)
        term.type("Hugging")
        term.wait_for(r"HuggingFace/SmolLM2", 10, "text typed at the line start")
        term.keys("End")
        time.sleep(0.3)
        term.keys("C-u")
        time.sleep(0.3)
        term.type(str(cpu_engine.model_dir))
        term.keys("Enter")
        term.wait_for(r"LlamaForCausalLM", 60, "the model inspection")
        term.set_field("Output tokens", "16")
        term.set_field("Plan within", "1 min")
        term.keys("F5")
        term.wait_for(r"Plan: \+ adds N", 60, "the Advice screen")
        term.wait_for(r"over 1 min by", 20, "the plan-within warning")
        keys = footer(term, "^s Start")
        for key in ("^s Start", "b Time", "x Export", "g Capacity", "p Parallel", "esc Back", "^q Quit", "f1 Help"):  # issue 41: all of them at 80 columns
            assert key in keys, keys
        assert plan_rows(term.screen())[:2] == ["baseline", f"n-gram N={advised_ngram_n(cpu_engine.model_dir)}"], term.screen()  # the advised start N is kept
        term.keys("C-s")
        term.wait_for(r"Start anyway\?", 20, "Start asking about the budget")
        assert "to plan within" in term.flat()
        term.keys("n")
        term.wait_for(r"Plan: \+ adds N", 20, "the plan again, nothing started")
        term.keys("b")
        term.wait_for(r"Plan within \(the time", 20, "the plan-within prompt")
        time.sleep(0.5)
        term.keys("End")
        time.sleep(0.3)
        term.keys("C-u")
        time.sleep(0.3)
        term.type("none")
        term.wait_for(r"none", 10, "the budget typed")
        time.sleep(0.3)
        term.keys("Enter")
        deadline = time.monotonic() + 30
        while len(plan_rows(term.screen())) < 4 and time.monotonic() < deadline:
            time.sleep(0.5)
        rows = plan_rows(term.screen())
        assert len(rows) >= 4 and rows[0] == "baseline", term.screen()  # several rows of the plan at 24 lines, not one
        assert not [r for r in rows if r.startswith("suffix")], rows  # the engine has no arctic-inference
        # plan for a named GPU instead: its advice, and Start refuses to run it here
        term.keys("Escape")
        term.wait_for(r"Model and workload", 20, "Setup")
        term.set_field("Plan for GPU", "H100x8")
        term.wait_for(r"Advice for H100x8", 20, "the GPU choice shown")
        term.keys("F5")
        term.wait_for(r"Planned for 8x", 60, "the plan for the named GPU")
        term.keys("C-s")
        term.wait_for(r"not this machine", 20, "Start refusing a plan for another machine")
        # Sessions at 80 columns: the id and the status stay
        term.keys("F3")
        term.wait_for(r"Saved sessions", 20, "Sessions")
        assert re.search(r"\bid\b.*\bstatus\b.*\bbest\b", term.flat()), term.screen()
        term.keys("C-q")
        time.sleep(2)
    finally:
        term.close()


@pytest.mark.slow
@pytest.mark.e2e
@pytest.mark.timeout(1500)
def test_setup_advice_sweep_results_in_a_real_terminal(cpu_engine, tmp_path):
    term = launch(tmp_path, 160, 48)
    try:
        # Setup: the CPU engine is detected; a bad value is named beside its field; small real workload
        term.wait_for(r"vLLM\s+0\.\d+\.\d+ \(vllm-cpu", 120, "hardware detection")
        term.type(str(cpu_engine.model_dir))
        term.keys("Enter")
        term.wait_for(r"LlamaForCausalLM", 60, "the model inspection")
        term.set_field("Requests", "lots")
        shown = term.wait_for(r"Requests: 'lots' is not", 10, "the inline error")
        assert "▶ Requests" in shown  # the field keeps the focus and says so
        assert "Requests: 'lots' is not a whole number" in term.flat()
        term.set_field("Requests", "4")  # the fix: cleared and retyped, the error goes
        term.set_field("Output tokens", "16")
        term.set_field("Plan within", "none")
        assert "Requests: 'lots'" not in term.flat(), term.screen()
        term.shows_fields(Requests="4", Output_tokens="16", Plan_within="none")  # what F5 reads is on the screen
        term.keys("F5")
        term.wait_for(r"Plan: \+ adds N", 60, "the Advice screen")
        plan_text = term.right_column()
        assert "4 req × 16 tok" in plan_text and "(plan within" not in plan_text, plan_text
        assert "suffix left out: arctic-inference is not installed in the engine's environment" in plan_text, plan_text
        # keep the baseline and one n-gram arm: remove every other row, bottom up
        for _ in range(20):
            rows = plan_rows(term.screen())
            extra = [i for i, r in enumerate(rows) if r != "baseline" and not r.startswith("n-gram")]
            ngrams = [i for i, r in enumerate(rows) if r.startswith("n-gram")]
            doomed = extra or ngrams[1:]
            if not doomed:
                break
            term.keys("-N", str(len(rows) + 2), "Up")  # the cursor to the first row
            time.sleep(0.6)
            if doomed[-1]:
                term.keys("-N", str(doomed[-1]), "Down")
            time.sleep(0.6)
            term.keys("d")
            deadline = time.monotonic() + 15  # a loaded machine redraws late: wait for the row to go
            while len(plan_rows(term.screen())) >= len(rows) and time.monotonic() < deadline:
                time.sleep(0.3)
        rows = plan_rows(term.screen())
        assert rows[0] == "baseline" and len(rows) == 2 and rows[1].startswith("n-gram N="), term.screen()
        # the sweep, live, on real servers
        term.keys("C-s")
        starting = term.wait_for(r"starting \d+ s", 120, "the start-up phase with its elapsed seconds")
        assert not re.search(r"100%", starting), starting
        term.wait_for(r"Running: 1 arm", 300, "the live view of a running arm")
        live = term.wait_for(r"TTFT p50/p99 \d+/\d+ ms", 600, "live latency percentiles")
        assert "tok/s" in live
        finished = flatten(term.wait_for(r"finished ·", 900, "the end of the sweep"))
        # the one verdict (analysis.decision), whichever way these few requests decide it: labels, not ids
        said = re.search(r"finished · (recommended: n-gram N=\d|do not speculate|undecided after)", finished)
        assert said, finished
        term.keys("r")
        results = term.wait_for(r"Recommendation", 60, "the Results screen")
        words = term.flat()
        assert "baseline" in results and re.search(r"n-gram N=\d", results)
        assert re.search(r"\d+\.\d+ ±\d+\.\d+|\d+\.\d+", results)
        # the Results screen gives the same answer as the live view, never another one
        same = {"recommended": r"Speculate: n-gram N=\d", "do not speculate": r"Do NOT speculate here", "undecided after": r"Undecided: after"}
        assert re.search(same[said.group(1).split(":")[0]], words), (said.group(1), words)
        if said.group(1).startswith("recommended"):
            assert "api_server" in words or "vllm serve" in words, words  # the command to paste comes with it
        term.keys("C-q")
        time.sleep(2)
    finally:
        term.close()
