"""End-to-end tests against the real CPU build of vLLM use the session fixtures `cpu_engine` and
`smollm2_dir` from tests/conftest.py (shared with the few unit tests that read the real engine)."""
