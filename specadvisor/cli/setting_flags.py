"""The sweep settings' flags, GENERATED from `domain.SweepSettings` by `python -m specadvisor.cli.doc --write`:
do not edit by hand (a test fails when this differs from the model). Plain data, so that building the
parser imports no pydantic."""

# fmt: off
from __future__ import annotations

from typing import Any, NamedTuple


class SettingFlag(NamedTuple):
    name: str  # the SweepSettings field (and the argparse dest)
    flag: str
    help: str
    default: Any  # in the flag's unit
    kind: str  # count | levels | int | float | choice
    metavar: str | None
    choices: tuple[str, ...] = ()  # the words a choice takes


FLAGS: tuple[SettingFlag, ...] = (
    SettingFlag('request_format', '--request-format', "how each prompt is sent: chat (/v1/chat/completions, through the model's chat template), completions (/v1/completions, raw text) or auto: what `vllm bench serve` does for the same prompts (the chat template for a JSONL file, HumanEval and the project's sets; raw text for ShareGPT and random)", 'auto', 'choice', 'auto|chat|completions', ('auto', 'chat', 'completions')),
    SettingFlag('num_prompts', '--num-prompts', 'measured requests per arm, e.g. 32 or 1k', '32', 'count', None),
    SettingFlag('output_len', '--output-len', 'output tokens per request, fixed (ignore_eos), e.g. 256 or 2k (default: 256; 128 for --prompts edit, 320 for rename)', None, 'count', None),
    SettingFlag('temperature', '--temperature', 'sampling temperature of every request; acceptance drops as it rises', 0.0, 'float', None),
    SettingFlag('seed', '--seed', 'seed of every request and of the prompt sample, so runs repeat', 0, 'int', None),
    SettingFlag('warmup', '--warmup', 'warmup requests per arm, excluded from results', 2, 'int', None),
    SettingFlag('trials', '--trials', 'measured trials per arm, each on a fresh server; trial k of every arm runs before trial k+1 of any', 1, 'int', None),
    SettingFlag('concurrency', '--concurrency', 'client concurrency level(s), e.g. 1 or 1,8', '1', 'levels', None),
    SettingFlag('request_rate', '--request-rate', 'Poisson request rate (default: as fast as concurrency allows)', None, 'float', None),
    SettingFlag('slo_tpot_ms', '--slo-tpot-ms', 'latency target on p99 TPOT (ms)', None, 'float', None),
    SettingFlag('slo_ttft_ms', '--slo-ttft-ms', 'latency target on p99 TTFT (ms)', None, 'float', None),
    SettingFlag('drift_threshold', '--drift-threshold', 'baseline drift (%) flagged in the output; the verdict counts drift as launch-to-launch spread', 5.0, 'float', 'PCT'),
    SettingFlag('ci_target', '--ci-target', 'stop an arm once its throughput interval is within +/-PCT% (default 3 with --adaptive, else off; 0 = off)', None, 'float', 'PCT'),
    SettingFlag('confidence', '--confidence', 'confidence asked of the verdict: speculate only when the whole interval is 3% or more faster', 95.0, 'float', 'PCT'),
    SettingFlag('budget_s', '--budget', 'measure until decided: while a level is undecided, add launches (and requests on them) for up to MIN more minutes of wall-clock time (default: off, the fixed design)', None, 'float', 'MIN'),
    SettingFlag('time_limit_s', '--time-limit', 'stop the whole sweep after MIN minutes of wall-clock time: the arm in flight is stopped, no launch starts after it, the verdict comes from what was measured (default: none)', None, 'float', 'MIN'),
)
