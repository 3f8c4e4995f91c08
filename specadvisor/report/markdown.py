"""The Markdown report: readable in a terminal, a pull request or a wiki, without specadvisor."""

from __future__ import annotations

from specadvisor.domain import Session
from specadvisor.report.content import CAPACITY_COLUMNS, build
from specadvisor.report.mddoc import Code, MarkdownDoc


def markdown(session: Session) -> str:
    """Every value drawn from the session (names, models, labels, notes, errors: possibly a
    teammate's bundle) goes through MarkdownDoc, which escapes it for its place: there is no way to
    append a raw string, so it can neither forge report lines nor carry raw HTML."""
    c = build(session)
    doc = MarkdownDoc()
    doc.heading(1, c.title)
    doc.blank()
    for key, value in c.facts:
        doc.fact(key, value)
    doc.blank()
    doc.heading(2, "Recommendation")
    doc.blank()
    for reason in c.verdict:
        doc.bullet(reason)
    if c.spec_json:
        doc.blank()
        doc.code_block(c.spec_json, single_line=True)  # already the whole flag, quoted by the shell renderer
    if c.command:
        doc.blank()
        doc.para("Serve it with:")
        doc.blank()
        doc.code_block(c.command, "sh")  # may span lines (` \\` continuations); each line made safe
        if c.model_note:
            doc.blank()
            doc.para(c.model_note[0].upper() + c.model_note[1:] + ".")
    if c.decide:
        doc.blank()
        doc.para("Undecided: nothing to serve yet (this is not an answer against speculation). What would decide it: ", c.decide.text, ".")
        doc.blank()
        if c.decide.command:
            doc.para("Measure it with (", c.decide.note, "):")
            doc.blank()
            doc.code_block(c.decide.command, "sh")
        else:
            doc.para(c.decide.note, ".")
    if c.schedule:
        doc.blank()
        doc.para("Batch-size schedule (", Code("num_speculative_tokens_per_batch_size"), ", [start, end, k], k=0 = off): ", Code(c.schedule))
    doc.blank()
    doc.heading(2, "Results")
    doc.blank()
    doc.table(c.columns, c.rows)
    if c.left_out:
        doc.blank()
        doc.para(c.left_out)
    doc.blank()
    doc.para("Prediction: ", c.prediction_note, ".")
    if c.tails:
        doc.blank()
        doc.heading(2, "Tail requests")
        doc.blank()
        for label, text in c.tails:
            doc.bullet(f"{label}: {text}")
    if c.capacity_rows:
        doc.blank()
        doc.heading(2, "Capacity under the latency target")
        doc.blank()
        doc.para(c.capacity_answer or "no configuration met the target")
        doc.blank()
        doc.table(CAPACITY_COLUMNS, c.capacity_rows)
    if c.problems:
        doc.blank()
        doc.heading(2, "Warnings and failures")
        doc.blank()
        for problem in c.problems:
            doc.bullet(problem)
    if c.gpu_rows:
        doc.blank()
        doc.heading(2, "GPU telemetry")
        doc.blank()
        doc.table(c.gpu_columns, c.gpu_rows)
        doc.blank()
        doc.para("Energy is the integral of board power over the arm; J per output token = mean power x measured duration / output tokens.")
    doc.blank()
    doc.heading(2, "Where and how it was measured")
    doc.blank()
    for key, value in c.provenance:
        doc.fact(key, value)
    if c.serve_argv:
        doc.blank()
        doc.para("Server command line of each arm:")
        for label, argv in c.serve_argv:
            doc.blank()
            doc.bullet(label, ":")
            doc.blank()
            doc.code_block(argv, "sh")
    doc.blank()
    doc.heading(2, "Reproduce with vLLM's own tools")
    doc.blank()
    doc.para("serve-params (", Code("vllm bench sweep serve --serve-params"), "):")
    doc.blank()
    doc.code_block(c.serve_params_json, "json")
    doc.blank()
    doc.code_block(c.bench_command, "sh")
    doc.blank()
    doc.heading(2, "How to read this")
    doc.blank()
    for explanation in c.how_to_read:
        doc.bullet(explanation)
    return doc.text()
