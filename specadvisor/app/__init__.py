"""The application layer: every use case a front end offers, put together in one place, and the only
door the CLI and the TUI have into the core (an import-linter contract holds them to it).

Sweeps: `plan` (a plan for this host from advice), `sweeps` (`start_sweep`, `attach_endpoint`,
`resume`, `rebuild`) and `demo` take typed input (a `SweepRequest` carrying validated, frozen
`SweepSettings`) and return a prepared session (`Prepared`); `running.runner_for` turns any prepared
session into its runner (an event stream), recording its provenance, for every front end. Around
them: `advice`, `capacity`, `sessions`, `reports`, `machines`, `models`, `engines`, `rules`, `train`,
`docs`, and what views read (`views`, the live model `live`). The front ends parse and render only;
nothing here prints (notes go to the caller's `note`) or imports Textual. Heavy modules are imported
inside the functions, so a command's start-up pays only for what it uses.
"""
