"""The Markdown report: readable in a terminal, a pull request or a wiki, without specadvisor."""

from __future__ import annotations

from specadvisor.domain import Session
from specadvisor.report.content import build


def markdown(session: Session) -> str:
    c = build(session)
    out = [f"# {c.title}", ""]
    out += [f"- **{k}**: {v}" for k, v in c.facts]
    out += ["", "## Recommendation", ""]
    out += [f"- {line}" for line in c.verdict]
    if c.spec_json:
        out += ["", "```", f"--speculative-config '{c.spec_json}'", "```"]
    if c.command:
        out += ["", "Serve it with:", "", "```sh", c.command, "```"]
    if c.schedule:
        out += ["", f"Batch-size schedule (`num_speculative_tokens_per_batch_size`, [start, end, k], k=0 = off): `{c.schedule}`"]
    out += ["", "## Results", "", "| " + " | ".join(c.columns) + " |", "|" + "---|" * len(c.columns)]
    out += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in c.rows]
    out += ["", f"Prediction: {c.prediction_note}."]
    if c.problems:
        out += ["", "## Warnings and failures", ""] + [f"- {p}" for p in c.problems]
    out += ["", "## Reproduce with vLLM's own tools", "", "serve-params (`vllm bench sweep serve --serve-params`):", "", "```json", c.serve_params_json, "```", "", "```sh", c.bench_command, "```"]
    out += ["", "## How to read this", ""] + [f"- {line}" for line in c.how_to_read]
    return "\n".join(out) + "\n"
