"""The HTML report: one self-contained page (inline CSS and SVG, no scripts, no external files)."""

from __future__ import annotations

from html import escape

from specadvisor import textsafe
from specadvisor.domain import Session
from specadvisor.report.charts import acceptance_chart, goodput_chart, latency_chart, pareto_chart, telemetry_chart, throughput_chart
from specadvisor.report.content import CAPACITY_COLUMNS, build

STYLE = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#111}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #d1d5db;padding:4px 8px;text-align:left}
th{background:#f3f4f6}pre{background:#f3f4f6;padding:10px;overflow-x:auto}.verdict{font-size:15px}
.charts{display:flex;flex-wrap:wrap;gap:12px}dt{font-weight:bold;float:left;width:8em}dd{margin-left:9em}
"""


def html(session: Session) -> str:
    c = build(session)
    e = textsafe.html  # one line, control characters visible, HTML-escaped

    def command(text: str) -> str:  # a command keeps its ` \` line breaks, each line escaped
        return "<pre>" + "\n".join(e(part) for part in text.split("\n")) + "</pre>"

    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', f"<title>{e(c.title)}</title>", f"<style>{STYLE}</style></head><body>"]
    out.append(f"<h1>{e(c.title)}</h1><dl>" + "".join(f"<dt>{e(k)}</dt><dd>{e(v)}</dd>" for k, v in c.facts) + "</dl>")
    out.append('<h2>Recommendation</h2><ul class="verdict">' + "".join(f"<li>{e(x)}</li>" for x in c.verdict) + "</ul>")
    if c.spec_json:
        out.append(command(c.spec_json))
    if c.command:
        out.append(f"<p>Serve it with:</p>{command(c.command)}")
        if c.model_note:
            out.append(f"<p>{e(c.model_note[0].upper() + c.model_note[1:])}.</p>")
    if c.decide:
        out.append(f"<p>Undecided: nothing to serve yet (this is not an answer against speculation). What would decide it: {e(c.decide.text)}.</p>")
        out.append(f"<p>Measure it with ({e(c.decide.note)}):</p>{command(c.decide.command)}" if c.decide.command else f"<p>{e(c.decide.note)}.</p>")
    if c.schedule:
        out.append(
            f"<p>Batch-size schedule (<code>num_speculative_tokens_per_batch_size</code>, [start, end, k], k=0 = off): <code>{e(str(c.schedule))}</code></p>"
        )
    out.append("<h2>Results</h2><table><tr>" + "".join(f"<th>{e(col)}</th>" for col in c.columns) + "</tr>")
    out += ["<tr>" + "".join(f"<td>{e(cell)}</td>" for cell in row) + "</tr>" for row in c.rows]
    out.append("</table>" + (f"<p>{e(c.left_out)}</p>" if c.left_out else "") + f"<p>Prediction: {e(c.prediction_note)}.</p>")
    if c.tails:
        out.append("<h2>Tail requests</h2><ul>" + "".join(f"<li>{e(label)}: {e(text)}</li>" for label, text in c.tails) + "</ul>")
    charts = [throughput_chart(c.throughput_series, c.baseline_tps)] + [acceptance_chart(label, rates) for label, rates in c.acceptance]
    out.append('<div class="charts">' + "".join(ch for ch in charts if ch) + "</div>")
    if c.capacity_series:
        metric, target = c.capacity_target
        out.append(f'<h2>Capacity under the latency target</h2><p class="verdict">{e(c.capacity_answer or "no configuration met the target")}</p>')
        out.append('<div class="charts">' + goodput_chart(target, metric, c.capacity_series) + "</div>")
        out.append("<table><tr>" + "".join(f"<th>{e(col)}</th>" for col in CAPACITY_COLUMNS) + "</tr>")
        out += ["<tr>" + "".join(f"<td>{e(cell)}</td>" for cell in row) + "</tr>" for row in c.capacity_rows]
        out.append("</table>")
    spread = [pareto_chart(c.pareto_series)] + [latency_chart(metric, rows) for metric, rows in c.latency.items()]
    if any(spread):
        out.append("<h2>Throughput per user and latency distributions</h2>")
        out.append('<div class="charts">' + "".join(ch for ch in spread if ch) + "</div>")
    if c.problems:
        out.append("<h2>Warnings and failures</h2><ul>" + "".join(f"<li>{e(p)}</li>" for p in c.problems) + "</ul>")
    if c.gpu_rows:
        out.append("<h2>GPU telemetry</h2><table><tr>" + "".join(f"<th>{e(col)}</th>" for col in c.gpu_columns) + "</tr>")
        out += ["<tr>" + "".join(f"<td>{e(cell)}</td>" for cell in row) + "</tr>" for row in c.gpu_rows]
        out.append("</table><p>Energy is the integral of board power over the arm; J per output token = mean power x measured duration / output tokens.</p>")
        out.append('<div class="charts">' + "".join(telemetry_chart(label, samples) for label, samples in c.gpu_series) + "</div>")
    out.append("<h2>Where and how it was measured</h2><table>" + "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in c.provenance) + "</table>")
    if c.serve_argv:
        out.append("<p>Server command line of each arm:</p><ul>" + "".join(f"<li>{e(label)}:{command(argv)}</li>" for label, argv in c.serve_argv) + "</ul>")
    out.append("<h2>Reproduce with vLLM's own tools</h2><p>serve-params (<code>vllm bench sweep serve --serve-params</code>):</p>")
    out.append(f"<pre>{escape(c.serve_params_json)}</pre>{command(c.bench_command)}")
    out.append("<h2>How to read this</h2><ul>" + "".join(f"<li>{e(x)}</li>" for x in c.how_to_read) + "</ul>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
