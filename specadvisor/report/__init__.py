"""Outputs a teammate can use without specadvisor: Markdown/HTML reports, serve-params for
`vllm bench sweep serve`, the deployable snippet, and import of `vllm bench serve` results."""

from specadvisor.report.bench_import import import_bench_results
from specadvisor.report.html import html
from specadvisor.report.markdown import markdown
from specadvisor.report.serve_params import serve_params

__all__ = ["html", "import_bench_results", "markdown", "serve_params"]
