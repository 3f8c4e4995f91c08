"""Where, when and with what a session was measured: the one builder every entry point calls.

A shared result is only worth what it says about its conditions. `record_provenance` fills
`session.hardware` (GPUs, CPU, RAM, OS, Python, the vLLM that serves) and `session.provenance`
(entry point, specadvisor version, rules hash, prompt hash, times) for the TUI, `sweep` (launch,
`--cpu`, `--endpoint`), the demo, resume and `import-bench` alike. What cannot be observed (a remote
endpoint's CPU, bench files measured elsewhere) is marked "unknown", never left blank.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Literal, TypeGuard
from urllib.parse import urlsplit

from specadvisor import __version__
from specadvisor.domain import CpuInfo, EngineInfo, HardwareProfile, Session, utcnow
from specadvisor.store.upgrade import upgrade_session
from specadvisor.trust import measured_on

__all__ = ["is_loopback", "prompt_sha256", "provenance_facts", "record_provenance", "serve_argv", "serve_argv_lines", "stop_line", "upgrade_session"]

UNKNOWN = "unknown"
ENTRY_POINTS = ("tui", "sweep", "sweep --cpu", "sweep --endpoint", "demo", "import-bench")

Detect = Callable[[list[str] | None], HardwareProfile]


def record_provenance(
    session: Session,
    *,
    entry_point: str,
    hardware: HardwareProfile | None = None,
    endpoint_info: Any = None,
    detect: Detect | None = None,
) -> Session:
    """Fill the session's provenance once (a fresh session), or note a resume (a session that has one).
    `entry_point` names who runs it unless the use case that planned it named itself (the demo, a rebuild).

    `hardware`: an already detected profile whose engine is the one that will serve (the TUI's);
    `endpoint_info`: an EndpointInfo for --endpoint; `detect`: the probe (tests pass a fake).
    """
    prov = session.provenance
    if prov.entry_point and entry_point == "import-bench":
        prov.notes.append(f"arms imported from vllm bench serve files on {utcnow():%Y-%m-%d %H:%M} UTC (measured elsewhere)")
        return session
    if prov.entry_point and session.status != "planned":  # it ran before (or was migrated): this run resumes it
        return _resumed(session, hardware=hardware, detect=detect)
    if prov.specadvisor_version:  # recorded already (a second runner for a plan not run yet)
        return session
    prov.entry_point = prov.entry_point if prov.entry_point not in ("", UNKNOWN) else entry_point
    prov.specadvisor_version = prov.specadvisor_version or __version__
    prov.rules_sha256 = _rules_hash()
    _prompt_facts(session)
    if entry_point == "import-bench":
        session.hardware = _unknown_machine(EngineInfo(detail="measured elsewhere with vllm bench serve"))
        prov.measured_on = "elsewhere"
    elif session.settings.endpoint:
        session.hardware, prov.measured_on = _endpoint_machine(session.settings.endpoint, endpoint_info, detect)
        prov.server_exposed = _exposed(endpoint_info)
    else:
        session.hardware = hardware if _observed(hardware) else _detect(detect, session.settings.engine_cmd or None)
        prov.measured_on = "this machine"
    session.hardware_fingerprint = session.hardware.fingerprint()
    if session.hardware.engine.version and not session.vllm_version:
        session.vllm_version = session.hardware.engine.version
    return session


def _resumed(session: Session, *, hardware: HardwareProfile | None, detect: Detect | None) -> Session:
    """A resumed sweep: its remaining arms run here and now. Say so, and say what changed since."""
    prov = session.provenance
    prov.resumed_at.append(utcnow())
    if session.settings.endpoint or prov.measured_on == "elsewhere":
        return session
    now = hardware if _observed(hardware) else _detect(detect, session.settings.engine_cmd or None)
    if not _observed(session.hardware):
        session.hardware = now
        session.hardware_fingerprint = now.fingerprint()
    elif now.fingerprint() != session.hardware.fingerprint():
        prov.notes.append(f"resumed on other hardware ({now.gpu_label}, recorded {session.hardware.gpu_label}): later arms ran there")
    if now.engine.version and session.hardware.engine.version and now.engine.version != session.hardware.engine.version:
        prov.notes.append(f"resumed with vLLM {now.engine.version} (recorded {session.hardware.engine.version})")
    before = prov.prompt_sha256
    _prompt_facts(session)
    if before and prov.prompt_sha256 and before != prov.prompt_sha256:
        prov.notes.append(f"the prompts of {prov.prompt_source} changed between runs (sha256 {before[:12]} then {prov.prompt_sha256[:12]})")
    return session


# ---------------------------------------------------------------------- the facts


def _detect(detect: Detect | None, engine_cmd: list[str] | None) -> HardwareProfile:
    if detect is not None:
        return detect(engine_cmd)
    from specadvisor.hardware import detect as detect_here

    return detect_here(engine_cmd)


def _observed(hardware: HardwareProfile | None) -> TypeGuard[HardwareProfile]:
    """A profile measured on a machine (not the empty default a session starts with, nor a plan)."""
    return hardware is not None and not hardware.hypothetical and (hardware.cpu.model != UNKNOWN or bool(hardware.os))


def _unknown_machine(engine: EngineInfo, *, python: str | None = None) -> HardwareProfile:
    return HardwareProfile(
        cpu=CpuInfo(model=UNKNOWN),
        os=UNKNOWN,
        python=python or UNKNOWN,
        engine=engine,
        unknown=["gpus", "cpu", "ram", "os"] + ([] if python else ["python"]),
    )


def is_loopback(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _endpoint_machine(url: str, info: Any, detect: Detect | None) -> tuple[HardwareProfile, Literal["endpoint on this machine", "remote endpoint"]]:
    """A server on this host is measured on this machine's hardware; a remote one only says what it exposes."""
    version = getattr(info, "version", None)
    device = getattr(info, "device", None)
    platform: Literal["cuda", "rocm", "cpu", "unknown"] = device if device in ("cuda", "rocm", "cpu") else "unknown"
    engine = EngineInfo(
        found=version is not None,
        version=version,
        distribution=UNKNOWN,
        platform=platform,
        detail=f"running server at {url}" + ("" if version else " (it does not expose /version)"),
    )
    python = getattr(info, "python", None)
    if is_loopback(url):
        local = _detect(detect, None)
        return replace(local, engine=engine, python=python or UNKNOWN), "endpoint on this machine"
    return _unknown_machine(engine, python=python), "remote endpoint"


def _server_info(info: Any) -> str:
    """Whether /server_info answered: a timeout is unknown, not "not exposed"."""
    if getattr(info, "server_info_available", False):
        return "exposed"
    error = getattr(info, "server_info_error", None)
    return f"unknown: it {error}" if error else "not exposed (start vLLM with VLLM_SERVER_DEV_MODE=1)"


def _exposed(info: Any) -> dict[str, str]:
    if info is None:
        return {}
    facts = {
        "version": getattr(info, "version", None),
        "served_model": getattr(info, "served_model", None),
        "max_model_len": getattr(info, "max_model_len", None),
        "device": getattr(info, "device", None),
        "tensor_parallel_size": getattr(info, "tensor_parallel_size", None),
        "python": getattr(info, "python", None),
        "server_info": _server_info(info),
    }
    cache = getattr(info, "cache_config", None) or {}
    for key in ("gpu_memory_utilization", "block_size", "cache_dtype", "enable_prefix_caching", "num_gpu_blocks", "num_cpu_blocks"):
        if cache.get(key) not in (None, "", "None"):
            facts[f"cache.{key}"] = cache[key]
    return {k: (UNKNOWN if v is None else str(v)) for k, v in facts.items()}


def _rules_hash() -> str | None:
    try:
        from specadvisor.rulebase.loader import rules_sha256

        return rules_sha256()
    except Exception:  # noqa: BLE001 - an unreadable user rules folder must not stop a sweep; the report says "unknown"
        return None


def prompt_sha256(prompts: Any) -> str:
    """sha256 over the sampled prompts as sent, in order (a prompt's text, or its chat messages as
    sorted-key JSON, each followed by a NUL), independent of ids: the same for two sessions that sent
    the same requests, whatever file they came from. Not a file's hash (`prompt_file_sha256` is)."""
    digest = hashlib.sha256()
    for prompt in prompts:
        body = prompt.text if prompt.text is not None else json.dumps(prompt.messages, sort_keys=True, ensure_ascii=False)
        digest.update(body.encode("utf-8", errors="replace") + b"\0")
    return digest.hexdigest()


def _prompt_facts(session: Session) -> None:
    """The prompt source and a hash of the exact sampled prompts (same source, count and seed as the runner)."""
    s = session.settings
    prov = session.provenance
    prov.prompt_source = s.prompt_source
    if session.provenance.entry_point == "import-bench":
        return
    try:
        from specadvisor.bench.prompts import prompts_for

        chosen = prompts_for(s)
    except Exception:  # noqa: BLE001 - the runner reports a bad source as an input error before anything runs
        return
    prov.prompt_sha256 = prompt_sha256(chosen.prompts)
    prov.prompt_count = len(chosen.prompts)
    prov.prompt_source = chosen.source
    prov.prompt_file_sha256 = _file_sha256(chosen.source)


def _file_sha256(source: str) -> str | None:
    """The prompt file's sha256 (what `sha256sum FILE` prints); None for a built-in set."""
    from pathlib import Path

    from specadvisor.bench.prompts import BUILTIN_SOURCES

    if source in BUILTIN_SOURCES:
        return None
    try:
        return hashlib.sha256(Path(source).expanduser().read_bytes()).hexdigest()
    except OSError:
        return None


def serve_argv(server: Any) -> list[str]:
    """The exact command line that launched an arm's server, secrets redacted ([] when none was launched)."""
    from specadvisor.redact import redact_argv

    return redact_argv([str(a) for a in (getattr(server, "command", None) or [])])


def mark_sweep_started(session: Session) -> None:
    session.provenance.started_at = session.provenance.started_at or utcnow()


def mark_sweep_finished(session: Session) -> None:
    session.provenance.finished_at = utcnow()


# ---------------------------------------------------------------------- showing it


def _gpu_lines(hw: HardwareProfile) -> list[str]:
    if not hw.gpus:
        return ["unknown" if "gpus" in hw.unknown else "none (CPU only)"]
    lines = []
    for g in hw.gpus:
        runtime = f"CUDA {g.cuda_driver_version}" if g.cuda_driver_version else (g.gfx_target or "")
        memory = f"{g.memory_total_mib / 1024:.0f} GiB" if g.memory_total_mib else "memory unknown"
        parts = [
            f"#{g.index} {g.name}",
            memory,
            f"driver {g.driver_version or UNKNOWN}",
            runtime,
            f"UUID {g.uuid or UNKNOWN}",
            f"PCI {g.pci_bus_id or UNKNOWN}",
        ]
        lines.append(", ".join(p for p in parts if p))
    return lines


def _or_unknown(value: object) -> str:
    return UNKNOWN if value in (None, "") else str(value)


def _trained_fact(ref: Any) -> str:
    versions = ", ".join(f"{k} {v}" for k, v in sorted(ref.versions.items()) if k in ("speculators", "torch", "vllm"))
    kernels = ", eager loss and SDPA" if ref.plain_kernels else ""
    return (
        f"{ref.method} {ref.id[:8]} by specadvisor train for {ref.target}: {ref.train_prompts} prompts of {ref.prompt_source} "
        f"(sha256 {ref.prompt_sha256[:12]}), {ref.heldout_prompts} held out, {ref.steps} steps in {ref.train_seconds / 60:.1f} min "
        f"on {ref.device or UNKNOWN}{kernels}" + (f"; {versions}" if versions else "")
    )


def provenance_facts(session: Session) -> list[tuple[str, str]]:
    """(label, value) rows for reports and `sessions show`: every fact, "unknown" where not observed."""
    hw, prov = session.hardware, session.provenance
    cpu = hw.cpu
    cores = f"{_or_unknown(cpu.cores_physical)} physical / {_or_unknown(cpu.cores_logical)} logical cores"
    engine = hw.engine
    parts = [
        f"vLLM {_or_unknown(engine.version or session.vllm_version)}",
        f"platform {engine.platform}",
        f"distribution {_or_unknown(engine.distribution)}",
        f"torch {engine.torch_version}" if engine.torch_version else "",
    ]
    engine_line = ", ".join(p for p in parts if p)
    command = session.settings.engine_cmd or engine.command
    facts = [("measured on", measured_on(session)), ("entry point", _or_unknown(prov.entry_point))]
    facts += [("GPU", line) for line in _gpu_lines(hw)]
    facts += [
        ("CPU", f"{cpu.model}, {cores}"),
        ("RAM", f"{cpu.ram_total_gib} GiB" if cpu.ram_total_gib else UNKNOWN),
        ("OS", _or_unknown(hw.os)),
        ("Python", _or_unknown(hw.python)),
        ("engine", engine_line),
        ("engine command", _engine_command_fact(session, command)),
        ("specadvisor", _or_unknown(prov.specadvisor_version)),
        ("rules sha256", prov.rules_sha256[:16] if prov.rules_sha256 else UNKNOWN),
        ("prompts", _prompts_fact(session)),
        ("started", f"{prov.started_at:%Y-%m-%d %H:%M:%S} UTC" if prov.started_at else UNKNOWN),
        ("finished", f"{prov.finished_at:%Y-%m-%d %H:%M:%S} UTC" if prov.finished_at else ("not finished" if session.status != "finished" else UNKNOWN)),
    ]
    facts += [("stopped", stop_line(session))]
    if prov.trained_drafter is not None:
        facts += [("trained drafter", _trained_fact(prov.trained_drafter))]
    facts += [("resumed", f"{t:%Y-%m-%d %H:%M:%S} UTC") for t in prov.resumed_at]
    facts += [(f"server exposed: {k}", v) for k, v in prov.server_exposed.items()]
    facts += [("note", n) for n in prov.notes]
    return facts


def _prompts_fact(session: Session) -> str:
    """The prompt source and what its hashes are of: the content hash is of the prompts as sent (so it
    differs from `sha256sum` of the file, which is given beside it for a file)."""
    prov = session.provenance
    text = _or_unknown(prov.prompt_source or session.settings.prompt_source)
    if not prov.prompt_sha256:
        return f"{text}, content hash unknown"
    text += f", {prov.prompt_count} prompts, content sha256 {prov.prompt_sha256[:16]} (of the sampled prompts as sent, in order: not a file's hash)"
    return text + (f"; file sha256 {prov.prompt_file_sha256[:16]}" if prov.prompt_file_sha256 else "")


def stop_line(session: Session) -> str:
    """Why the session's last run stopped measuring (domain.SweepStop), or that it was not recorded."""
    stop = session.provenance.stopped
    if stop is None:
        return "not recorded (sessions before stops were recorded, imports of them, and sessions not run)"
    rec = session.recommendation
    return stop.text(rec is not None and rec.decision not in ("undecided", ""))


def _engine_command_fact(session: Session, command: list[str]) -> str:
    """The engine command as a fact; a bundle's is never printed as something to run (specadvisor.trust)."""
    from specadvisor.trust import is_imported

    if not command:
        return "not launched by specadvisor" if session.settings.endpoint else UNKNOWN
    if is_imported(session):
        return f"{command[0].rsplit('/', 1)[-1]} ... (recorded by the exporting machine; imported commands are not shown or run)"
    from specadvisor.vllm_command import shell_command

    return shell_command(command)


def serve_argv_lines(session: Session) -> list[tuple[str, str]]:
    """(arm label, its exact server command line) for every arm that launched a server; none for an
    imported session, whose command lines came from someone else's file (specadvisor.trust)."""
    from specadvisor.redact import redact_argv
    from specadvisor.trust import is_imported
    from specadvisor.vllm_command import PASTE_WIDTH, shell_command

    if is_imported(session):
        return []
    labels = {a.id: a.label for a in session.arms}
    return [(labels.get(r.arm_id, r.arm_id), shell_command(redact_argv(r.serve_argv), width=PASTE_WIDTH)) for r in session.results if r.serve_argv]
