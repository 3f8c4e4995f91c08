"""domain.WorkloadKind's values, spelled out so that building a parser (`advise --workload`, `sweep
--workload`) imports no pydantic model and no other command's module (tests/cli/test_cli_startup.py
checks they agree)."""

WORKLOADS = ("chat", "code", "math", "rag", "agentic", "edit")
