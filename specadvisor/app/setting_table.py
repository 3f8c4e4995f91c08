"""The sweep settings as plain data, GENERATED from `domain.SweepSettings` by `python -m specadvisor.cli.doc --write`:
do not edit by hand (a test fails when this differs from the model). The `sweep` command's flags, their checks
and the TUI form's setting fields are built from it; plain data, so that building the parser imports no pydantic.
"""

# fmt: off
from __future__ import annotations

from typing import Any, NamedTuple

from specadvisor.bounds import Bound


class SettingRow(NamedTuple):
    name: str  # the SweepSettings field (and the argparse dest)
    flag: str
    help: str
    kind: str  # count | levels | int | float | switch | negatable | choice | text | url | command | args | parallel
    default: Any  # the flag's default, in the flag's unit (None: none, or decided later)
    metavar: str | None
    unit: str  # the flag's unit (%, min) or the model's (ms, tokens...)
    scale: float  # the flag's value is the model's times this
    bound: Bound | None  # a number's range, in the flag's unit
    optional: bool  # None is a valid value (off / not set)
    label: str  # its name for people (errors, the TUI form)
    form: bool  # shown on the TUI's Setup form
    form_default: Any  # the model's default in the flag's unit, as the form shows it
    form_hint: str  # what the empty form field says
    resumable: bool  # `sweep --resume` may change it
    exclusive: str  # flags of one group exclude each other
    choices: tuple[str, ...]  # the words a choice takes

    def to_model(self, value: float) -> float:
        """A flag's value in the model's unit (95 % -> 0.95, 20 min -> 1200 s)."""
        if self.scale == 1:
            return value
        per = 1 / self.scale  # minutes: 60, exactly, so 20 min is 1200 s and not 1200.0000000000002
        return value * round(per) if abs(per - round(per)) < 1e-9 else value / self.scale


SETTINGS: tuple[SettingRow, ...] = (
    SettingRow('prompt_source', '--prompts', 'prompt source: humaneval, sharegpt, math, rag, edit, rename, or a file', 'text', 'humaneval', 'SOURCE', '', 1.0, None, False, 'prompt set', False, 'humaneval', '', False, '', ()),
    SettingRow('request_format', '--request-format', "how each prompt is sent: chat (/v1/chat/completions, through the model's chat template), completions (/v1/completions, raw text) or auto: what `vllm bench serve` does for the same prompts (the chat template for a JSONL file, HumanEval and the project's sets; raw text for ShareGPT and random)", 'choice', 'auto', 'auto|chat|completions', '', 1.0, None, True, 'Request format', True, None, '', False, '', ('auto', 'chat', 'completions')),
    SettingRow('num_prompts', '--num-prompts', 'measured requests per arm, e.g. 32 or 1k', 'count', '32', None, 'requests', 1.0, Bound('--num-prompts', 1, 1000000, whole=True, low_open=False, high_open=False), False, 'Requests', True, 32, '', False, '', ()),
    SettingRow('output_len', '--output-len', 'output tokens per request, fixed (ignore_eos), e.g. 256 or 2k (default: 256; 128 for --prompts edit, 320 for rename)', 'count', None, None, 'tokens', 1.0, Bound('--output-len', 1, 1048576, whole=True, low_open=False, high_open=False), False, 'Output tokens', True, 256, '', False, '', ()),
    SettingRow('temperature', '--temperature', 'sampling temperature of every request; acceptance drops as it rises', 'float', 0.0, None, '', 1.0, Bound('--temperature', 0.0, 2.0, whole=False, low_open=False, high_open=False), False, 'Temperature', True, 0.0, '', False, '', ()),
    SettingRow('seed', '--seed', 'seed of every request and of the prompt sample, so runs repeat', 'int', 0, None, '', 1.0, Bound('--seed', 0, 9223372036854775807, whole=True, low_open=False, high_open=False), False, '', False, 0, '', False, '', ()),
    SettingRow('warmup', '--warmup', 'warmup requests per arm, excluded from results', 'int', 2, None, 'requests', 1.0, Bound('--warmup', 0, 100000, whole=True, low_open=False, high_open=False), False, '', False, 2, '', False, '', ()),
    SettingRow('trials', '--trials', 'measured trials per arm, each on a fresh server; trial k of every arm runs before trial k+1 of any', 'int', 1, None, '', 1.0, Bound('--trials', 1, 1000, whole=True, low_open=False, high_open=False), False, '', False, 1, '', False, '', ()),
    SettingRow('concurrency', '--concurrency', 'client concurrency level(s), e.g. 1 or 1,8', 'levels', '1', None, 'streams', 1.0, Bound('--concurrency', 1, 100000, whole=True, low_open=False, high_open=False), False, 'Concurrency', True, [1], '', False, '', ()),
    SettingRow('request_rate', '--request-rate', 'Poisson request rate (default: as fast as concurrency allows)', 'float', None, None, 'req/s', 1.0, Bound('--request-rate', 0.0, 1000000.0, whole=False, low_open=True, high_open=False), True, '', False, None, '', False, '', ()),
    SettingRow('endpoint', '--endpoint', 'measure a running server at URL as one arm (nothing is launched)', 'url', None, 'URL', '', 1.0, None, True, '', False, None, '', False, 'engine', ()),
    SettingRow('engine_cmd', '--engine-cmd', "command that launches vLLM (default 'vllm serve')", 'command', [], 'CMD', '', 1.0, None, False, '', False, [], '', False, 'engine', ()),
    SettingRow('server_args', '--server-arg', 'extra vllm serve argument (repeat; e.g. --server-arg=--max-model-len=4096)', 'args', [], 'ARG', '', 1.0, None, False, '', False, [], '', False, '', ()),
    SettingRow('adaptive', '--adaptive', 'measure the largest N first, predict the rest, launch only promising N', 'switch', False, None, '', 1.0, None, False, '', False, False, '', False, '', ()),
    SettingRow('slo_tpot_ms', '--slo-tpot-ms', 'latency target on p99 TPOT (ms)', 'float', None, None, 'ms', 1.0, Bound('--slo-tpot-ms', 0.0, 86400000.0, whole=False, low_open=True, high_open=False), True, 'p99 TPOT target', False, None, '', False, '', ()),
    SettingRow('slo_ttft_ms', '--slo-ttft-ms', 'latency target on p99 TTFT (ms)', 'float', None, None, 'ms', 1.0, Bound('--slo-ttft-ms', 0.0, 86400000.0, whole=False, low_open=True, high_open=False), True, 'p99 TTFT target', False, None, '', False, '', ()),
    SettingRow('goodput', '--goodput', 'capacity instead of fixed concurrency: per configuration, one launch and a Poisson rate sweep that binary-searches the highest req/s whose p99 TPOT/TTFT meets --slo-tpot-ms/--slo-ttft-ms', 'switch', False, None, '', 1.0, None, False, '', False, False, '', False, '', ()),
    SettingRow('bracket', '--bracket', 'measure the baseline again at the end to measure drift', 'negatable', True, None, '', 1.0, None, False, '', False, True, '', False, '', ()),
    SettingRow('drift_threshold', '--drift-threshold', 'baseline drift (%) flagged in the output; the verdict counts drift as launch-to-launch spread', 'float', 5.0, 'PCT', '%', 100.0, Bound('--drift-threshold', 0.0, 1000.0, whole=False, low_open=False, high_open=False), False, '', False, 5.0, '', False, '', ()),
    SettingRow('parallel_choice', '--parallel', 'servers at once: auto = one per free GPU group (serial without GPUs); K on a CPU-only host splits the cores', 'parallel', 'auto', 'auto|K', '', 1.0, None, False, '', False, 'auto', '', True, '', ()),
    SettingRow('ci_target', '--ci-target', 'stop an arm once its throughput interval is within +/-PCT% (default 3 with --adaptive, else off; 0 = off)', 'float', None, 'PCT', '%', 100.0, Bound('--ci-target', 0.0, 100.0, whole=False, low_open=False, high_open=False), True, '', False, None, '', False, '', ()),
    SettingRow('confidence', '--confidence', 'confidence asked of the verdict: speculate only when the whole interval is 3% or more faster', 'float', 95.0, 'PCT', '%', 100.0, Bound('--confidence', 50.0, 100.0, whole=False, low_open=False, high_open=True), False, '', False, 95.0, '', False, '', ()),
    SettingRow('budget_s', '--budget', 'measure until decided: while a level is undecided, add launches (and requests on them) for up to MIN more minutes of wall-clock time (default: off, the fixed design)', 'float', None, 'MIN', 'min', 0.016666666666666666, Bound('--budget', 0.0, 10080.0, whole=False, low_open=False, high_open=False), True, '', False, None, '', True, '', ()),
    SettingRow('time_limit_s', '--time-limit', 'stop the whole sweep after MIN minutes of wall-clock time: the arm in flight is stopped, no launch starts after it, the verdict comes from what was measured (default: none)', 'float', None, 'MIN', 'min', 0.016666666666666666, Bound('--time-limit', 0.0, 10080.0, whole=False, low_open=True, high_open=False), True, 'Time limit', True, None, 'none (or a hard stop for the sweep, e.g. 2 h)', True, '', ()),
)
BY_NAME = {row.name: row for row in SETTINGS}
