"""Export a plan as `vllm bench sweep serve --serve-params` JSON: one dict per server configuration.

vLLM turns each key into a `vllm serve` flag and a dict value (speculative_config) into its JSON, so
the dicts carry only what differs between arms; the common server args go into --serve-cmd. For an
imported session only what specadvisor.crossing allows reaches the file (the method from the
registry, N, declared numbers; the drafter re-derived here) reaches the file, and the command to
run it serves the model the user names or the placeholder MODEL, never the bundle's model
(specadvisor.trust.command_model): the file is something you run.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from specadvisor.analysis.arms import arm_id, family_label, server_key
from specadvisor.crossing import crossing_arms
from specadvisor.domain import Arm, Session
from specadvisor.trust import command_model, is_imported, model_arg
from specadvisor.vllm_command import shell_command


def serve_params(session: Session, *, drafter: str | None = None, notes: list[str] | None = None, model: str | None = None) -> list[dict[str, object]]:
    """One entry per server configuration; `notes` (when given) collects one line per arm an
    imported session could not export (see specadvisor.crossing). `model`: the user's target, for
    an imported session's catalog drafters."""
    seen: set[str] = set()
    out: list[dict[str, object]] = []
    for arm in _arms(session, drafter, notes, model):
        key = server_key(arm)
        if key in seen:
            continue
        seen.add(key)
        name = arm_id(None if arm.is_baseline else family_label(arm), arm.n, arm.concurrency, False)
        entry: dict[str, object] = {"_benchmark_name": name}
        if arm.speculative_config is not None:
            entry["speculative_config"] = dict(arm.speculative_config)
        out.append(entry)
    if notes is not None:
        notes.extend(package_notes(session))
    return out


def package_notes(session: Session) -> list[str]:
    """One line per method of the session whose arms need a package beside vLLM (suffix: arctic-inference):
    where the plan runs, that engine must have it, and nothing here can check that engine."""
    from specadvisor.rulebase import registry

    lines = []
    for method in dict.fromkeys(str((a.speculative_config or {}).get("method")) for a in session.arms if not a.is_baseline):
        spec = registry.by_vllm_name(method)
        if spec is not None and spec.requires_packages:
            names = " ".join(spec.requires_packages)
            lines.append(f"the {spec.display_name or spec.id} arms need {names} installed beside vLLM where they run (pip install {names})")
    return lines


def _arms(session: Session, drafter: str | None, notes: list[str] | None, model: str | None) -> list[Arm]:
    if not is_imported(session):
        return list(session.arms)  # your own session: its configs are what you ran
    crossing = crossing_arms(session, target_model=model_arg(model or session.model), drafter=drafter)
    if notes is not None:
        notes.extend(crossing.notes)
    arms = [Arm(id="baseline", label="baseline")] if any(a.is_baseline for a in session.arms) else []
    for crossed in crossing.arms:
        config = crossed.speculative_config()
        arms.append(Arm(id="x", label="x", method=config["method"], n=crossed.n, speculative_config=config, concurrency=crossed.concurrency))
    return arms


def serve_cmd(session: Session, model: str | None = None) -> str:
    """The --serve-cmd to pair with the serve-params: the model and the server args every arm shared."""
    shared = [] if is_imported(session) else session.settings.server_args  # a bundle's args are never reused
    # not for a shell: vLLM splits it with shlex and runs it without one, so `~` and "$HOME" would
    # stay literal either way; plain shlex quoting is what its reader expects
    return shlex.join(["vllm", "serve", _target(session, model), *shared])


@dataclass
class BenchWorkload:
    """The measurement as `vllm bench serve` arguments: the prompts as its custom dataset (the exact
    prompts the session sent, in order), the fixed output length (--custom-output-len, --ignore-eos),
    temperature, seed, how prompts are sent (--skip-chat-template for raw text), and each concurrency
    level as a bench-params entry. `prompts` None: they cannot be written here (said in `notes`)."""

    prompts: list[dict[str, str]] | None
    levels: list[int]
    notes: list[str] = field(default_factory=list)

    def bench_params(self) -> list[dict[str, object]]:
        """One entry per concurrency level (`vllm bench sweep serve --bench-params`)."""
        return [{"_benchmark_name": f"c{level}", "max_concurrency": level} for level in self.levels]


def bench_workload(session: Session) -> BenchWorkload:
    """What a `vllm bench serve` run needs to measure what the session measured. An imported session's
    prompts are regenerated only from a built-in set: a bundle's prompt path is never read."""
    from specadvisor.bench.prompts import BUILTIN_SOURCES, prompts_for
    from specadvisor.errors import SpecAdvisorError

    s = session.settings
    notes: list[str] = []
    source = s.prompt_source.strip()
    if "prompt_source" in session.provenance.unrecorded or (is_imported(session) and source.lower() not in BUILTIN_SOURCES):
        notes.append("the session's prompts are not here to export: pass your own with --dataset-path in the bench command")
        return BenchWorkload(None, list(s.concurrency), notes)
    try:
        chosen = prompts_for(s)
    except SpecAdvisorError as err:
        notes.append(f"the session's prompts could not be read here ({err.message}): pass your own with --dataset-path")
        return BenchWorkload(None, list(s.concurrency), notes)
    rows = []
    for prompt in chosen.prompts:
        if prompt.text is not None:
            rows.append({"prompt": prompt.text})
            continue
        turns = prompt.messages or []
        if len(turns) != 1 or turns[0].get("role") != "user":
            notes.append("some prompts are conversations of several turns: vllm bench serve's custom dataset sends only the last user turn")
        rows.append({"prompt": str(next((m.get("content", "") for m in reversed(turns) if m.get("role") == "user"), ""))})
    return BenchWorkload(rows, list(s.concurrency), list(dict.fromkeys(notes)))


def bench_cmd(session: Session, prompts_file: str, *, model: str | None = None) -> list[str]:
    """`vllm bench serve` measuring as the session did, on the custom dataset in `prompts_file`."""
    s = session.settings
    argv = ["vllm", "bench", "serve", "--model", _target(session, model), "--dataset-name", "custom", "--dataset-path", prompts_file]
    argv += ["--disable-shuffle", "--num-prompts", str(s.num_prompts), "--custom-output-len", str(s.output_len), "--ignore-eos"]
    unrecorded = set(session.provenance.unrecorded)  # what the session's source did not record is not made up here
    for flag, name, value in (
        ("--temperature", "temperature", f"{s.temperature:g}"),
        ("--seed", "seed", str(s.seed)),
        ("--num-warmups", "warmup", str(s.warmup)),
    ):
        if name not in unrecorded:
            argv += [flag, value]
    if s.request_format == "completions":
        argv.append("--skip-chat-template")  # raw text, as the session sent it (its chat format is the dataset's default)
    if s.request_rate is not None:
        argv += ["--request-rate", f"{s.request_rate:g}"]
    if len(s.concurrency) == 1:
        argv += ["--max-concurrency", str(s.concurrency[0])]
    return argv


def bench_sweep_command(
    session: Session,
    params_file: str,
    *,
    prompts_file: str = "prompts.jsonl",
    bench_params_file: str | None = None,
    width: int | None = None,
    model: str | None = None,
) -> str:
    """`vllm bench sweep serve`, rendered for a shell; its --serve-cmd and --bench-cmd are command
    lines vLLM splits with shlex, each one argument here. Several concurrency levels are the entries
    of `bench_params_file`."""
    argv = [
        "vllm",
        "bench",
        "sweep",
        "serve",
        "--serve-cmd",
        serve_cmd(session, model),
        "--bench-cmd",
        shlex.join(bench_cmd(session, prompts_file, model=model)),
    ]
    argv += ["--serve-params", params_file]
    if len(session.settings.concurrency) > 1:
        argv += ["--bench-params", bench_params_file or "bench_params.json"]
    return shell_command(argv, width=width)


def _target(session: Session, model: str | None) -> str:
    """The model the printed commands serve (a local session's own may be anything you typed: a
    leading `-` stays a path)."""
    return model_arg(command_model(session, model))
