"""A stand-in for `vllm serve` at the process boundary: prints log lines, serves /health, or fails.

Usage: python fake_vllm.py --mode MODE [vLLM's --model/--host/--port/... arguments]
Modes: ok (ready after --delay s), slowinfo (ok, but /server_info answers after 5 s), exit (print --fail-log and exit --rc), hang (never ready),
children (ok, plus a grandchild sleeping in the same process group; pids written to --pid-file),
stubborn (ok, but ignores SIGTERM), longline (ok, after printing a 3 MB line).
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        routes = {
            "/health": (200, b""),
            "/version": (200, json.dumps({"version": "0.0-fake"}).encode()),
            "/v1/models": (200, json.dumps({"data": [{"id": self.server.model, "max_model_len": 2048}]}).encode()),
        }
        if self.path.startswith("/server_info") and self.server.mode == "slowinfo":
            time.sleep(5)
        status, body = routes.get(self.path.split("?")[0], (404, b"{}"))
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        status = 200 if self.path == "/reset_prefix_cache" and os.environ.get("VLLM_SERVER_DEV_MODE") == "1" else 404
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        print("GET", self.path, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="ok")
    parser.add_argument("--delay", type=float, default=0.5)
    parser.add_argument("--rc", type=int, default=1)
    parser.add_argument("--fail-log")
    parser.add_argument("--pid-file")
    parser.add_argument("--model")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args, rest = parser.parse_known_args()
    print(f"fake vllm starting: mode={args.mode} model={args.model} extra={rest}", flush=True)
    print(f"env VLLM_SERVER_DEV_MODE={os.environ.get('VLLM_SERVER_DEV_MODE')} CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')}", flush=True)
    stdin_data = sys.stdin.read()
    print(f"stdin bytes: {len(stdin_data)}", flush=True)

    if args.mode == "exit":
        with open(args.fail_log) as handle:
            sys.stdout.write(handle.read())
        sys.stdout.flush()
        sys.exit(args.rc)
    if args.mode == "children":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], stdin=subprocess.DEVNULL)
        with open(args.pid_file, "w") as handle:
            json.dump({"server": os.getpid(), "grandchild": child.pid}, handle)
    if args.mode == "stubborn":
        signal.signal(signal.SIGTERM, lambda *a: print("ignoring SIGTERM", flush=True))
    if args.mode == "longline":
        print("x" * 3_000_000, flush=True)
    if args.pid_file and args.mode != "children":
        with open(args.pid_file, "w") as handle:
            json.dump({"server": os.getpid()}, handle)
    if args.mode == "hang":
        while True:
            time.sleep(1)
    time.sleep(args.delay)
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.model = args.model
    server.mode = args.mode
    print("Application startup complete.", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
