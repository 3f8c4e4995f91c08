"""Outputs a teammate can use without specadvisor: Markdown/HTML reports, serve-params for
`vllm bench sweep serve`, the deployable snippet, and import of `vllm bench serve` results."""
