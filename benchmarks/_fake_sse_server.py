"""Launch the fake vLLM-compatible SSE server (tests/bench/fakeserver.py) as its own process.

Used by benchmarks/client_overhead.py so that the server and the client under test run on
separate cores. Run it with any Python; pass --uvloop where uvloop is installed (vLLM's venv has it).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "bench"))

from fakeserver import main

if __name__ == "__main__":
    main()
