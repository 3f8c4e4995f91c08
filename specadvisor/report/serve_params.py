"""Export a plan as `vllm bench sweep serve --serve-params` JSON: one dict per server configuration.

vLLM turns each key into a `vllm serve` flag and a dict value (speculative_config) into its JSON, so
the dicts carry only what differs between arms; the common server args go into --serve-cmd.
"""

from __future__ import annotations

import shlex

from specadvisor.domain import Session
from specadvisor.sweep.arms import arm_id, family_label, server_key
from specadvisor.trust import is_imported, model_arg
from specadvisor.vllm_command import shell_command


def serve_params(session: Session) -> list[dict]:
    seen: set[str] = set()
    out: list[dict] = []
    for arm in session.arms:
        key = server_key(arm)
        if key in seen:
            continue
        seen.add(key)
        name = arm_id(None if arm.is_baseline else family_label(arm), arm.n, arm.concurrency, False)
        entry: dict = {"_benchmark_name": name}
        if arm.speculative_config is not None:
            entry["speculative_config"] = dict(arm.speculative_config)
        out.append(entry)
    return out


def serve_cmd(session: Session) -> str:
    """The --serve-cmd to pair with the serve-params: the model and the server args every arm shared."""
    shared = [] if is_imported(session) else session.settings.server_args  # a bundle's args are never reused
    # not for a shell: vLLM splits it with shlex and runs it without one, so `~` and "$HOME" would
    # stay literal either way; plain shlex quoting is what its reader expects
    return shlex.join(["vllm", "serve", model_arg(session.model), *shared])


def bench_sweep_command(session: Session, params_file: str, *, width: int | None = None) -> str:
    """`vllm bench sweep serve`, rendered for a shell; its --serve-cmd and --bench-cmd are command
    lines vLLM splits with shlex, each one argument here."""
    s = session.settings
    bench = ["vllm", "bench", "serve", "--model", model_arg(session.model), "--num-prompts", str(s.num_prompts), "--max-concurrency", str(s.concurrency[0])]
    argv = ["vllm", "bench", "sweep", "serve", "--serve-cmd", serve_cmd(session), "--bench-cmd", shlex.join(bench), "--serve-params", params_file]
    return shell_command(argv, width=width)
