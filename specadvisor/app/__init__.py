"""The application layer: each use case a front end offers, put together in one place.

`plan` (a plan for this host from advice), `start_sweep`, `attach_endpoint`, `resume`, `rebuild`
and `demo` take typed input and return a prepared session (`Prepared`); `running.runner_for` turns
any prepared session into its runner (an event stream), recording its provenance, for every front
end. The CLI and the TUI parse and render only; the demo is a caller like any other. Nothing here prints (notes go to the caller's `note`) or imports Textual.
"""
