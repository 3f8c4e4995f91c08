"""The Markdown report: readable in a terminal, a pull request or a wiki, without specadvisor."""

from __future__ import annotations

from specadvisor.domain import Session
from specadvisor.report.content import CAPACITY_COLUMNS, build
from specadvisor.textsafe import markdown as md
from specadvisor.textsafe import markdown_block


def markdown(session: Session) -> str:
    """Every value drawn from the session (names, models, labels, errors: possibly a teammate's
    bundle) is escaped, so it can neither forge report lines nor carry raw HTML."""
    c = build(session)
    out = [f"# {md(c.title)}", ""]
    out += [f"- **{k}**: {md(v, block_start=False)}" for k, v in c.facts]  # after "**k**: ", never a block start
    out += ["", "## Recommendation", ""]
    out += [f"- {md(line)}" for line in c.verdict]
    if c.spec_json:
        out += ["", *markdown_block(c.spec_json, single_line=True)]
    if c.command:  # commands may span lines (` \` continuations); each line is made safe by markdown_block
        out += ["", "Serve it with:", "", *markdown_block(c.command, "sh")]
    if c.schedule:
        out += ["", f"Batch-size schedule (`num_speculative_tokens_per_batch_size`, [start, end, k], k=0 = off): `{c.schedule}`"]
    out += ["", "## Results", "", "| " + " | ".join(c.columns) + " |", "|" + "---|" * len(c.columns)]
    out += ["| " + " | ".join(md(cell, block_start=False) for cell in row) + " |" for row in c.rows]
    out += ["", f"Prediction: {c.prediction_note}."]
    if c.capacity_rows:
        out += ["", "## Capacity under the latency target", "", md(c.capacity_answer or "no configuration met the target"), ""]
        out += ["| " + " | ".join(CAPACITY_COLUMNS) + " |", "|" + "---|" * len(CAPACITY_COLUMNS)]
        out += ["| " + " | ".join(md(cell, block_start=False) for cell in row) + " |" for row in c.capacity_rows]
    if c.problems:
        out += ["", "## Warnings and failures", ""] + [f"- {md(p)}" for p in c.problems]
    if c.gpu_rows:
        out += ["", "## GPU telemetry", "", "| " + " | ".join(c.gpu_columns) + " |", "|" + "---|" * len(c.gpu_columns)]
        out += ["| " + " | ".join(md(cell, block_start=False) for cell in row) + " |" for row in c.gpu_rows]
        out += ["", "Energy is the integral of board power over the arm; J per output token = mean power x measured duration / output tokens."]
    out += ["", "## Where and how it was measured", ""] + [f"- **{md(k)}**: {md(v, block_start=False)}" for k, v in c.provenance]
    if c.serve_argv:
        out += ["", "Server command line of each arm:"]
        for label, argv in c.serve_argv:
            out += ["", f"- {md(label)}:", "", *markdown_block(argv, "sh")]
    out += ["", "## Reproduce with vLLM's own tools", "", "serve-params (`vllm bench sweep serve --serve-params`):", ""]
    out += [*markdown_block(c.serve_params_json, "json"), "", *markdown_block(c.bench_command, "sh")]
    out += ["", "## How to read this", ""] + [f"- {line}" for line in c.how_to_read]
    return "\n".join(out) + "\n"
